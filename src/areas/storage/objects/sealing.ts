import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { s3Errors } from '../s3/errors.js';
import type { BlobStore } from './drivers/blob-store.js';
import type { BlobPart } from './tables.js';

/**
 * Blobs sealed at rest, in independent chunks so that a ranged GET decrypts only the chunks it
 * touches. Layout of a sealed blob:
 *
 *   salt (16 bytes) | chunk 0 ciphertext + GCM tag | chunk 1 … | last chunk (shorter) + tag
 *
 * Every chunk holds CHUNK plaintext bytes except the last. The blob's AES-256-GCM key is
 * HMAC-SHA256(object key, salt): a fresh random salt per blob makes every blob's key unique, so
 * the chunk index can serve as the nonce without a nonce ever repeating under one key, and
 * reordering or swapping chunks fails authentication. Truncation is caught because readers
 * know the plaintext size from the object's row and ask for every chunk it implies.
 */
export const CHUNK = 64 * 1024;
const SALT = 16;
const TAG = 16;
const LABEL = Buffer.from('fjord-sse-blob-v1');

const chunksOf = (plain: number) => Math.ceil(plain / CHUNK);

/** Bytes a sealed blob takes for `plain` bytes of object (−1, an unknown length, stays −1). */
export function sealedSize(plain: number): number {
  if (plain < 0) return -1;
  return SALT + plain + chunksOf(plain) * TAG;
}

const blobKey = (objectKey: Buffer, salt: Buffer) =>
  createHmac('sha256', objectKey).update(LABEL).update(salt).digest();

function nonce(index: number): Buffer {
  const n = Buffer.alloc(12);
  n.writeBigUInt64BE(BigInt(index), 4);
  return n;
}

function sealChunk(key: Buffer, index: number, plain: Buffer): Buffer {
  const c = createCipheriv('aes-256-gcm', key, nonce(index));
  const body = Buffer.concat([c.update(plain), c.final()]);
  return Buffer.concat([body, c.getAuthTag()]);
}

function openChunk(key: Buffer, index: number, sealed: Buffer): Buffer {
  const d = createDecipheriv('aes-256-gcm', key, nonce(index));
  d.setAuthTag(sealed.subarray(sealed.length - TAG));
  try {
    return Buffer.concat([d.update(sealed.subarray(0, sealed.length - TAG)), d.final()]);
  } catch {
    // A tampered or truncated blob is never served as if it were the object.
    throw s3Errors.internal();
  }
}

/** `source` sealed under `objectKey`: the salt, then each CHUNK of plaintext as it fills. */
export async function* sealStream(objectKey: Buffer, source: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  const salt = randomBytes(SALT);
  const key = blobKey(objectKey, salt);
  yield salt;
  let index = 0;
  // Less than one chunk is ever held back; each incoming piece is copied at most once.
  let rest: Buffer = Buffer.alloc(0);
  for await (const piece of source) {
    const all = rest.length ? Buffer.concat([rest, piece]) : piece;
    let at = 0;
    for (; all.length - at >= CHUNK; at += CHUNK) yield sealChunk(key, index++, all.subarray(at, at + CHUNK));
    rest = all.subarray(at);
  }
  if (rest.length > 0) yield sealChunk(key, index, rest);
}

/** Plaintext bytes `from`..`to` (inclusive) of one sealed blob holding `plain` bytes. */
async function* openBlob(
  blobs: BlobStore,
  objectKey: Buffer,
  part: BlobPart,
  from: number,
  to: number,
): AsyncIterable<Buffer> {
  const first = Math.floor(from / CHUNK);
  const last = Math.floor(to / CHUNK);
  const saltBytes: Buffer[] = [];
  for await (const c of await blobs.get(part.ref, 0, SALT - 1)) saltBytes.push(c as Buffer);
  const key = blobKey(objectKey, Buffer.concat(saltBytes));
  const start = SALT + first * (CHUNK + TAG);
  const lastPlain = Math.min(CHUNK, part.size - last * CHUNK);
  const end = SALT + last * (CHUNK + TAG) + lastPlain + TAG - 1;
  let index = first;
  let rest: Buffer = Buffer.alloc(0);
  const emit = (sealed: Buffer) => {
    const plain = openChunk(key, index, sealed);
    const lo = index === first ? from - first * CHUNK : 0;
    const hi = index === last ? to - last * CHUNK + 1 : plain.length;
    index++;
    return plain.subarray(lo, hi);
  };
  for await (const c of await blobs.get(part.ref, start, end)) {
    const all = rest.length ? Buffer.concat([rest, c as Buffer]) : (c as Buffer);
    let at = 0;
    for (; all.length - at >= CHUNK + TAG && index < last; at += CHUNK + TAG)
      yield emit(all.subarray(at, at + CHUNK + TAG));
    rest = all.subarray(at);
  }
  if (index !== last || rest.length !== lastPlain + TAG) throw s3Errors.internal();
  yield emit(rest);
}

/** Bytes `start`..`end` of an object sealed part by part, decrypting only the chunks the range touches. */
export function readSealed(
  blobs: BlobStore,
  parts: BlobPart[],
  objectKey: Buffer,
  start: number,
  end: number,
): Readable {
  const pieces: { part: BlobPart; from: number; to: number }[] = [];
  let offset = 0;
  for (const p of parts) {
    const pStart = offset;
    const pEnd = offset + p.size - 1;
    offset += p.size;
    if (pEnd < start || pStart > end) continue;
    pieces.push({ part: p, from: Math.max(start, pStart) - pStart, to: Math.min(end, pEnd) - pStart });
  }
  return Readable.from(
    (async function* () {
      for (const p of pieces) yield* openBlob(blobs, objectKey, p.part, p.from, p.to);
    })(),
    { objectMode: false },
  );
}
