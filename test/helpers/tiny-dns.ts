import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';

/**
 * A minimal authoritative responder for tests of code that *looks things up* (domain
 * verification): answers TXT and CNAME from a map, NXDOMAIN otherwise, and SERVFAIL for names
 * in `failing`. Not Fjord's DNS server — that one has its own tests.
 */
export class TinyDns {
  readonly txt = new Map<string, string[]>();
  readonly cname = new Map<string, string>();
  readonly failing = new Set<string>();
  private constructor(
    private readonly socket: Socket,
    readonly port: number,
  ) {}

  static async start(): Promise<TinyDns> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const server = new TinyDns(socket, (socket.address() as AddressInfo).port);
    socket.on('message', (msg, rinfo) => {
      try {
        socket.send(server.answer(msg), rinfo.port, rinfo.address);
      } catch {
        // a test responder: drop what it cannot parse
      }
    });
    return server;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  private answer(msg: Buffer): Buffer {
    const query = dnsPacket.decode(msg);
    const q = query.questions?.[0];
    const name = (q?.name ?? '').toLowerCase();
    const base = {
      id: query.id,
      type: 'response' as const,
      flags: dnsPacket.AUTHORITATIVE_ANSWER,
      questions: query.questions,
    };
    // dns-packet reads the RCODE from the low bits of `flags`: SERVFAIL is 2, NXDOMAIN 3.
    if (this.failing.has(name)) return dnsPacket.encode({ ...base, flags: base.flags | 2 });
    const answers: dnsPacket.Answer[] = [];
    if (q?.type === 'TXT') {
      for (const value of this.txt.get(name) ?? [])
        answers.push({ type: 'TXT', name: q.name, ttl: 60, data: value });
    }
    const target = this.cname.get(name);
    if (target && (q?.type === 'CNAME' || answers.length === 0)) {
      answers.push({ type: 'CNAME', name: q!.name, ttl: 60, data: target });
    }
    const known = this.txt.has(name) || this.cname.has(name);
    return dnsPacket.encode({ ...base, answers, flags: base.flags | (known ? 0 : 3) });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}
