// Answers leave from the address that was asked: one UDP socket per local address when the
// configured host is a wildcard, with the set refreshed when addresses come and go. Two loopback
// addresses (127.0.0.1 and 127.0.0.2, both on lo on Linux) stand for a host with several.
import { createSocket } from 'node:dgram';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { exampleZone, MemoryStatsSink } from '../../../../test/e2e/dns-fixtures.js';
import { DnsEngine } from './engine.js';
import { ResponseRateLimiter } from './rrl.js';
import { QueryStatsBatcher } from './stats.js';
import { UdpListenerSet } from './udp-per-address.js';
import { Zone } from './zone-view.js';

const log = pino({ level: 'silent' });
const engine = new DnsEngine();
engine.setZones(new Map([['example.test', new Zone(exampleZone(), Date.now)]]));
const deps = {
  engine,
  rrl: new ResponseRateLimiter(0, 2, Date.now),
  stats: new QueryStatsBatcher(new MemoryStatsSink(), Date.now, log),
  axfrAllow: new (await import('node:net')).BlockList(),
  log,
};
// example.test SOA, id 0x1234.
const query = Buffer.from(
  '123400000001000000000000076578616d706c650474657374000006 0001'.replace(/ /g, ''),
  'hex',
);

/** Sends the query to `address` and resolves with where the answer came from. */
async function askFrom(address: string, port: number, waitMs = 2000): Promise<string> {
  const client = createSocket('udp4');
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer from ${address}`)), waitMs);
      client.once('message', (msg, rinfo) => {
        clearTimeout(timer);
        expect(msg.readUInt16BE(0)).toBe(0x1234);
        resolve(rinfo.address);
      });
      client.send(query, port, address);
    });
  } finally {
    client.close();
  }
}

let set: UdpListenerSet | null = null;
afterEach(() => set?.close());

describe('UDP sockets per local address', () => {
  it('answers from each address asked, and follows addresses as they come and go', async () => {
    let addresses = ['127.0.0.1'];
    const probe = createSocket('udp4');
    await new Promise<void>((resolve) => probe.bind(0, '127.0.0.1', resolve));
    const port = probe.address().port;
    probe.close();
    set = new UdpListenerSet(deps, '0.0.0.0', port, () => addresses);
    await set.start();
    expect(await askFrom('127.0.0.1', port)).toBe('127.0.0.1');
    addresses = ['127.0.0.1', '127.0.0.2'];
    await set.refresh();
    expect(set.bound().sort()).toEqual(['127.0.0.1', '127.0.0.2']);
    expect(await askFrom('127.0.0.2', port)).toBe('127.0.0.2');
    expect(await askFrom('127.0.0.1', port)).toBe('127.0.0.1');
    addresses = ['127.0.0.2'];
    await set.refresh();
    expect(set.bound()).toEqual(['127.0.0.2']);
    await expect(askFrom('127.0.0.1', port, 300)).rejects.toThrow(/no answer/);
  });

  it('binds the one configured address when it is not a wildcard', async () => {
    set = new UdpListenerSet(deps, '127.0.0.1', 0, () => ['127.0.0.2']);
    await set.start();
    expect(set.bound()).toEqual(['127.0.0.1']);
  });
});
