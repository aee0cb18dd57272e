import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StorageService } from '../../src/areas/storage/service.js';
import { TestFjord } from '../helpers/fjord.js';

/**
 * A presigned PUT into an internal bucket (how speech uploads arrive): it writes exactly the one
 * key it was made for, no larger than stated, until it expires — and nothing else.
 */
let t: TestFjord;
let storage: StorageService;
beforeAll(async () => {
  t = await TestFjord.create({ FJORD_S3_PORT: '0' });
  await t.fjord.start(['s3']);
  storage = t.fjord.areas.get('storage')!.service as StorageService;
});
afterAll(() => t.close());

const put = (url: string, body: string, method = 'PUT') =>
  fetch(url, { method, body: method === 'PUT' ? body : undefined });

it('accepts one PUT of the one key, bound to size, readable through the internal bucket', async () => {
  const bucket = storage.internalBucket('upload-test');
  const url = bucket.presignPut('jobs/a/audio', 11, 3600);
  expect(url).toContain('X-Amz-Signature=');
  expect((await put(url, 'hello world')).status).toBe(200);
  expect((await (await bucket.get('jobs/a/audio')).toArray()).join('')).toBe('hello world');
  // Larger than stated: refused before anything is stored.
  const small = bucket.presignPut('jobs/b/audio', 4, 3600);
  expect((await put(small, 'too large')).status).toBe(400);
  await expect(bucket.get('jobs/b/audio')).rejects.toThrow();
});

it('refuses another key, another method, a tampered signature and an expired URL', async () => {
  const bucket = storage.internalBucket('upload-test');
  const url = bucket.presignPut('jobs/c/audio', 100, 60);
  expect((await put(url.replace('jobs/c/audio', 'jobs/d/audio'), 'x')).status).toBe(403);
  expect((await put(url, '', 'GET')).status).toBe(403);
  expect((await put(url.replace(/X-Amz-Signature=[0-9a-f]{4}/, 'X-Amz-Signature=0000'), 'x')).status).toBe(
    403,
  );
  const forged = url.replace(/FJORDUPLOAD\.v1\.[^%&]*/, 'FJORDUPLOAD.v1.AAAA.BBBB.CCCC');
  expect((await put(forged, 'x')).status).toBe(403);
  await t.advance(61);
  expect((await put(url, 'late')).status).toBe(403);
  await expect(bucket.get('jobs/c/audio')).rejects.toThrow();
});

it('is no bucket of the S3 listener without a grant', async () => {
  const url = new URL(storage.internalBucket('upload-test').presignPut('jobs/a/audio', 11, 3600));
  const plain = `${url.origin}${url.pathname}`;
  expect((await fetch(plain)).status).toBeGreaterThanOrEqual(400);
  expect((await put(plain, 'overwrite')).status).toBeGreaterThanOrEqual(400);
  const bucket = storage.internalBucket('upload-test');
  expect((await (await bucket.get('jobs/a/audio')).toArray()).join('')).toBe('hello world');
});
