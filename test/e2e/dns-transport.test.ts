// Transport behaviour: several queries pipelined on one TCP connection (RFC 7766), and response
// rate limiting over UDP (slip: truncated answers; drop: nothing) while TCP stays unlimited.
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsServer, type DnsServer } from '../../src/areas/dns/server/index.js';
import { eventually } from '../helpers/eventually.js';
import { dig, exampleZone, MemoryStatsSink, MemoryZoneSource, testKernel } from './dns-fixtures.js';

let server: DnsServer;
let port: number;

const query = (id: number, name: string, type = 'A') =>
  dnsPacket.encode({ type: 'query', id, questions: [{ type: type as 'A', name }] });

beforeAll(async () => {
  const source = new MemoryZoneSource();
  source.put(exampleZone());
  [server] = createDnsServer(testKernel({ FJORD_DNS_RRL_RATE: '5' }), source, new MemoryStatsSink()) as [
    DnsServer,
  ];
  await server.start();
  port = server.port()!;
});

afterAll(async () => {
  await server?.stop();
});

describe('TCP', () => {
  it('answers several queries sent in one segment, in order', async () => {
    const names = ['web.example.test', 'mail.example.test', 'nope.example.test'];
    const frames = Buffer.concat(
      names.map((n, i) => {
        const q = query(100 + i, n);
        const len = Buffer.alloc(2);
        len.writeUInt16BE(q.length);
        return Buffer.concat([len, q]);
      }),
    );
    const replies = await new Promise<Buffer[]>((resolve, reject) => {
      const c = connect(port, '127.0.0.1', () => c.write(frames));
      let buf = Buffer.alloc(0);
      const out: Buffer[] = [];
      c.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          out.push(buf.subarray(2, 2 + buf.readUInt16BE(0)));
          buf = buf.subarray(2 + buf.readUInt16BE(0));
        }
        if (out.length === names.length) {
          c.end();
          resolve(out);
        }
      });
      c.on('error', reject);
    });
    expect(replies.map((r) => r.readUInt16BE(0))).toEqual([100, 101, 102]);
    expect(replies.map((r) => r[3]! & 0xf)).toEqual([0, 0, 3]);
    expect(dnsPacket.decode(replies[1]!).answers?.[0]).toMatchObject({ type: 'A', data: '192.0.2.25' });
  });

  it('caps idle connections per source: a new one closes the oldest, and its query is answered', async () => {
    const idle = await Promise.all(
      Array.from(
        { length: 25 },
        () =>
          new Promise<{ closed: Promise<void> }>((resolve, reject) => {
            const c = connect(port, '127.0.0.1', () =>
              resolve({ closed: new Promise((r) => c.once('close', () => r())) }),
            );
            c.on('error', () => {});
            c.once('error', reject);
          }),
      ),
    );
    // Five of the 25 were closed to keep the source at 20; wait for those closes to land.
    let closed = 0;
    for (const i of idle) void i.closed.then(() => closed++);
    for (let n = 0; n < 100 && closed < 5; n++) await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(5);
    const reply = await new Promise<Buffer>((resolve, reject) => {
      const q = query(200, 'web.example.test');
      const len = Buffer.alloc(2);
      len.writeUInt16BE(q.length);
      const c = connect(port, '127.0.0.1', () => c.write(Buffer.concat([len, q])));
      c.on('data', (d) => {
        c.end();
        resolve(d.subarray(2));
      });
      c.on('error', reject);
    });
    expect(reply.readUInt16BE(0)).toBe(200);
  });
});

describe('response rate limiting', () => {
  it('lets a burst through, then truncates or drops, and TCP still answers', async () => {
    const socket = createSocket('udp4');
    const replies: Buffer[] = [];
    socket.on('message', (m) => replies.push(m));
    await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
    for (let i = 0; i < 40; i++) socket.send(query(i, 'web.example.test'), port, '127.0.0.1');
    const full = () => replies.filter((r) => !(r[2]! & 0x02));
    const slipped = () => replies.filter((r) => r[2]! & 0x02);
    // What must come back, however long a loaded machine takes; then a while for anything more,
    // which the bounds below must not see either.
    await eventually(async () => {
      expect(full().length).toBeGreaterThanOrEqual(5);
      expect(slipped().length).toBeGreaterThan(5);
    }, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    socket.close();
    expect(full().length).toBeGreaterThanOrEqual(5);
    expect(full().length).toBeLessThan(10); // 5 per second, plus what refilled meanwhile
    expect(slipped().length).toBeGreaterThan(5); // every second limited response
    expect(replies.length).toBeLessThan(40); // the rest were dropped
    for (const r of slipped()) expect(r.readUInt16BE(6)).toBe(0); // no records in a slip
    // A real client falls back to TCP on TC and is answered
    expect((await dig(port, 'web.example.test', 'A', '+tcp', '+short')).trim()).toBe('192.0.2.80');
  });
});
