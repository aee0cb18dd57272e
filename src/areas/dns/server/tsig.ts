/**
 * TSIG (RFC 8945) on the server's side: verifying signed requests, signing the answers to them
 * (including every message of a zone transfer, §5.3.1), signing NOTIFY, and the error answers
 * §5.2 prescribes. The checks run in the RFC's order — key (BADKEY), MAC (BADSIG), time
 * (BADTIME) — and BADKEY/BADSIG answers carry an unsigned TSIG record (MAC size 0, §5.3.2),
 * while a BADTIME answer is signed, with the server's time in Other Data (§5.2.3).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TsigAlgorithmName } from '../server-contract.js';
import { RCODE, T, TSIG_ERROR } from './types.js';
import type { Query, TsigRecord } from './wire-reader.js';

const CLASS_ANY = 255;
/** The fudge we put in our own signatures, and the most we accept from a client (RFC 8945 §10: 300 s). */
export const TSIG_FUDGE = 300;

/** HMAC algorithms by their TSIG name (RFC 8945 §6), with the node:crypto digest. */
export const TSIG_ALGORITHMS: Record<TsigAlgorithmName, { digest: string; size: number }> = {
  'hmac-sha1': { digest: 'sha1', size: 20 },
  'hmac-sha224': { digest: 'sha224', size: 28 },
  'hmac-sha256': { digest: 'sha256', size: 32 },
  'hmac-sha384': { digest: 'sha384', size: 48 },
  'hmac-sha512': { digest: 'sha512', size: 64 },
};

/** A key the server holds. */
export interface TsigKey {
  /** Lowercase, no trailing dot. */
  name: string;
  algorithm: TsigAlgorithmName;
  secret: Buffer;
}

/** The outcome of checking a signed request. */
export type TsigVerdict<K extends TsigKey = TsigKey> =
  | { ok: true; key: K; requestMac: Buffer }
  | { ok: false; rcode: number; error: number; key: K | null; requestMac: Buffer | null };

/** Checks the TSIG of `q` (null when it is unsigned). `now` is in seconds since the epoch. */
export function verifyRequest<K extends TsigKey>(
  q: Query,
  msg: Buffer,
  keys: ReadonlyMap<string, K>,
  now: number,
): TsigVerdict<K> | null {
  const t = q.tsig;
  if (!t) return null;
  const key = keys.get(labelsKey(t.keyLabels));
  const algorithm = labelsKey(t.algorithmLabels);
  const fail = (error: number, k: K | null = null, mac: Buffer | null = null): TsigVerdict<K> => ({
    ok: false,
    rcode: RCODE.NOTAUTH,
    error,
    key: k,
    requestMac: mac,
  });
  if (!key || key.algorithm !== algorithm.replace(/\.$/, '')) return fail(TSIG_ERROR.BADKEY);
  const spec = TSIG_ALGORITHMS[key.algorithm];
  // §5.2.2.1: a MAC may be truncated, but never below half the digest nor below 10 bytes.
  if (t.mac.length > spec.size || t.mac.length < Math.max(10, spec.size / 2))
    return { ok: false, rcode: RCODE.FORMERR, error: 0, key: null, requestMac: null };
  const expected = mac(key, [unsignedPart(msg, t), variables(t, t.timeSigned, t.error, t.other)]);
  if (!timingSafeEqual(expected.subarray(0, t.mac.length), t.mac)) return fail(TSIG_ERROR.BADSIG);
  if (Math.abs(now - t.timeSigned) > Math.min(t.fudge, TSIG_FUDGE))
    return fail(TSIG_ERROR.BADTIME, key, t.mac);
  return { ok: true, key, requestMac: t.mac };
}

/**
 * Signs a message with `key`: returns it with a TSIG record appended. `previousMac` is the
 * request's MAC for a response, or the previous message's MAC for the later messages of a
 * transfer (then only the timers are digested, §5.3.1); none for a request such as NOTIFY.
 */
export function sign(
  message: Buffer,
  key: TsigKey,
  now: number,
  opts: {
    previousMac?: Buffer;
    timersOnly?: boolean;
    error?: number;
    other?: Buffer;
    timeSigned?: number;
  } = {},
): { message: Buffer; mac: Buffer } {
  const timeSigned = opts.timeSigned ?? now;
  const other = opts.other ?? Buffer.alloc(0);
  const algorithmLabels = key.algorithm.split('.');
  const keyLabels = key.name.split('.');
  const parts: Buffer[] = [];
  if (opts.previousMac) parts.push(u16(opts.previousMac.length), opts.previousMac);
  parts.push(message);
  const error = opts.error ?? 0;
  if (opts.timersOnly) parts.push(timers(timeSigned, TSIG_FUDGE));
  else parts.push(variables({ keyLabels, algorithmLabels, fudge: TSIG_FUDGE }, timeSigned, error, other));
  const digest = mac(key, parts);
  const record = tsigRecord(
    keyLabels,
    algorithmLabels,
    timeSigned,
    digest,
    message.readUInt16BE(0),
    error,
    other,
  );
  return { message: appendAdditional(message, record), mac: digest };
}

/** The unsigned TSIG record of an error answer to a signed message (BADKEY, BADSIG). */
export function unsignedTsigError(tsig: TsigRecord, error: number): Buffer {
  return tsigRecord(
    tsig.keyLabels,
    tsig.algorithmLabels,
    tsig.timeSigned,
    Buffer.alloc(0),
    tsig.originalId,
    error,
    Buffer.alloc(0),
    tsig.fudge,
  );
}

/** `response` with `record` added at the end of its additional section. */
export function appendAdditional(response: Buffer, record: Buffer): Buffer {
  const out = Buffer.concat([response, record]);
  out.writeUInt16BE(out.readUInt16BE(10) + 1, 10);
  return out;
}

/** The 6-byte Other Data of a BADTIME answer: the server's time (§5.2.3). */
export function serverTime(now: number): Buffer {
  const b = Buffer.alloc(6);
  b.writeUIntBE(now, 0, 6);
  return b;
}

/** The bytes of a TSIG record, for its size (answers must leave room for it). */
export function tsigRecordSize(key: TsigKey, otherLength = 0): number {
  return (
    wireSize(key.name) + wireSize(key.algorithm) + 10 + 16 + TSIG_ALGORITHMS[key.algorithm].size + otherLength
  );
}

/** The request as it was before the TSIG was added: original id, ARCOUNT less one, no TSIG record. */
function unsignedPart(msg: Buffer, t: TsigRecord): Buffer {
  const out = Buffer.from(msg.subarray(0, t.start));
  out.writeUInt16BE(t.originalId, 0);
  out.writeUInt16BE(out.readUInt16BE(10) - 1, 10);
  return out;
}

function variables(
  t: { keyLabels: readonly string[]; algorithmLabels: readonly string[]; fudge: number },
  timeSigned: number,
  error: number,
  other: Buffer,
): Buffer {
  // Names in canonical (lowercase, uncompressed) form; class ANY, TTL 0 (§4.3.3).
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(error, 0);
  tail.writeUInt16BE(other.length, 2);
  return Buffer.concat([
    encodeName(t.keyLabels.map((l) => l.toLowerCase())),
    u16(CLASS_ANY),
    Buffer.alloc(4),
    encodeName(t.algorithmLabels.map((l) => l.toLowerCase())),
    timers(timeSigned, t.fudge),
    tail,
    other,
  ]);
}

function timers(timeSigned: number, fudge: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUIntBE(timeSigned, 0, 6);
  b.writeUInt16BE(fudge, 6);
  return b;
}

function mac(key: TsigKey, parts: Buffer[]): Buffer {
  const h = createHmac(TSIG_ALGORITHMS[key.algorithm].digest, key.secret);
  for (const p of parts) h.update(p);
  return h.digest();
}

function tsigRecord(
  keyLabels: readonly string[],
  algorithmLabels: readonly string[],
  timeSigned: number,
  digest: Buffer,
  originalId: number,
  error: number,
  other: Buffer,
  fudge: number = TSIG_FUDGE,
): Buffer {
  const algorithm = encodeName(algorithmLabels);
  const rdata = Buffer.alloc(algorithm.length + 16 + digest.length + other.length);
  algorithm.copy(rdata, 0);
  let at = algorithm.length;
  rdata.writeUIntBE(timeSigned, at, 6);
  rdata.writeUInt16BE(fudge, at + 6);
  rdata.writeUInt16BE(digest.length, at + 8);
  digest.copy(rdata, at + 10);
  at += 10 + digest.length;
  rdata.writeUInt16BE(originalId, at);
  rdata.writeUInt16BE(error, at + 2);
  rdata.writeUInt16BE(other.length, at + 4);
  other.copy(rdata, at + 6);
  const head = Buffer.alloc(10);
  head.writeUInt16BE(T.TSIG, 0);
  head.writeUInt16BE(CLASS_ANY, 2);
  head.writeUInt32BE(0, 4);
  head.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([encodeName(keyLabels), head, rdata]);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n, 0);
  return b;
}

function labelsKey(labels: readonly string[]): string {
  return labels.join('.').toLowerCase();
}

function wireSize(name: string): number {
  return name === '' ? 1 : Buffer.byteLength(name, 'latin1') + 2;
}

function encodeName(labels: readonly string[]): Buffer {
  const parts: Buffer[] = [];
  for (const label of labels) {
    if (label === '') continue;
    const bytes = Buffer.from(label, 'latin1');
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}
