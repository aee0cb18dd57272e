import { createHash, type Hash } from 'node:crypto';
import { s3Errors } from './errors.js';
import { EMPTY_SHA256, hmacHex, safeEqual, sha256Hex } from './sigv4.js';

/**
 * Decoder of `Content-Encoding: aws-chunked` bodies. The framing (`<hex size>[;chunk-signature=…]`
 * lines, CRLFs, the trailer section) is stripped here, so it can never end up inside an object.
 * In the signed modes every chunk's signature is checked against the previous one, starting
 * from the request's own signature; the trailer section is handed to `onTrailer`.
 */
export interface ChunkSigning {
  key: Buffer;
  amzDate: string;
  scope: string;
  seedSignature: string;
}

export interface ChunkedOptions {
  /** Present for STREAMING-AWS4-HMAC-SHA256-PAYLOAD(-TRAILER): every chunk must carry a valid signature. */
  signing: ChunkSigning | null;
  /** Called once per trailer header (lower-cased name). */
  onTrailer: (name: string, value: string) => void;
}

const MAX_LINE = 4096;
const CRLF = Buffer.from('\r\n');

export async function* decodeAwsChunked(
  source: AsyncIterable<Buffer>,
  opts: ChunkedOptions,
): AsyncGenerator<Buffer> {
  let pending: Buffer = Buffer.alloc(0);
  let state: 'header' | 'data' | 'crlf' | 'trailer' | 'done' = 'header';
  let remaining = 0;
  let chunkSignature = '';
  let previous = opts.signing?.seedSignature ?? '';
  let hash: Hash | null = null;
  const trailerLines: string[] = [];
  let trailerSignature: string | null = null;

  const verifyChunk = (dataHash: string) => {
    const s = opts.signing;
    if (!s) return;
    const toSign = ['AWS4-HMAC-SHA256-PAYLOAD', s.amzDate, s.scope, previous, EMPTY_SHA256, dataHash].join(
      '\n',
    );
    const expected = hmacHex(s.key, toSign);
    if (!safeEqual(expected, chunkSignature)) throw s3Errors.signatureMismatch();
    previous = expected;
  };

  const takeLine = (): string | null => {
    const at = pending.indexOf(CRLF);
    if (at < 0) {
      if (pending.length > MAX_LINE) throw s3Errors.invalidChunk();
      return null;
    }
    const line = pending.subarray(0, at).toString('latin1');
    pending = pending.subarray(at + 2);
    return line;
  };

  const step = function* (): Generator<Buffer> {
    for (;;) {
      if (state === 'header') {
        const line = takeLine();
        if (line === null) return;
        const semi = line.indexOf(';');
        const sizeText = (semi >= 0 ? line.slice(0, semi) : line).trim();
        if (!/^[0-9a-fA-F]{1,16}$/.test(sizeText)) throw s3Errors.invalidChunk();
        remaining = Number.parseInt(sizeText, 16);
        const ext = semi >= 0 ? line.slice(semi + 1) : '';
        const m = /chunk-signature=([0-9a-f]{64})/.exec(ext);
        if (opts.signing && !m) throw s3Errors.invalidChunk('A chunk carries no chunk-signature.');
        chunkSignature = m?.[1] ?? '';
        if (remaining === 0) {
          verifyChunk(EMPTY_SHA256);
          state = 'trailer';
        } else {
          hash = opts.signing ? createHash('sha256') : null;
          state = 'data';
        }
      } else if (state === 'data') {
        if (pending.length === 0) return;
        const take = Math.min(remaining, pending.length);
        const piece = pending.subarray(0, take);
        pending = pending.subarray(take);
        remaining -= take;
        hash?.update(piece);
        yield piece;
        if (remaining === 0) state = 'crlf';
      } else if (state === 'crlf') {
        if (pending.length < 2) return;
        if (pending[0] !== 13 || pending[1] !== 10) throw s3Errors.invalidChunk();
        pending = pending.subarray(2);
        verifyChunk(hash ? hash.digest('hex') : '');
        state = 'header';
      } else if (state === 'trailer') {
        const line = takeLine();
        if (line === null) return;
        if (line === '') {
          finishTrailers();
          state = 'done';
          return;
        }
        const colon = line.indexOf(':');
        if (colon <= 0) throw s3Errors.invalidChunk('A trailer line is malformed.');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (name === 'x-amz-trailer-signature') trailerSignature = value;
        else {
          trailerLines.push(`${name}:${value}`);
          opts.onTrailer(name, value);
        }
      } else {
        if (pending.length > 0 && pending.toString('latin1').trim() !== '') throw s3Errors.invalidChunk();
        pending = Buffer.alloc(0);
        return;
      }
    }
  };

  const finishTrailers = () => {
    const s = opts.signing;
    if (!s || (trailerLines.length === 0 && trailerSignature === null)) return;
    if (trailerSignature === null)
      throw s3Errors.invalidChunk('The trailer carries no x-amz-trailer-signature.');
    const text = trailerLines.map((l) => `${l}\n`).join('');
    const toSign = ['AWS4-HMAC-SHA256-TRAILER', s.amzDate, s.scope, previous, sha256Hex(text)].join('\n');
    if (!safeEqual(hmacHex(s.key, toSign), trailerSignature)) throw s3Errors.signatureMismatch();
  };

  for await (const chunk of source) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    yield* step();
  }
  // Some clients end the body right after the last trailer without the closing empty line.
  if ((state as string) === 'trailer' && pending.length === 0) {
    finishTrailers();
    state = 'done';
  }
  if (state !== 'done') throw s3Errors.incompleteBody();
}
