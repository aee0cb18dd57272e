import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Harness, startHarness } from '../s3/testing/harness.js';
import type { BucketRef } from './repo.js';

/**
 * Completing an upload drops the upload and writes the object naming its parts' blobs in one
 * transaction: either both happen or neither does.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const attrs = { contentType: 'application/octet-stream', headers: {}, metadata: {}, tags: {} };

it('a Complete whose write fails leaves the upload and its parts as they were, to complete later', async () => {
  await sql`INSERT INTO storage_buckets (id, updated_at, deleted_at) VALUES ('b-complete', 0, NULL)`.execute(
    h.store.db,
  );
  const ref: BucketRef = { id: 'b-complete', customerId: 'c-complete', versioning: 'Unversioned' };
  const objects = h.plane.env.objects;
  const uploadId = await objects.createUpload(ref.id, 'big', attrs, null);
  const blob = { ref: '00000000-0000-7000-8000-00000000c0de', size: 7 };
  await objects.putPart(uploadId, 1, [blob], { size: 7, md5: 'aa'.repeat(16), checksum: null });
  const listed = [{ partNumber: 1, etag: 'aa'.repeat(16), checksums: {} }];

  // The bucket is retired while the Complete runs: its write is refused.
  await sql`UPDATE storage_buckets SET deleted_at = 1 WHERE id = 'b-complete'`.execute(h.store.db);
  const upload = await objects.requireUpload(ref.id, 'big', uploadId);
  await expect(objects.complete(ref, upload, listed)).rejects.toThrow();
  expect(await objects.repo.upload(ref.id, uploadId)).toBeDefined();
  expect((await objects.repo.parts(uploadId)).map((p) => p.part_number)).toEqual([1]);
  expect(await objects.repo.latest(ref.id, 'big')).toBeUndefined();

  // Once the write can land, the same Complete does, and a retry of it gets the same answer.
  await sql`UPDATE storage_buckets SET deleted_at = NULL WHERE id = 'b-complete'`.execute(h.store.db);
  const done = await objects.complete(ref, upload, listed);
  expect(done.etag).toMatch(/-1$/);
  expect(JSON.parse((await objects.repo.latest(ref.id, 'big'))!.blob)).toEqual([blob]);
  expect(await objects.repo.upload(ref.id, uploadId)).toBeUndefined();
  expect(await objects.completedBefore(ref.id, 'big', uploadId, listed)).toEqual({
    etag: done.etag,
    versionId: done.versionId,
    checksum: null,
  });
});

it('concurrent multipart work on one key all succeeds: a part sent twice at once, two Completes and an Abort', async () => {
  // A bucket with no row has no row lock to queue on: on PostgreSQL two writers of one part number
  // (or of one key's `null` version) race on its unique key, and the kernel runs the loser's unit
  // again (attemptsOnUniqueRace); on SQLite every unit waits for the one write lock.
  const ref: BucketRef = { id: 'b-multipart-race', customerId: 'c-complete', versioning: 'Unversioned' };
  const objects = h.plane.env.objects;
  const size = 5 * 1024 * 1024; // the smallest part that may be followed by another
  const md5 = 'bb'.repeat(16);
  const uploads = await Promise.all([0, 1, 2].map(() => objects.createUpload(ref.id, 'raced', attrs, null)));
  const sent = uploads.flatMap((id, u) =>
    [1, 2, 3].flatMap((n) =>
      [0, 1].map((copy) => ({ id, n, blob: { ref: `race-${u}-${n}-${copy}`, size } })),
    ),
  );
  await Promise.all(sent.map((s) => objects.putPart(s.id, s.n, [s.blob], { size, md5, checksum: null })));
  for (const id of uploads) {
    const parts = await objects.repo.parts(id);
    expect(parts.map((p) => p.part_number)).toEqual([1, 2, 3]);
  }

  const listed = [1, 2, 3].map((partNumber) => ({ partNumber, etag: md5, checksums: {} }));
  const complete = async (id: string) =>
    objects.complete(ref, await objects.requireUpload(ref.id, 'raced', id), listed);
  const [first, second, aborted] = uploads as [string, string, string];
  const settled = await Promise.allSettled([complete(first), complete(second), objects.abort(aborted)]);
  expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);

  // One current version (the bucket keeps no others), counted once, and no upload left behind.
  expect(await objects.repo.listVersions(ref.id, 'raced', null, 10)).toHaveLength(1);
  expect(await objects.repo.usage(ref.id)).toEqual({ objects: 1, bytes: 3 * size });
  for (const id of uploads) expect(await objects.repo.upload(ref.id, id)).toBeUndefined();
});
