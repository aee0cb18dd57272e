// A full disk is an answer, not a crash: on a small tmpfs as the data dir, S3 PUTs answer 507
// XFjordStorageFull, API writes 507 insufficient_storage (SQLite: its file lives there too),
// /readyz says not ready with the reason — and all of it recovers by itself once space returns.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, type S3ServiceException } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { s3ClientFor } from '../helpers/s3.js';
import { TEST_STORE } from '../helpers/store.js';

const mountPoint = mkdtempSync(join(tmpdir(), 'fjord-disk-full-'));
const mounted = (() => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint], { stdio: 'pipe' });
    return true;
  } catch (err) {
    console.warn(`disk-full tests skipped: mounting a tmpfs is not permitted here (${String(err)})`);
    return false;
  }
})();
const filler = join(mountPoint, 'filler');

let t: TestFjord;
let customer: TestCustomer;
beforeAll(async () => {
  if (!mounted) return;
  t = await TestFjord.create({
    FJORD_DATA_DIR: mountPoint,
    FJORD_S3_PORT: '0',
    FJORD_MIN_FREE_BYTES: String(1024 * 1024),
  });
  await t.fjord.start(['s3']);
  customer = await t.customer();
});
afterAll(async () => {
  if (!mounted) return;
  await t?.close();
  execFileSync('umount', ['-l', mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});

/** Writes a file until the tmpfs refuses another byte. */
function fillDisk() {
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  // The last page or so: keep writing single bytes until nothing fits.
  const tail = openSync(filler, 'a');
  try {
    for (;;) writeSync(tail, Buffer.from('x'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(tail);
  }
}

const putObject = async (bucket: { bucket_name: string }, key: string) => {
  const s3 = s3ClientFor(bucket as never);
  try {
    await s3.send(
      new PutObjectCommand({ Bucket: bucket.bucket_name, Key: key, Body: 'y'.repeat(256 * 1024) }),
    );
    return { status: 200, code: 'ok' };
  } catch (err) {
    const e = err as S3ServiceException;
    return { status: e.$metadata.httpStatusCode, code: e.name };
  }
};

/** An API write that lands in the store: a bucket (a row, and on SQLite pages of its file). */
const createBucket = (n: number) =>
  t.request('POST', '/v1/storage/buckets', {
    key: customer.pat,
    body: { bucket_name: `full-${n}-${Math.random().toString(36).slice(2, 8)}` },
  });

it.skipIf(!mounted)(
  'answers 507 on a full disk, reports not ready, and recovers when space returns',
  async () => {
    const made = await createBucket(0);
    expect(made.status, made.text).toBe(201);
    expect((await t.request('GET', '/readyz')).status).toBe(200);
    expect(await putObject(made.body, 'before')).toEqual({ status: 200, code: 'ok' });

    fillDisk();

    const notReady = await t.request('GET', '/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body.detail.code).toBe('low_disk_space');
    expect(notReady.body.detail.message).toMatch(/FJORD_MIN_FREE_BYTES/);

    expect(await putObject(made.body, 'while-full')).toEqual({ status: 507, code: 'XFjordStorageFull' });

    if (TEST_STORE === 'sqlite') {
      // The SQLite file shares the full disk: some write soon needs a page it cannot get. Each
      // answer is a success (a page was still free) or a 507 — never a 500.
      const statuses: number[] = [];
      for (let n = 1; n <= 200 && !statuses.includes(507); n++) {
        const r = await createBucket(n);
        statuses.push(r.status);
        if (r.status === 507) expect(r.body.detail.code).toBe('insufficient_storage');
      }
      expect(statuses.filter((s) => s !== 201 && s !== 507)).toEqual([]);
      expect(statuses).toContain(507);
    }

    unlinkSync(filler);

    expect((await t.request('GET', '/readyz')).status).toBe(200);
    expect(await putObject(made.body, 'after')).toEqual({ status: 200, code: 'ok' });
    const again = await createBucket(99);
    expect(again.status, again.text).toBe(201);
  },
);
