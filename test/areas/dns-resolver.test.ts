import { createSocket, type Socket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createResolver, ResolverError } from '../../src/kernel/net/resolver.js';

/** A resolver stand-in: NS and TXT from a table, SERVFAIL for `broken.example`, NXDOMAIN otherwise. */
let socket: Socket;
let address: string;

beforeAll(async () => {
  socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    const q = dnsPacket.decode(msg);
    const question = q.questions![0]!;
    const name = question.name.toLowerCase();
    let rcode = 3;
    const answers: dnsPacket.Answer[] = [];
    if (name === 'broken.example') rcode = 2;
    if (name === 'zone.example' && question.type === 'NS') {
      rcode = 0;
      answers.push({ type: 'NS', name, ttl: 60, data: 'NS1.Fjord.Example.' });
    }
    if (name === '_fjord.zone.example' && question.type === 'TXT') {
      rcode = 0;
      answers.push({ type: 'TXT', name, ttl: 60, data: ['fjord-domain-verification=abc', 'def'] });
    }
    if (name === 'zone.example' && question.type !== 'NS') rcode = 0; // NODATA
    socket.send(
      dnsPacket.encode({ id: q.id, type: 'response', flags: rcode, questions: q.questions, answers }),
      rinfo.port,
      rinfo.address,
    );
  });
  await new Promise<void>((res) => socket.bind(0, '127.0.0.1', () => res()));
  address = `127.0.0.1:${socket.address().port}`;
});
afterAll(() => socket.close());

describe('the kernel resolver', () => {
  it('answers names lowercase without the trailing dot, and TXT as strings', async () => {
    const r = createResolver(address);
    expect(await r.ns('zone.example')).toEqual(['ns1.fjord.example']);
    expect(await r.txt('_fjord.zone.example')).toEqual([['fjord-domain-verification=abc', 'def']]);
  });

  it('answers an empty list for NXDOMAIN and NODATA', async () => {
    const r = createResolver(address);
    expect(await r.ns('missing.example')).toEqual([]);
    expect(await r.a('zone.example')).toEqual([]);
  });

  it('throws ResolverError when it cannot get an answer', async () => {
    const r = createResolver(address, { timeoutMs: 200, tries: 1 });
    await expect(r.ns('broken.example')).rejects.toBeInstanceOf(ResolverError);
    const silent = createSocket('udp4');
    await new Promise<void>((res) => silent.bind(0, '127.0.0.1', () => res()));
    try {
      const dead = createResolver(`127.0.0.1:${silent.address().port}`, { timeoutMs: 200, tries: 1 });
      const err = await dead.ns('zone.example').catch((e) => e);
      expect(err).toBeInstanceOf(ResolverError);
      expect(err.code).toBe('ETIMEOUT');
    } finally {
      silent.close();
    }
  });

  it('reads FJORD_RESOLVER and FJORD_DNS_NAMESERVERS', () => {
    const base = { FJORD_DATA_DIR: '/tmp/x' };
    expect(loadConfig({ ...base, FJORD_RESOLVER: '192.0.2.53' }).resolver).toBe('192.0.2.53:53');
    expect(loadConfig({ ...base, FJORD_RESOLVER: '[2001:db8::53]:5353' }).resolver).toBe(
      '[2001:db8::53]:5353',
    );
    expect(loadConfig(base).resolver).toBeNull();
    expect(() => loadConfig({ ...base, FJORD_RESOLVER: 'dns.example:53' })).toThrow(/FJORD_RESOLVER/);
    expect(
      loadConfig({ ...base, FJORD_DNS_NAMESERVERS: 'NS1.Example.net., ns2.example.net' }).dns.nameservers,
    ).toEqual(['ns1.example.net', 'ns2.example.net']);
    expect(() => loadConfig({ ...base, FJORD_DNS_NAMESERVERS: 'localhost' })).toThrow(
      /FJORD_DNS_NAMESERVERS/,
    );
  });
});
