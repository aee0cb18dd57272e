/**
 * RDATA of every record type the server serves, built once per zone load in two forms: the wire
 * form as segments (so that names in NS, CNAME, PTR, MX and SOA can be compressed, RFC 3597 §4)
 * and the canonical form for signing (RFC 4034 §6.2: names uncompressed and lowercase).
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { RecordData, SoaFields, ZoneSigningKey } from '../server-contract.js';
import { canonicalName, checkLabels, splitName } from './names.js';
import { T } from './types.js';

export interface NameSegment {
  labels: string[];
  compress: boolean;
}
export type Segment = Buffer | NameSegment;

export interface Rr {
  segs: Segment[];
  canonical: Buffer;
}

function u16(n: number): Buffer {
  const b = Buffer.allocUnsafe(2);
  b.writeUInt16BE(n);
  return b;
}

function u32(...ns: number[]): Buffer {
  const b = Buffer.allocUnsafe(4 * ns.length);
  ns.forEach((n, i) => {
    b.writeUInt32BE(n >>> 0, i * 4);
  });
  return b;
}

/** Builds an Rr from segments, deriving the canonical form. */
export function makeRr(segs: Segment[]): Rr {
  const canonical = Buffer.concat(segs.map((s) => (Buffer.isBuffer(s) ? s : canonicalName(s.labels))));
  return { segs, canonical };
}

export function ipv4Bytes(address: string): Buffer {
  if (!isIPv4(address)) throw new Error(`not an IPv4 address: ${address}`);
  return Buffer.from(address.split('.').map(Number));
}

export function ipv6Bytes(address: string): Buffer {
  if (!isIPv6(address)) throw new Error(`not an IPv6 address: ${address}`);
  let text = address.split('%')[0]!;
  const out = Buffer.alloc(16);
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const v4 = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (v4) {
    const b = ipv4Bytes(v4[1]!);
    text = `${text.slice(0, -v4[1]!.length)}${b.readUInt16BE(0).toString(16)}:${b.readUInt16BE(2).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  headGroups.forEach((g, i) => {
    out.writeUInt16BE(Number.parseInt(g, 16), i * 2);
  });
  tailGroups.forEach((g, i) => {
    out.writeUInt16BE(Number.parseInt(g, 16), 16 - (tailGroups.length - i) * 2);
  });
  return out;
}

function name(n: string, compress: boolean): NameSegment {
  const labels = splitName(n.toLowerCase());
  if (!checkLabels(labels)) throw new Error(`not a valid domain name: ${n}`);
  return { labels, compress };
}

function characterString(s: string): Buffer {
  const bytes = Buffer.from(s, 'utf8');
  if (bytes.length > 255) throw new Error('character-string longer than 255 bytes');
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

/** The type number and RDATA of a control-plane record. */
export function recordRr(data: RecordData): { type: number; rr: Rr } {
  switch (data.type) {
    case 'A':
      return { type: T.A, rr: makeRr([ipv4Bytes(data.address)]) };
    case 'AAAA':
      return { type: T.AAAA, rr: makeRr([ipv6Bytes(data.address)]) };
    case 'CNAME':
      return { type: T.CNAME, rr: makeRr([name(data.target, true)]) };
    case 'NS':
      return { type: T.NS, rr: makeRr([name(data.target, true)]) };
    case 'PTR':
      return { type: T.PTR, rr: makeRr([name(data.target, true)]) };
    case 'MX':
      return { type: T.MX, rr: makeRr([u16(data.preference), name(data.exchange, true)]) };
    case 'TXT': {
      const strings = data.strings.length === 0 ? [''] : data.strings;
      return { type: T.TXT, rr: makeRr([Buffer.concat(strings.map(characterString))]) };
    }
    case 'SRV':
      // RFC 2782: the target is never compressed.
      return {
        type: T.SRV,
        rr: makeRr([
          Buffer.concat([u16(data.priority), u16(data.weight), u16(data.port)]),
          name(data.target, false),
        ]),
      };
    case 'CAA': {
      const tag = Buffer.from(data.tag, 'ascii');
      return {
        type: T.CAA,
        rr: makeRr([
          Buffer.concat([Buffer.from([data.flags, tag.length]), tag, Buffer.from(data.value, 'utf8')]),
        ]),
      };
    }
  }
}

export function soaRr(soa: SoaFields): Rr {
  return makeRr([
    name(soa.mname, true),
    name(soa.rname, true),
    u32(soa.serial, soa.refresh, soa.retry, soa.expire, soa.minimum),
  ]);
}

export function dnskeyRr(key: ZoneSigningKey): Rr {
  return makeRr([Buffer.concat([u16(key.flags), Buffer.from([3, key.algorithm]), key.publicKey])]);
}

/** RFC 4034 §4.1.2 type bit maps. */
export function typeBitmap(types: Iterable<number>): Buffer {
  const windows = new Map<number, number[]>();
  for (const t of new Set(types)) {
    const w = t >> 8;
    const bits = windows.get(w) ?? [];
    bits.push(t & 0xff);
    windows.set(w, bits);
  }
  const parts: Buffer[] = [];
  for (const w of [...windows.keys()].sort((a, b) => a - b)) {
    const bits = windows.get(w)!;
    const len = (Math.max(...bits) >> 3) + 1;
    const block = Buffer.alloc(2 + len);
    block[0] = w;
    block[1] = len;
    for (const b of bits) block[2 + (b >> 3)]! |= 0x80 >> (b & 7);
    parts.push(block);
  }
  return Buffer.concat(parts);
}

/** NSEC RDATA: the next name is never compressed (RFC 4034 §4.1.1). */
export function nsecRr(nextLabels: string[], types: Iterable<number>): Rr {
  return makeRr([{ labels: nextLabels, compress: false }, typeBitmap(types)]);
}

/** RFC 4034 Appendix B key tag of a DNSKEY RDATA. */
export function keyTag(dnskeyRdata: Buffer): number {
  let ac = 0;
  for (let i = 0; i < dnskeyRdata.length; i++) ac += i & 1 ? dnskeyRdata[i]! : dnskeyRdata[i]! << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}
