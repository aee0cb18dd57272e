/**
 * TSIG (RFC 8945) on the server's side. Fjord holds no TSIG keys yet, so every signed message
 * names a key unknown here and gets what RFC 8945 §5.2.1 prescribes and NSD and Knot send:
 * RCODE NOTAUTH with a TSIG record whose error is BADKEY, unsigned (MAC size 0) as §5.3.2 says.
 * A plain answer to a signed query would let the client take it as authenticated by nobody.
 */
import { RCODE, T, TSIG_ERROR } from './types.js';
import type { Query, TsigRecord } from './wire-reader.js';

const CLASS_ANY = 255;

/** The unsigned TSIG record of an error answer to a signed message. */
export function unsignedTsigError(tsig: TsigRecord, error: number): Buffer {
  const algorithm = encodeName(tsig.algorithmLabels);
  const rdata = Buffer.alloc(algorithm.length + 16);
  algorithm.copy(rdata, 0);
  let at = algorithm.length;
  rdata.writeUIntBE(tsig.timeSigned, at, 6);
  rdata.writeUInt16BE(tsig.fudge, at + 6);
  rdata.writeUInt16BE(0, at + 8); // MAC size: no MAC
  rdata.writeUInt16BE(tsig.originalId, at + 10);
  rdata.writeUInt16BE(error, at + 12);
  rdata.writeUInt16BE(0, at + 14); // other data: none
  at += 16;
  const owner = encodeName(tsig.keyLabels);
  const head = Buffer.alloc(10);
  head.writeUInt16BE(T.TSIG, 0);
  head.writeUInt16BE(CLASS_ANY, 2);
  head.writeUInt32BE(0, 4);
  head.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([owner, head, rdata]);
}

/** `response` with `record` added at the end of its additional section. */
export function appendAdditional(response: Buffer, record: Buffer): Buffer {
  const out = Buffer.concat([response, record]);
  out.writeUInt16BE(out.readUInt16BE(10) + 1, 10);
  return out;
}

/** The verdict on a signed query: with no keys held, the key is always unknown. */
export function tsigVerdict(q: Query): { rcode: number; error: number } | null {
  if (!q.tsig) return null;
  return { rcode: RCODE.NOTAUTH, error: TSIG_ERROR.BADKEY };
}

function encodeName(labels: readonly string[]): Buffer {
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(label, 'latin1');
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}
