import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FsBlobStore } from './drivers/fs-blob-store.js';
import { CHUNK, readSealed, sealedSize, sealStream } from './sealing.js';

const root = mkdtempSync(join(tmpdir(), 'fjord-sealed-'));
const blobs = new FsBlobStore(root, false);
const key = randomBytes(32);

/** Writes `body` sealed, arriving in pieces of `piece` bytes (chunk boundaries fall anywhere). */
async function seal(body: Buffer, piece: number): Promise<string> {
  const source = (async function* () {
    for (let i = 0; i < body.length; i += piece) yield body.subarray(i, i + piece);
  })();
  return blobs.put(sealStream(key, source), sealedSize(body.length), () => {});
}

async function read(parts: { ref: string; size: number }[], start: number, end: number, k = key) {
  const out: Buffer[] = [];
  for await (const c of readSealed(blobs, parts, k, start, end)) out.push(c as Buffer);
  return Buffer.concat(out);
}

describe('sealed blobs', () => {
  it('round-trips every size around the chunk boundary, whole and in ranges', async () => {
    for (const size of [1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5]) {
      const body = randomBytes(size);
      const ref = await seal(body, 1000 + (size % 7_000));
      const part = { ref, size };
      const at = blobs.locate(ref);
      expect(at.length ?? statSync(at.path).size).toBe(sealedSize(size));
      expect((await read([part], 0, size - 1)).equals(body), `size ${size}`).toBe(true);
      for (let i = 0; i < 20; i++) {
        const a = Math.floor(Math.random() * size);
        const z = a + Math.floor(Math.random() * (size - a));
        expect((await read([part], a, z)).equals(body.subarray(a, z + 1)), `${size}: ${a}-${z}`).toBe(true);
      }
    }
  });

  it('reads a range across the parts of a multipart object', async () => {
    const one = randomBytes(CHUNK + 10);
    const two = randomBytes(2 * CHUNK);
    const parts = [
      { ref: await seal(one, 4096), size: one.length },
      { ref: await seal(two, 1 << 20), size: two.length },
    ];
    const all = Buffer.concat([one, two]);
    expect((await read(parts, CHUNK, CHUNK + 20)).equals(all.subarray(CHUNK, CHUNK + 21))).toBe(true);
    expect((await read(parts, 0, all.length - 1)).equals(all)).toBe(true);
  });

  it('never serves a tampered blob, nor opens one with another key', async () => {
    const body = randomBytes(2 * CHUNK);
    const ref = await seal(body, 50_000);
    await expect(read([{ ref, size: body.length }], 0, 10, randomBytes(32))).rejects.toMatchObject({
      code: 'InternalError',
    });
    const at = blobs.locate(ref);
    const bytes = readFileSync(at.path);
    bytes[at.offset + 16 + CHUNK + 16 + 3]! ^= 1;
    writeFileSync(at.path, bytes);
    // The first chunk is intact and still readable; the second fails authentication.
    expect((await read([{ ref, size: body.length }], 0, 10)).equals(body.subarray(0, 11))).toBe(true);
    await expect(read([{ ref, size: body.length }], CHUNK, CHUNK + 1)).rejects.toMatchObject({
      code: 'InternalError',
    });
  });
});
