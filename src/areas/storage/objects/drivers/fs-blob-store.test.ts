import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { FsBlobStore } from './fs-blob-store.js';
import { PACK_APPEND_MS, parsePackRef } from './pack-files.js';

it('sweeps temp files a crash left behind at first use, and keeps ones still being written', async () => {
  const root = mkdtempSync(join(tmpdir(), 'fjord-blobs-'));
  mkdirSync(join(root, 'tmp'));
  const stale = join(root, 'tmp', 'left-by-a-crash');
  const fresh = join(root, 'tmp', 'an-upload-in-flight');
  writeFileSync(stale, 'x'.repeat(1000));
  writeFileSync(fresh, 'y');
  const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
  utimesSync(stale, twoHoursAgo, twoHoursAgo);
  const blobs = new FsBlobStore(root, false);
  const ref = await blobs.put(
    (async function* () {
      yield Buffer.from('hello');
    })(),
    5,
    () => {},
  );
  expect(existsSync(stale)).toBe(false);
  expect(existsSync(fresh)).toBe(true);
  expect((await blobs.readAll(ref)).toString()).toBe('hello');
});

const bodyOf = (...chunks: string[]) =>
  (async function* () {
    for (const c of chunks) yield Buffer.from(c);
  })();

it('packs small blobs: each reads back whole and in ranges, and a body that fails its check never lands', async () => {
  const root = mkdtempSync(join(tmpdir(), 'fjord-packs-'));
  const blobs = new FsBlobStore(root, true);
  const refs = await Promise.all(
    Array.from({ length: 20 }, (_, i) => blobs.put(bodyOf(`object ${i} `, 'x'.repeat(i)), 0, () => {})),
  );
  // Written together, they share a pack.
  expect(new Set(refs.map((r) => blobs.locate(r).path)).size).toBe(1);
  for (const [i, ref] of refs.entries()) {
    expect((await blobs.readAll(ref)).toString()).toBe(`object ${i} ${'x'.repeat(i)}`);
    const part: Buffer[] = [];
    for await (const c of await blobs.get(ref, 2, 5)) part.push(c as Buffer);
    expect(Buffer.concat(part).toString()).toBe('ject');
  }
  const before = statSync(blobs.locate(refs[0]!).path).size;
  await expect(
    blobs.put(bodyOf('bad'), 3, () => {
      throw new Error('BadDigest');
    }),
  ).rejects.toThrow('BadDigest');
  expect(statSync(blobs.locate(refs[0]!).path).size).toBe(before);
});

it('lists the whole entries of an older pack (not a torn one a crash left at its end) and removes the pack with its last entry', async () => {
  const root = mkdtempSync(join(tmpdir(), 'fjord-packs-'));
  const first = new FsBlobStore(root, false);
  const refs = [await first.put(bodyOf('one'), 3, () => {}), await first.put(bodyOf('two'), 3, () => {})];
  const pack = first.locate(refs[0]!).path;
  // A crash in the middle of an append: a header that promises more than is there.
  appendFileSync(pack, Buffer.from([0x46, 0x4a, 0x42, 0x31, 0, 0, 0, 100, 1, 2, 3]));
  const hourAgo = new Date(Date.now() - 3600_000);
  utimesSync(pack, hourAgo, hourAgo);

  // The next process never appends to it, and lists it for the orphan sweep.
  const second = new FsBlobStore(root, false);
  await second.put(bodyOf('three'), 5, () => {});
  const listed: string[] = [];
  for await (const ref of second.listOlderThan(Date.now() - 60_000)) listed.push(ref);
  expect(listed).toEqual(refs);
  await second.delete(refs[0]!);
  expect(existsSync(pack)).toBe(true);
  expect((await second.readAll(refs[1]!)).toString()).toBe('two');
  await second.delete(refs[1]!);
  expect(existsSync(pack)).toBe(false);
});

it('starts a new pack once the one appended to is an hour old on its clock', async () => {
  const root = mkdtempSync(join(tmpdir(), 'fjord-blobs-'));
  let now = 1_000_000;
  const blobs = new FsBlobStore(root, false, () => now);
  const packOf = (ref: string) => parsePackRef(ref)!.pack;
  const a = await blobs.put(bodyOf('one'), 3, () => {});
  const b = await blobs.put(bodyOf('two'), 3, () => {});
  expect(packOf(b)).toBe(packOf(a));
  expect(blobs.packs.openedAt(packOf(a))).toEqual({ at: 1_000_000, own: true });
  now += PACK_APPEND_MS;
  const c = await blobs.put(bodyOf('three'), 5, () => {});
  expect(packOf(c)).not.toBe(packOf(a));
  expect((await blobs.readAll(a)).toString()).toBe('one');
  expect((await blobs.readAll(c)).toString()).toBe('three');
  // A pack of another process (or of an earlier run) ages from the time in its id.
  const foreign = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f40ab';
  expect(blobs.packs.openedAt(foreign)).toEqual({ at: 0x0190a1b2c3d4, own: false });
});
