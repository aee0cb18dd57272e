/**
 * Parses an incoming query: header, the one question, and the OPT record (EDNS(0), RFC 6891).
 * Hand-written rather than dns-packet's decoder: it must never throw on hostile input except
 * with a `MalformedQuery` we can turn into FORMERR, and it must keep the question's original
 * bytes (so the answer repeats the query's letter case) and its length.
 */
import { nameKey } from './names.js';
import { OPCODE, RCODE, T } from './types.js';

export interface Edns {
  /** Requestor's UDP payload size, at least 512. */
  payload: number;
  version: number;
  /** DNSSEC OK (RFC 3225). */
  do: boolean;
  /** Compact Answers OK (RFC 9824 §4): the client takes NXDOMAIN with compact denial. */
  co: boolean;
}

export interface Query {
  id: number;
  opcode: number;
  rd: boolean;
  cd: boolean;
  /** Labels as sent (original case). */
  labels: string[];
  /** Lowercase lookup key of the name. */
  key: string;
  qtype: number;
  qclass: number;
  /** End offset of the question section in the packet. */
  questionEnd: number;
  edns: Edns | null;
  /** The TSIG record that signs the message (RFC 8945), the last of the additional section. */
  tsig: TsigRecord | null;
}

export interface TsigRecord {
  /** The key's name, as sent. */
  keyLabels: string[];
  algorithmLabels: string[];
  /** Seconds since the epoch (48 bits). */
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  /** Other Data (a BADTIME answer's server time). */
  other: Buffer;
  /** Where the TSIG record starts: what precedes it is what the MAC covers. */
  start: number;
}

export class MalformedQuery extends Error {
  constructor(
    readonly id: number | null,
    message: string,
    /** FORMERR, or NOTIMP for an opcode this server does not implement (RFC 1035 §4.1.1). */
    readonly rcode: number = RCODE.FORMERR,
  ) {
    super(message);
  }
}

/** Reads a (possibly compressed) name at `offset`; returns labels and the offset after it. */
export function readName(buf: Buffer, offset: number): { labels: string[]; end: number } {
  const labels: string[] = [];
  let pos = offset;
  let end = -1;
  let jumps = 0;
  let length = 1;
  for (;;) {
    if (pos >= buf.length) throw new Error('name runs past the packet');
    const len = buf[pos]!;
    if (len === 0) {
      if (end < 0) end = pos + 1;
      break;
    }
    if ((len & 0xc0) === 0xc0) {
      if (pos + 1 >= buf.length) throw new Error('truncated pointer');
      const target = ((len & 0x3f) << 8) | buf[pos + 1]!;
      // Pointers must go backwards; bounding the jumps also stops loops.
      if (target >= pos || ++jumps > 64) throw new Error('bad compression pointer');
      if (end < 0) end = pos + 2;
      pos = target;
      continue;
    }
    if ((len & 0xc0) !== 0) throw new Error('unknown label type');
    if (pos + 1 + len > buf.length) throw new Error('label runs past the packet');
    length += len + 1;
    if (length > 255) throw new Error('name longer than 255 bytes');
    labels.push(buf.toString('latin1', pos + 1, pos + 1 + len));
    pos += 1 + len;
  }
  return { labels, end };
}

/** Returns null for packets to drop silently (too short to answer, or responses). */
export function parseQuery(buf: Buffer): Query | null {
  if (buf.length < 12) return null;
  const id = buf.readUInt16BE(0);
  const flags = buf.readUInt16BE(2);
  if (flags & 0x8000) return null; // a response: never answer one (reflection loops)
  const opcode = (flags >> 11) & 0xf;
  const qdcount = buf.readUInt16BE(4);
  const ancount = buf.readUInt16BE(6);
  const nscount = buf.readUInt16BE(8);
  const arcount = buf.readUInt16BE(10);
  // A message of an opcode we do not implement is NOTIMP whatever its sections hold (DSO's has no
  // question at all), as NSD and Knot answer; only a query's malformation is FORMERR.
  const fail = opcode === OPCODE.QUERY ? RCODE.FORMERR : RCODE.NOTIMP;
  if (qdcount !== 1) throw new MalformedQuery(id, `expected one question, got ${qdcount}`, fail);
  let name: { labels: string[]; end: number };
  try {
    name = readName(buf, 12);
  } catch (err) {
    throw new MalformedQuery(id, (err as Error).message, fail);
  }
  if (name.end + 4 > buf.length) throw new MalformedQuery(id, 'truncated question', fail);
  const qtype = buf.readUInt16BE(name.end);
  const qclass = buf.readUInt16BE(name.end + 2);
  const questionEnd = name.end + 4;
  let edns: Edns | null = null;
  let tsig: TsigRecord | null = null;
  // Skip answer and authority (a NOTIFY may carry a SOA), then look for OPT among additional.
  let pos = questionEnd;
  try {
    for (let i = 0; i < ancount + nscount + arcount; i++) {
      const start = pos;
      const rrName = readName(buf, pos);
      pos = rrName.end;
      if (pos + 10 > buf.length) throw new Error('truncated record');
      const type = buf.readUInt16BE(pos);
      const rdlength = buf.readUInt16BE(pos + 8);
      if (pos + 10 + rdlength > buf.length) throw new Error('record data runs past the packet');
      if (type === T.OPT && i >= ancount + nscount) {
        if (edns || rrName.labels.length !== 0) throw new Error('bad or repeated OPT record');
        const ttl = buf.readUInt32BE(pos + 4);
        edns = {
          payload: Math.max(512, buf.readUInt16BE(pos + 2)),
          version: (ttl >>> 16) & 0xff,
          do: (ttl & 0x8000) !== 0,
          co: (ttl & 0x4000) !== 0,
        };
      }
      if (type === T.TSIG) {
        // Only as the very last record (RFC 8945 §5.1); anywhere else the message is malformed.
        if (i !== ancount + nscount + arcount - 1) throw new Error('TSIG is not the last record');
        tsig = readTsig(buf, rrName.labels, pos + 10, rdlength, start);
      }
      pos += 10 + rdlength;
    }
  } catch (err) {
    throw new MalformedQuery(id, (err as Error).message, fail);
  }
  return {
    id,
    opcode,
    rd: (flags & 0x0100) !== 0,
    cd: (flags & 0x0010) !== 0,
    labels: name.labels,
    key: nameKey(name.labels),
    qtype,
    qclass,
    questionEnd,
    edns,
    tsig,
  };
}

function readTsig(buf: Buffer, keyLabels: string[], at: number, length: number, start: number): TsigRecord {
  const end = at + length;
  const algorithm = readName(buf, at);
  let pos = algorithm.end;
  if (pos + 10 > end) throw new Error('truncated TSIG');
  const timeSigned = buf.readUIntBE(pos, 6);
  const fudge = buf.readUInt16BE(pos + 6);
  const macSize = buf.readUInt16BE(pos + 8);
  pos += 10;
  if (pos + macSize + 6 > end) throw new Error('truncated TSIG');
  const mac = Buffer.from(buf.subarray(pos, pos + macSize));
  pos += macSize;
  const originalId = buf.readUInt16BE(pos);
  const error = buf.readUInt16BE(pos + 2);
  const otherLength = buf.readUInt16BE(pos + 4);
  if (pos + 6 + otherLength !== end) throw new Error('TSIG length mismatch');
  const other = Buffer.from(buf.subarray(pos + 6, end));
  return {
    keyLabels,
    algorithmLabels: algorithm.labels,
    timeSigned,
    fudge,
    mac,
    originalId,
    error,
    other,
    start,
  };
}
