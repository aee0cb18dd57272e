import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { exampleZone } from '../../../../test/e2e/dns-fixtures.js';
import { DnsEngine } from './engine.js';
import { checkLabels, nameKey } from './names.js';
import { ipv6Bytes, keyTag, typeBitmap } from './rdata.js';
import { netblock, ResponseRateLimiter } from './rrl.js';
import { parseQuery, readName } from './wire-reader.js';
import { MessageWriter } from './wire-writer.js';
import { Zone } from './zone-view.js';

describe('names', () => {
  it('folds only ASCII letters, and escapes dots inside labels', () => {
    expect(nameKey(['WwW', 'ÉXAMPLE'])).toBe('www.Éxample');
    expect(nameKey(['a.b', 'c'])).toBe('a\\.b.c');
  });
  it('rejects labels over 63 bytes and names over 255', () => {
    expect(checkLabels(['a'.repeat(63), 'test'])).toBe(true);
    expect(checkLabels(['a'.repeat(64), 'test'])).toBe(false);
    expect(checkLabels(Array(130).fill('ab'))).toBe(false);
  });
});

describe('rdata', () => {
  it('encodes IPv6 addresses, type bitmaps and key tags', () => {
    expect(ipv6Bytes('2001:db8::1').toString('hex')).toBe('20010db8000000000000000000000001');
    expect(ipv6Bytes('::ffff:192.0.2.1').toString('hex')).toBe('00000000000000000000ffffc0000201');
    expect(ipv6Bytes('::').toString('hex')).toBe('0'.repeat(32));
    // RFC 4034 §4.3: A MX RRSIG NSEC TYPE1234
    expect(typeBitmap([1, 15, 46, 47, 1234]).toString('hex')).toBe(
      '0006400100000003041b000000000000000000000000000000000000000000000000000020',
    );
    // The DNSKEY of RFC 6605 §6.1 (example.net., algorithm 13) has key tag 55648.
    const rdata = Buffer.concat([
      Buffer.from([1, 1, 3, 13]),
      Buffer.from(
        'GojIhhXUN/u4v54ZQqGSnyhWJwaubCvTmeexv7bR6edbkrSqQpF64cYbcB7wNcP+e+MAnLr+Wi9xMWyQLc8NAA==',
        'base64',
      ),
    ]);
    expect(keyTag(rdata)).toBe(55648);
  });
});

describe('wire', () => {
  it('compresses repeated names and keeps them decodable', () => {
    const w = new MessageWriter(Buffer.alloc(512));
    w.name(['www', 'Example', 'test'], true);
    const first = w.pos;
    w.name(['mail', 'example', 'TEST'], true);
    expect(w.pos - first).toBe(1 + 4 + 2); // "mail" then a pointer
    const read = readName(w.buf.subarray(0, w.pos), first);
    expect(read.labels).toEqual(['mail', 'Example', 'test']); // the pointer carries the first case
  });
  it('parses EDNS and rejects a second OPT', () => {
    const q = dnsPacket.encode({
      type: 'query',
      id: 7,
      questions: [{ type: 'A', name: 'a.example' }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1400, flags: dnsPacket.DNSSEC_OK } as never],
    });
    expect(parseQuery(q)?.edns).toEqual({ payload: 1400, version: 0, do: true, co: false });
    const twice = Buffer.concat([q, q.subarray(q.length - 11)]);
    twice.writeUInt16BE(2, 10);
    expect(() => parseQuery(twice)).toThrow(/OPT/);
  });
  it('answers NOTIMP to an unknown opcode even with no question, FORMERR to a query without one', () => {
    const engine = new DnsEngine();
    const header = (opcode: number, qdcount: number) => {
      const b = Buffer.alloc(12);
      b.writeUInt16BE(0x1234, 0);
      b.writeUInt16BE(opcode << 11, 2);
      b.writeUInt16BE(qdcount, 4);
      return b;
    };
    for (const opcode of [1, 2, 3, 5, 6, 15]) {
      const r = engine.handle(header(opcode, 0), 'udp').response!;
      expect(r.readUInt16BE(0)).toBe(0x1234);
      expect(r.readUInt16BE(2) & 0xf).toBe(4); // NOTIMP
      expect((r.readUInt16BE(2) >> 11) & 0xf).toBe(opcode);
    }
    const query = engine.handle(header(0, 0), 'udp').response!;
    expect(query.readUInt16BE(2) & 0xf).toBe(1); // FORMERR
  });
  it('answers SERVFAIL to an unexpected exception and reports it with the question', () => {
    const seen: string[] = [];
    const engine = new DnsEngine(Date.now, (err, q) => seen.push(`${String(err)} ${q.labels.join('.')}`));
    const zone = new Zone(exampleZone(), Date.now);
    // A zone whose every part but its name throws: as a bug deep in an answer would.
    const broken = new Proxy(zone, {
      get(target, p, receiver) {
        if (p === 'apexKey') return Reflect.get(target, p, receiver);
        throw new Error('boom');
      },
    });
    engine.setZones(new Map([[zone.apexKey, broken]]));
    const r = dnsPacket.decode(
      engine.handle(
        dnsPacket.encode({ type: 'query', id: 7, questions: [{ type: 'A', name: 'web.example.test' }] }),
        'udp',
      ).response!,
    );
    expect((r as { rcode?: string }).rcode).toBe('SERVFAIL');
    expect(seen).toEqual(['Error: boom web.example.test']);
  });

  it('answers through the response cache with the id and case of each query', () => {
    const engine = new DnsEngine();
    const zone = new Zone(exampleZone(), Date.now);
    engine.setZones(new Map([[zone.apexKey, zone]]));
    const ask = (id: number, name: string) =>
      dnsPacket.decode(
        engine.handle(dnsPacket.encode({ type: 'query', id, questions: [{ type: 'A', name }] }), 'udp')
          .response!,
      );
    const a = ask(1, 'WEB.example.test');
    const b = ask(2, 'web.EXAMPLE.test');
    expect([a.id, b.id]).toEqual([1, 2]);
    expect(a.answers?.[0]?.name).toBe('WEB.example.test');
    expect(b.answers?.[0]?.name).toBe('web.EXAMPLE.test');
  });
});

describe('response rate limiting', () => {
  it('lets a burst through, then slips every second response and drops the rest', () => {
    let t = 0;
    const rrl = new ResponseRateLimiter(5, 2, () => t);
    const decisions = Array.from({ length: 9 }, () => rrl.check('192.0.2.9', 'x'));
    expect(decisions).toEqual(['send', 'send', 'send', 'send', 'send', 'drop', 'slip', 'drop', 'slip']);
    expect(rrl.check('192.0.2.200', 'x')).toBe('drop'); // same /24
    expect(rrl.check('192.0.3.1', 'x')).toBe('send');
    expect(rrl.check('192.0.2.9', 'y')).toBe('send'); // another response class
    t += 1000;
    expect(rrl.check('192.0.2.9', 'x')).toBe('send');
    expect(new ResponseRateLimiter(0).check('192.0.2.9', 'x')).toBe('send');
  });
  it('groups IPv6 clients by /56', () => {
    expect(netblock('2001:db8:1:2ff::1')).toBe(netblock('2001:db8:1:200::9'));
    expect(netblock('2001:db8:1:300::1')).not.toBe(netblock('2001:db8:1:200::1'));
    expect(netblock('::ffff:192.0.2.1')).toBe('192.0.2');
  });
});
