import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { PackReaders } from './pack-readers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function packDir() {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-pack-readers-'));
  dirs.push(dir);
  return dir;
}

/** How many of this process's descriptors are open on `path` (Linux's /proc). */
function openOn(path: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(path);
    } catch {
      return false;
    }
  }).length;
}

/** Waits for the descriptors open on `path` to be `n`: closes finish in the thread pool, later on a loaded machine. */
const openComesTo = (path: string, n: number) =>
  vi.waitFor(() => expect(openOn(path)).toBe(n), { timeout: 10_000, interval: 20 });

it('reads through one kept descriptor per pack and closes it when the pack is let go', async () => {
  const dir = packDir();
  const path = join(dir, 'p1');
  writeFileSync(path, 'abcdefghij');
  const readers = new PackReaders((pack) => join(dir, pack));
  const reads = await Promise.all([
    readers.read('p1', 0, 3),
    readers.read('p1', 5, 5),
    readers.read('p1', 8, 4),
  ]);
  expect(reads.map((r) => r.buf.subarray(0, r.bytesRead).toString())).toEqual(['abc', 'fghij', 'ij']);
  expect(reads[2]!.bytesRead).toBe(2); // past the end: a short read, which the caller refuses
  expect(openOn(path)).toBe(1);
  // Let go while a read is in flight: the descriptor closes once that read ends.
  const inFlight = readers.read('p1', 1, 2);
  readers.release('p1');
  expect((await inFlight).buf.toString()).toBe('bc');
  await openComesTo(path, 0);
});

it('keeps no reader for a pack it could not open, and at most 32 packs open', async () => {
  const dir = packDir();
  const readers = new PackReaders((pack) => join(dir, pack));
  await expect(readers.read('late', 0, 1)).rejects.toMatchObject({ code: 'ENOENT' });
  writeFileSync(join(dir, 'late'), 'x');
  expect((await readers.read('late', 0, 1)).buf.toString()).toBe('x');
  for (let i = 0; i < 40; i++) {
    writeFileSync(join(dir, `p${i}`), String(i));
    await readers.read(`p${i}`, 0, 1);
  }
  await openComesTo(dir, 32);
  readers.releaseAll();
  await openComesTo(dir, 0);
});
