// Hostile input: random bytes, truncated and bit-flipped queries, compression loops, junk over
// TCP. The server must answer FORMERR or stay silent, never crash or stall, and keep answering.
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsEngine } from '../../src/areas/dns/server/engine.js';
import { createDnsServer, type DnsServer } from '../../src/areas/dns/server/index.js';
import { Zone } from '../../src/areas/dns/server/zone-view.js';
import { eventually } from '../helpers/eventually.js';
import {
  dig,
  exampleZone,
  MemoryStatsSink,
  MemoryZoneSource,
  signingKey,
  testKernel,
} from './dns-fixtures.js';

let server: DnsServer;
let port: number;

/** A deterministic generator, so a failure can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function validQuery(name: string, type: string, id: number): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: type as 'A', name }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 4096, flags: dnsPacket.DNSSEC_OK } as never],
  });
}

function corpus(seed: number, count: number): Buffer[] {
  const rnd = prng(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const seeds = [
    validQuery('www.example.test', 'A', 1),
    validQuery('nope.signed.test', 'AAAA', 2),
    validQuery('x.wild.signed.test', 'TXT', 3),
    validQuery('many.example.test', 'A', 4),
  ];
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const base = seeds[int(seeds.length)]!;
    switch (i % 5) {
      case 0: // random bytes
        out.push(Buffer.from(Array.from({ length: int(600) }, () => int(256))));
        break;
      case 1: // truncated
        out.push(Buffer.from(base.subarray(0, int(base.length))));
        break;
      case 2: {
        // bit flips
        const b = Buffer.from(base);
        for (let f = 0; f < 1 + int(6); f++) b[int(b.length)]! ^= 1 << int(8);
        out.push(b);
        break;
      }
      case 3: {
        // counts that lie
        const b = Buffer.from(base);
        b.writeUInt16BE(int(65536), 4 + 2 * int(4));
        out.push(b);
        break;
      }
      default: {
        // a random header over a compression pointer loop or forward pointer
        const b = Buffer.alloc(12 + 6);
        b.writeUInt16BE(int(65536), 0);
        b.writeUInt16BE(int(65536) & 0x7fff, 2);
        b.writeUInt16BE(1, 4);
        b.writeUInt16BE(rnd() < 0.5 ? 0xc00c : 0xc00e, 12);
        out.push(b);
      }
    }
  }
  return out;
}

beforeAll(async () => {
  const source = new MemoryZoneSource();
  source.put(exampleZone());
  source.put(exampleZone('signed.test', signingKey('signed.test').key));
  [server] = createDnsServer(testKernel(), source, new MemoryStatsSink()) as [DnsServer];
  await server.start();
  port = server.port()!;
});

afterAll(async () => {
  await server?.stop();
});

describe('fuzzing', () => {
  it('the engine never throws and answers only FORMERR, an answer, or nothing', () => {
    const engine = new DnsEngine();
    const zones = new Map(
      [exampleZone(), exampleZone('signed.test', signingKey('signed.test').key)].map((s) => {
        const z = new Zone(s, Date.now);
        return [z.apexKey, z] as const;
      }),
    );
    engine.setZones(zones);
    for (const packet of corpus(42, 20_000)) {
      for (const transport of ['udp', 'tcp'] as const) {
        const h = engine.handle(packet, transport);
        if (!h.response) continue;
        expect(h.response.length).toBeGreaterThanOrEqual(12);
        expect(h.response[2]! & 0x80).toBe(0x80); // QR
        expect(h.response[3]! & 0xf).not.toBe(2); // no SERVFAIL: nothing inside failed
        if (transport === 'udp') expect(h.response.length).toBeLessThanOrEqual(1232);
        expect(() => dnsPacket.decode(h.response!)).not.toThrow();
      }
    }
  });

  it('the server keeps answering after thousands of hostile UDP packets', async () => {
    const socket = createSocket('udp4');
    let replies = 0;
    socket.on('message', () => replies++);
    const packets = corpus(7, 5000);
    for (let i = 0; i < packets.length; i++) {
      socket.send(packets[i]!, port, '127.0.0.1');
      if (i % 200 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, 300));
    // FORMERR and answers came back (polled: a loaded machine may answer after that pause).
    await eventually(async () => expect(replies).toBeGreaterThan(0), 10_000);
    socket.close();
    const out = await dig(port, 'www.example.test', 'A', '+short');
    expect(out.trim().split('\n')).toEqual(['web.example.test.', '192.0.2.80']);
  });

  it('survives junk, short frames and half-sent messages over TCP', async () => {
    const packets = corpus(99, 200);
    await Promise.all(
      packets.slice(0, 50).map(
        (p, i) =>
          new Promise<void>((resolve) => {
            const c = connect(port, '127.0.0.1', () => {
              const frame = Buffer.alloc(2 + p.length);
              frame.writeUInt16BE(i % 3 === 0 ? p.length + 100 : p.length, 0); // some lie about length
              p.copy(frame, 2);
              c.end(i % 2 === 0 ? frame : frame.subarray(0, 1 + (i % frame.length)));
            });
            c.on('data', () => {});
            c.on('error', () => resolve());
            c.on('close', () => resolve());
            setTimeout(() => {
              c.destroy();
              resolve();
            }, 1000);
          }),
      ),
    );
    const out = await dig(port, 'www.example.test', 'A', '+short', '+tcp');
    expect(out.trim().split('\n')).toEqual(['web.example.test.', '192.0.2.80']);
  });

  it('answers FORMERR to a question whose name is a compression loop', async () => {
    const engine = new DnsEngine();
    const loop = Buffer.from('abcd01000001000000000000c00c00010001', 'hex');
    const h = engine.handle(loop, 'udp');
    expect(h.response!.readUInt16BE(0)).toBe(0xabcd);
    expect(h.response![3]! & 0xf).toBe(1);
    expect(engine.handle(Buffer.from('abcd81000001', 'hex'), 'udp').response).toBeNull(); // too short
    const response = Buffer.from(loop);
    response[2]! |= 0x80; // a response: never answered
    expect(engine.handle(response, 'udp').response).toBeNull();
  });
});
