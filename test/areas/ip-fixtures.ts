import { createSocket, type Socket } from 'node:dgram';
import dnsPacket from 'dns-packet';

/**
 * A recursive resolver stand-in for the IP tests (FJORD_RESOLVER points at it): answers the
 * records a test sets, NXDOMAIN for anything else, at once — the tests never leave loopback.
 */
export class FakeResolver {
  readonly records = new Map<string, { type: 'A' | 'AAAA' | 'TXT' | 'PTR'; data: string }[]>();
  private socket: Socket | null = null;

  set(name: string, type: 'A' | 'AAAA' | 'TXT' | 'PTR', data: string) {
    const list = this.records.get(name.toLowerCase()) ?? [];
    list.push({ type, data });
    this.records.set(name.toLowerCase(), list);
  }

  async start(): Promise<string> {
    const socket = createSocket('udp4');
    this.socket = socket;
    socket.on('message', (msg, rinfo) => {
      const q = dnsPacket.decode(msg);
      const question = q.questions?.[0];
      if (!question) return;
      const found = (this.records.get(question.name.toLowerCase()) ?? []).filter(
        (r) => r.type === question.type,
      );
      const answers = found.map((r) => ({
        name: question.name,
        type: r.type,
        ttl: 60,
        data: r.type === 'TXT' ? [r.data] : r.data,
      }));
      const reply = dnsPacket.encode({
        type: 'response',
        id: q.id,
        flags:
          dnsPacket.RECURSION_DESIRED |
          dnsPacket.RECURSION_AVAILABLE |
          (answers.length || this.records.has(question.name.toLowerCase()) ? 0 : 3),
        questions: q.questions,
        answers: answers as never,
      });
      socket.send(reply, rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return `127.0.0.1:${socket.address().port}`;
  }

  stop() {
    this.socket?.close();
  }
}
