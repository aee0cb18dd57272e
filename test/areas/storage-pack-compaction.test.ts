import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import type { ObjectStats } from '../../src/areas/storage/data-plane-contract.js';
import { FsBlobStore } from '../../src/areas/storage/objects/drivers/fs-blob-store.js';
import { PackCompactor } from '../../src/areas/storage/objects/pack-compaction.js';
import { PackRefsRepo } from '../../src/areas/storage/objects/pack-refs-repo.js';
import type { ObjectTables } from '../../src/areas/storage/objects/tables.js';
import type { StorageService } from '../../src/areas/storage/service.js';
import type { AdjustableClock } from '../../src/kernel/clock.js';
import { blobOnDisk } from '../helpers/blob-on-disk.js';
import { storageS3Fixture } from './storage-s3-fixture.js';

/**
 * Pack compaction: small objects share pack files; once most of a pack's entries are overwritten
 * or deleted, the `storage.packs.compact` job copies the live ones out, switches the rows to the
 * copies and later removes the old pack — and every object reads back the same throughout.
 */
const f = storageS3Fixture('packs');
const packsDir = () => join(f.t.kernel.config.dataDir, 'objects', 'packs');
const bucket = () => f.bucketOf(f.a);

const db = () => f.t.kernel.store.typed<ObjectTables>();
const stats = () =>
  (
    f.t.fjord.areas.get('storage')!.service as StorageService as unknown as { stats: () => ObjectStats }
  ).stats();

/** The pack a current object's blob is in (its last part's, for a multipart object). */
async function packOf(key: string): Promise<string> {
  const row = await db()
    .selectFrom('storage_objects')
    .select('blob')
    .where('key', '=', key)
    .where('is_latest', '=', 1)
    .executeTakeFirstOrThrow();
  const part = (JSON.parse(row.blob) as { ref: string }[]).at(-1);
  return blobOnDisk(f.t.kernel.config.dataDir, part!.ref).path;
}

const packBytes = () =>
  existsSync(packsDir())
    ? readdirSync(packsDir()).reduce((sum, name) => sum + statSync(join(packsDir(), name)).size, 0)
    : 0;

async function body(s3: S3Client, Bucket: string, Key: string, Range?: string): Promise<Buffer> {
  const r = await s3.send(new GetObjectCommand({ Bucket, Key, Range }));
  return Buffer.from(await r.Body!.transformToByteArray());
}

/** Ages the packs past their append window and grace without running any job. */
const ageClock = (hours = 3) => (f.t.kernel.clock as AdjustableClock).advance(hours * 3600);

describe('pack compaction', () => {
  it('copies the live entries of a mostly overwritten pack out and removes it, every object intact', async () => {
    const { name: Bucket, s3 } = await bucket();
    const want = new Map<string, Buffer>();
    const put = async (Key: string, data: Buffer, sealed = false) => {
      await s3.send(
        new PutObjectCommand({
          Bucket,
          Key,
          Body: data,
          ...(sealed ? { ServerSideEncryption: 'AES256' as const } : {}),
        }),
      );
      want.set(Key, data);
    };
    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    for (const Key of keys) await put(Key, randomBytes(8 * 1024));
    await put('sealed', randomBytes(5000), true);
    await put('ranged', randomBytes(100 * 1024));
    const oldPack = await packOf('sealed');
    expect(await packOf('k0')).toBe(oldPack);
    // Most objects overwritten (twice): most of the pack is dead.
    for (const Key of keys.slice(0, 36)) await put(Key, randomBytes(8 * 1024));
    for (const Key of keys.slice(0, 36)) await put(Key, randomBytes(8 * 1024));
    const before = packBytes();

    // The job on its schedule, driven by the emulator clock: a first pass copies and switches, the
    // next removes the old pack once the switch is an hour old.
    await f.t.advance(7 * 3600);
    expect(await packOf('sealed')).not.toBe(oldPack);
    expect(existsSync(oldPack)).toBe(true);
    for (const [Key, data] of want) expect((await body(s3, Bucket, Key)).equals(data)).toBe(true);
    await f.t.advance(7 * 3600);
    expect(existsSync(oldPack)).toBe(false);
    expect(packBytes()).toBeLessThan(before * 0.75);
    const metrics = (await f.t.request('GET', '/metrics')).text;
    const freed = /fjord_storage_pack_compaction_bytes_total\{kind="freed"\} (\d+)/.exec(metrics);
    expect(Number(freed?.[1])).toBeGreaterThan(0);

    for (const [Key, data] of want) expect((await body(s3, Bucket, Key)).equals(data), Key).toBe(true);
    const ranged = want.get('ranged')!;
    expect((await body(s3, Bucket, 'ranged', 'bytes=1000-70999')).equals(ranged.subarray(1000, 71000))).toBe(
      true,
    );
    const sealed = await s3.send(new GetObjectCommand({ Bucket, Key: 'sealed', Range: 'bytes=10-4009' }));
    expect(sealed.ServerSideEncryption).toBe('AES256');
    expect(
      Buffer.from(await sealed.Body!.transformToByteArray()).equals(want.get('sealed')!.subarray(10, 4010)),
    ).toBe(true);
  });

  it('loses nothing and resurrects nothing when deletes and overwrites race it', async () => {
    const { name: Bucket, s3 } = await bucket();
    const keys = Array.from({ length: 60 }, (_, i) => `r${i}`);
    const want = new Map<string, Buffer | null>();
    for (const Key of keys) {
      const data = randomBytes(4 * 1024);
      await s3.send(new PutObjectCommand({ Bucket, Key, Body: data }));
      want.set(Key, data);
    }
    const oldPack = await packOf('r0');
    // Two thirds deleted: the pack is sparse.
    for (const Key of keys.slice(0, 40)) {
      await s3.send(new DeleteObjectCommand({ Bucket, Key }));
      want.set(Key, null);
    }
    ageClock();
    // Compaction runs while the survivors are deleted or overwritten, all at once.
    const racing = keys.slice(40).map(async (Key, i) => {
      if (i % 2 === 0) {
        await s3.send(new DeleteObjectCommand({ Bucket, Key }));
        want.set(Key, null);
      } else {
        const data = randomBytes(4 * 1024);
        await s3.send(new PutObjectCommand({ Bucket, Key, Body: data }));
        want.set(Key, data);
      }
    });
    await Promise.all([stats().compactPacks!(), ...racing]);
    ageClock();
    await stats().compactPacks!();
    ageClock();
    await stats().compactPacks!();
    expect(existsSync(oldPack)).toBe(false);
    for (const [Key, data] of want) {
      if (data === null) {
        const err = await s3.send(new GetObjectCommand({ Bucket, Key })).then(
          () => 'found',
          (e: { name?: string }) => e.name,
        );
        expect(err, Key).toBe('NoSuchKey');
      } else expect((await body(s3, Bucket, Key)).equals(data), Key).toBe(true);
    }
  });

  it('a row that changed since it was read is not switched (a concurrent write wins)', async () => {
    const { name: Bucket, s3 } = await bucket();
    await s3.send(new PutObjectCommand({ Bucket, Key: 'cas', Body: 'first' }));
    const row = await db()
      .selectFrom('storage_objects')
      .select(['id', 'blob'])
      .where('key', '=', 'cas')
      .executeTakeFirstOrThrow();
    await s3.send(new PutObjectCommand({ Bucket, Key: 'cas', Body: 'second' }));
    const repo = new PackRefsRepo(db());
    expect(await repo.switchBlobs({ kind: 'object', ...row }, '[]')).toBe(false);
    expect((await body(s3, Bucket, 'cas')).toString()).toBe('second');
  });

  it('leaves every object readable when a pass dies between switching rows (a crash)', async () => {
    const { name: Bucket, s3 } = await bucket();
    const want = new Map<string, Buffer>();
    for (let i = 0; i < 30; i++) {
      const data = randomBytes(2048);
      await s3.send(new PutObjectCommand({ Bucket, Key: `c${i}`, Body: data }));
      want.set(`c${i}`, data);
    }
    for (let i = 0; i < 75; i++) {
      const data = randomBytes(2048);
      // Every object but the last five overwritten three times.
      await s3.send(new PutObjectCommand({ Bucket, Key: `c${i % 25}`, Body: data }));
      want.set(`c${i % 25}`, data);
    }
    const oldPack = await packOf('c29');
    ageClock();
    // The pass "crashes" after switching two rows: copies are durable, some rows name them, the
    // others still name the old pack, which is still there.
    const original = PackRefsRepo.prototype.switchBlobs;
    let calls = 0;
    PackRefsRepo.prototype.switchBlobs = function (this: PackRefsRepo, ...args) {
      if (++calls > 2) return Promise.reject(new Error('killed'));
      return original.apply(this, args);
    };
    try {
      await expect(stats().compactPacks!()).rejects.toThrow('killed');
    } finally {
      PackRefsRepo.prototype.switchBlobs = original;
    }
    expect(existsSync(oldPack)).toBe(true);
    for (const [Key, data] of want) expect((await body(s3, Bucket, Key)).equals(data), Key).toBe(true);
    // The next passes finish the job.
    ageClock();
    await stats().compactPacks!();
    ageClock();
    await stats().compactPacks!();
    expect(existsSync(oldPack)).toBe(false);
    for (const [Key, data] of want) expect((await body(s3, Bucket, Key)).equals(data), Key).toBe(true);
  });

  it('switches completed multipart objects and old parts; a part of an upload in progress holds its pack a day', async () => {
    const { name: Bucket, s3 } = await bucket();
    const want = new Map<string, Buffer>();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 20; i++) {
        const data = randomBytes(3000);
        await s3.send(new PutObjectCommand({ Bucket, Key: `m${i}`, Body: data }));
        want.set(`m${i}`, data);
      }
    }
    const upload = async (Key: string, bodies: Buffer[]) => {
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key }));
      const parts: { PartNumber: number; ETag: string | undefined }[] = [];
      for (const [i, Body] of bodies.entries()) {
        const r = await s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: i + 1, Body }));
        parts.push({ PartNumber: i + 1, ETag: r.ETag });
      }
      const complete = () =>
        s3.send(
          new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } }),
        );
      return { complete, data: Buffer.concat(bodies) };
    };
    // A completed object whose small last part is packed, and an upload left in progress.
    const done = await upload('mp-done', [randomBytes(5 * 1024 * 1024), randomBytes(3000)]);
    await done.complete();
    want.set('mp-done', done.data);
    const pending = await upload('mp-late', [randomBytes(3000)]);
    const oldPack = await packOf('mp-done');
    expect(await packOf('m0')).toBe(oldPack);

    ageClock();
    await stats().compactPacks!();
    // The upload's part was written less than a day ago: its pack waits.
    expect(await packOf('mp-done')).toBe(oldPack);

    ageClock(25);
    const pass = await stats().compactPacks!();
    expect(pass.rowsSwitched).toBeGreaterThanOrEqual(22);
    expect(await packOf('mp-done')).not.toBe(oldPack);
    // The part was switched too: the upload completes from the copy.
    await pending.complete();
    want.set('mp-late', pending.data);
    expect(await packOf('mp-late')).not.toBe(oldPack);
    ageClock();
    await stats().compactPacks!();
    expect(existsSync(oldPack)).toBe(false);
    for (const [Key, data] of want) expect((await body(s3, Bucket, Key)).equals(data), Key).toBe(true);
    const tail = await body(s3, Bucket, 'mp-done', `bytes=${5 * 1024 * 1024 - 100}-${5 * 1024 * 1024 + 99}`);
    expect(tail.equals(done.data.subarray(5 * 1024 * 1024 - 100, 5 * 1024 * 1024 + 100))).toBe(true);
  });

  it('two processes compacting the same pack at once lose nothing: each row takes one copy', async () => {
    const { name: Bucket, s3 } = await bucket();
    const want = new Map<string, Buffer>();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 20; i++) {
        const data = randomBytes(3000);
        await s3.send(new PutObjectCommand({ Bucket, Key: `p${i}`, Body: data }));
        want.set(`p${i}`, data);
      }
    }
    const oldPack = await packOf('p0');
    ageClock();
    // A second process on the same data dir and store: to it the pack is another process's, aged
    // on the wall clock (moved past its window and grace here).
    const other = new FsBlobStore(join(f.t.kernel.config.dataDir, 'objects'), true, () =>
      f.t.kernel.clock.nowMs(),
    );
    const later = () => Date.now() + 3 * 3600_000;
    const otherCompactor = new PackCompactor(other.packs, new PackRefsRepo(db()), later);
    const [mine, theirs] = await Promise.all([stats().compactPacks!(), otherCompactor.run()]);
    expect(mine.packsCompacted + theirs.packsCompacted).toBeGreaterThanOrEqual(1);
    expect(mine.rowsSwitched + theirs.rowsSwitched).toBeGreaterThanOrEqual(20);
    for (const [Key, data] of want) expect((await body(s3, Bucket, Key)).equals(data), Key).toBe(true);
    ageClock();
    const after = () => Date.now() + 6 * 3600_000;
    await Promise.all([
      stats().compactPacks!(),
      new PackCompactor(other.packs, new PackRefsRepo(db()), after).run(),
    ]);
    expect(existsSync(oldPack)).toBe(false);
    for (const [Key, data] of want) expect((await body(s3, Bucket, Key)).equals(data), Key).toBe(true);
    other.packs.reset(); // closes its pack file
  });
});
