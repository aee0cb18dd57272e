import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../s3/testing/harness.js';
import { deleteMarker } from './object-types.js';
import { ObjectWrites } from './object-writes.js';
import type { BucketRef } from './repo.js';

/**
 * Concurrent writes share one transaction (the group commit): each must still come out as if
 * written alone, in order.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const attrs = { contentType: 'application/octet-stream', headers: {}, metadata: {}, tags: {} };
const write = (ref: BucketRef, key: string, size: number) =>
  h.plane.env.objects.commit(ref, key, {
    size,
    etag: `etag-${size}`,
    checksum: null,
    blob: JSON.stringify([{ ref: `00000000-0000-7000-8000-${String(size).padStart(12, '0')}`, size }]),
    attrs,
  });

it('in a bucket without versioning, the last of many writes of a key at once wins, counted once', async () => {
  const ref: BucketRef = { id: 'b-batch-plain', customerId: 'c-batch', versioning: 'Unversioned' };
  await Promise.all([
    ...Array.from({ length: 10 }, (_, i) => write(ref, 'a', i + 1)),
    write(ref, 'b', 100),
    write(ref, 'c', 1000),
  ]);
  const repo = h.plane.env.objects.repo;
  expect(Number((await repo.latest(ref.id, 'a'))!.size)).toBe(10);
  expect(await repo.listVersions(ref.id, 'a', null, 100)).toHaveLength(1);
  expect(await repo.usage(ref.id)).toEqual({ objects: 3, bytes: 1110 });
  // Again over the stored versions: replaced, not added.
  await Promise.all([write(ref, 'a', 20), write(ref, 'b', 200)]);
  expect(await repo.usage(ref.id)).toEqual({ objects: 3, bytes: 1220 });
});

it('in a versioned bucket, every write is a version and the last is current', async () => {
  const ref: BucketRef = { id: 'b-batch-versioned', customerId: 'c-batch', versioning: 'Enabled' };
  const done = await Promise.all(Array.from({ length: 5 }, (_, i) => write(ref, 'v', i + 1)));
  expect(new Set(done.map((d) => d.versionId)).size).toBe(5);
  const versions = await h.plane.env.objects.repo.listVersions(ref.id, 'v', null, 100);
  expect(versions).toHaveLength(5);
  expect(versions.filter((v) => v.is_latest === 1).map((v) => Number(v.size))).toEqual([5]);
  expect(await h.plane.env.objects.repo.usage(ref.id)).toEqual({ objects: 5, bytes: 15 });
});

it('a write to a deleted bucket fails alone; the writes sharing its transaction are kept', async () => {
  await sql`INSERT INTO storage_buckets (id, updated_at, deleted_at) VALUES ('b-batch-gone', 0, 1)`.execute(
    h.store.db,
  );
  const gone: BucketRef = { id: 'b-batch-gone', customerId: 'c-batch', versioning: 'Unversioned' };
  const live: BucketRef = { id: 'b-batch-live', customerId: 'c-batch', versioning: 'Unversioned' };
  const [bad, good] = await Promise.allSettled([write(gone, 'x', 1), write(live, 'y', 2)]);
  expect(bad.status).toBe('rejected');
  expect(good.status).toBe('fulfilled');
  expect(await h.plane.env.objects.repo.latest(live.id, 'y')).toBeDefined();
  expect(await h.plane.env.objects.repo.latest(gone.id, 'x')).toBeUndefined();
});

it('a write made under versioning Enabled keeps the null version, even sharing a batch with one made before it was enabled', async () => {
  // Versioning changed while writes were in flight: the requests carry the state each one read.
  const before: BucketRef = { id: 'b-batch-mixed', customerId: 'c-batch', versioning: 'Suspended' };
  const after: BucketRef = { ...before, versioning: 'Enabled' };
  await write(before, 'k', 7);
  await Promise.all([write(before, 'other', 3), write(after, 'k', 9)]);
  const repo = h.plane.env.objects.repo;
  const versions = await repo.listVersions(before.id, 'k', null, 100);
  expect(versions.map((v) => [v.version_id === 'null', v.is_latest, Number(v.size)])).toEqual([
    [false, 1, 9],
    [true, 0, 7],
  ]);
  expect(await repo.usage(before.id)).toEqual({ objects: 3, bytes: 19 });
});

it('two processes writing one key at once keep one version, counted once, every replaced blob released', async () => {
  // A second writer on the store stands for a second process: its own group commit, and on
  // PostgreSQL its own connection of the pool (READ COMMITTED).
  // The bucket's row as the control plane keeps it: locked as never versioned.
  await sql`INSERT INTO storage_buckets (id, updated_at, deleted_at, versioning) VALUES ('b-batch-race', 0, NULL, 'Unversioned')`.execute(
    h.store.db,
  );
  const ref: BucketRef = { id: 'b-batch-race', customerId: 'c-batch', versioning: 'Unversioned' };
  const writers = [h.plane.env.objects.writes, new ObjectWrites(h.store)];
  const blobOf = (n: number) => JSON.stringify([{ ref: `race-${n}`, size: n }]);
  const released: string[] = [];
  let n = 0;
  for (let round = 0; round < 20; round++) {
    const outs = await Promise.all(
      writers.flatMap((writer) =>
        [1, 2].map(() => {
          const size = ++n;
          return writer.commitVersion(
            ref,
            round % 2 ? 'k' : 'k2',
            {
              is_delete_marker: 0,
              size,
              etag: 'e',
              content_type: null,
              headers: '{}',
              metadata: '{}',
              tags: '{}',
              checksum: null,
              blob: blobOf(size),
              last_modified: 0,
              sse: null,
              object_lock: null,
              acl: null,
              storage_class: null,
            },
            0,
          );
        }),
      ),
    );
    for (const o of outs) released.push(...o.released.map((b) => b.ref));
  }
  const repo = h.plane.env.objects.repo;
  const kept = [await repo.latest(ref.id, 'k'), await repo.latest(ref.id, 'k2')].map((r) => Number(r!.size));
  expect(await repo.listVersions(ref.id, '', null, 100)).toHaveLength(2);
  expect(await repo.usage(ref.id)).toEqual({ objects: 2, bytes: kept[0]! + kept[1]! });
  const expected = Array.from({ length: n }, (_, i) => i + 1).filter((s) => !kept.includes(s));
  expect(released.sort()).toEqual(expected.map((s) => `race-${s}`).sort());
});

describe('an overwrite in a bucket that never had versioning', () => {
  // On SQLite the row is rewritten in place and keeps its id; code that read the row before the
  // overwrite and acts on it by id must still leave the counters and blobs exact.
  const ref: BucketRef = { id: 'b-batch-inplace', customerId: 'c-batch-inplace', versioning: 'Unversioned' };
  const blobRef = (size: number) => `00000000-0000-7000-8000-${String(size).padStart(12, '0')}`;
  /** A version straight through the data plane's writes, which answer with the blobs it replaced. */
  const put = (bucket: BucketRef, key: string, size: number) =>
    h.plane.env.objects.writes.commitVersion(
      bucket,
      key,
      {
        is_delete_marker: 0,
        size,
        etag: `etag-${size}`,
        content_type: null,
        headers: '{}',
        metadata: '{}',
        tags: '{}',
        checksum: null,
        blob: JSON.stringify([{ ref: blobRef(size), size }]),
        last_modified: h.clock.nowMs(),
        sse: null,
        object_lock: null,
        acl: null,
        storage_class: null,
      },
      h.clock.nowMs(),
    );

  it('replaces the stored version where it is, counted once', async () => {
    const repo = h.plane.env.objects.repo;
    await put(ref, 'same', 10);
    const before = (await repo.latest(ref.id, 'same'))!;
    const done = await put(ref, 'same', 11);
    expect(done.released.map((b) => b.ref)).toEqual([blobRef(10)]);
    const after = (await repo.latest(ref.id, 'same'))!;
    expect([Number(after.size), after.etag]).toEqual([11, 'etag-11']);
    if (h.store.kind === 'sqlite') expect(after.id).toBe(before.id);
    expect(await repo.listVersions(ref.id, 'same', null, 100)).toHaveLength(1);
  });

  it('a removal holding the row read before the overwrite counts out and releases what is stored now', async () => {
    const repo = h.plane.env.objects.repo;
    await put(ref, 'stale-delete', 20);
    const stale = (await repo.latest(ref.id, 'stale-delete'))!;
    const overwrite = await put(ref, 'stale-delete', 25);
    const released = [
      ...overwrite.released,
      ...(await h.plane.env.objects.writes.deleteVersion(ref, stale)),
    ].map((b) => b.ref);
    // Whichever way it went (the new content deleted, or nothing), every blob is either stored or
    // released, once, and the counters match what is stored.
    const stored = await repo.latest(ref.id, 'stale-delete');
    const storedRefs = stored ? JSON.parse(stored.blob).map((b: { ref: string }) => b.ref) : [];
    expect([...released, ...storedRefs].sort()).toEqual([blobRef(20), blobRef(25)]);
    const usage = await repo.usage(ref.id);
    const rows = await repo.listVersions(ref.id, '', null, 100);
    expect(usage).toEqual({
      objects: rows.length,
      bytes: rows.reduce((sum, r) => sum + Number(r.size), 0),
    });
  });

  it('a lifecycle transition decided before the overwrite leaves the new content in its class', async () => {
    const repo = h.plane.env.objects.repo;
    await put(ref, 'stale-class', 30);
    const stale = (await repo.latest(ref.id, 'stale-class'))!;
    h.clock.advance(1); // the overwrite is a second younger
    await put(ref, 'stale-class', 31);
    await repo.updateStorageClass(stale, 'STANDARD_IA');
    expect((await repo.latest(ref.id, 'stale-class'))!.storage_class).toBeNull();
  });

  it('lifecycle expiry leaves an object written after the rule matched it, and removes one as old as the cutoff', async () => {
    const { objects, repo } = { objects: h.plane.env.objects, repo: h.plane.env.objects.repo };
    await put(ref, 'expiring', 50);
    const cutoff = h.clock.nowMs();
    const matched = (await repo.latest(ref.id, 'expiring'))!;
    h.clock.advance(1);
    await put(ref, 'expiring', 51); // written after the rule's pass read the key
    await objects.deleteCurrent(ref, 'expiring', cutoff);
    expect(Number((await repo.latest(ref.id, 'expiring'))!.size)).toBe(51);
    // Between its read and its delete, too: the row read before the overwrite is not removed.
    await h.plane.env.objects.writes.deleteVersion(ref, matched, cutoff);
    expect(Number((await repo.latest(ref.id, 'expiring'))!.size)).toBe(51);
    await objects.deleteCurrent(ref, 'expiring', h.clock.nowMs());
    expect(await repo.latest(ref.id, 'expiring')).toBeUndefined();
    const usage = await repo.usage(ref.id);
    const rows = await repo.listVersions(ref.id, '', null, 100);
    expect(usage).toEqual({ objects: rows.length, bytes: rows.reduce((sum, r) => sum + Number(r.size), 0) });
  });

  it('in a Suspended bucket, lifecycle expiry checks the cutoff in the marker’s own transaction', async () => {
    const repo = h.plane.env.objects.repo;
    const suspended: BucketRef = { ...ref, id: 'b-batch-suspended', versioning: 'Suspended' };
    await sql`INSERT INTO storage_buckets (id, updated_at, deleted_at, versioning) VALUES (${suspended.id}, 0, NULL, 'Suspended')`.execute(
      h.store.db,
    );
    await put(suspended, 'gone-soon', 60);
    const cutoff = h.clock.nowMs();
    h.clock.advance(1);
    await put(suspended, 'gone-soon', 61); // lands after the expiry pass looked at the key
    // The marker would replace the `null` version; its transaction sees the newer write and stops.
    expect(
      await h.plane.env.objects.writes.expireCurrent(
        suspended,
        'gone-soon',
        deleteMarker(h.clock.nowMs()),
        cutoff,
      ),
    ).toBeNull();
    expect(Number((await repo.latest(suspended.id, 'gone-soon'))!.size)).toBe(61);
    // Past the cutoff, the marker replaces it, and the bytes are counted out.
    const expired = await h.plane.env.objects.deleteCurrent(suspended, 'gone-soon', h.clock.nowMs());
    expect(expired.deleteMarker).toBe(true);
    expect((await repo.latest(suspended.id, 'gone-soon'))!.is_delete_marker).toBe(1);
    expect(await repo.usage(suspended.id)).toEqual({ objects: 0, bytes: 0 });
  });

  it('a write that read the bucket as never versioned just as versioning was enabled keeps the versions', async () => {
    const repo = h.plane.env.objects.repo;
    const enabled: BucketRef = { ...ref, id: 'b-batch-inplace-enabled', versioning: 'Enabled' };
    // The bucket's row says what the write did not know yet.
    await sql`INSERT INTO storage_buckets (id, updated_at, deleted_at, versioning) VALUES (${enabled.id}, 0, NULL, 'Enabled')`.execute(
      h.store.db,
    );
    const stale: BucketRef = { ...enabled, versioning: 'Unversioned' };
    const first = await put(enabled, 'k', 40);
    await put(stale, 'k', 41);
    const versions = await repo.listVersions(enabled.id, 'k', null, 100);
    expect(versions.map((v) => [v.version_id, v.is_latest, Number(v.size)])).toEqual([
      ['null', 1, 41],
      [first.versionId, 0, 40],
    ]);
    expect(await repo.usage(enabled.id)).toEqual({ objects: 2, bytes: 81 });
  });
});
