import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';

/**
 * Pack flushes overlap, each one write from the thread pool. These tests hold one write back (or
 * fail it) through a stand-in for `fs.writev`, to see what the appends of the flushes around it
 * are told.
 */
const held: { release: ((err: Error | null) => void) | null; holdNext: boolean; written: number } = {
  release: null,
  holdNext: false,
  written: 0,
};

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const writev: typeof fs.writev = ((...args: unknown[]) => {
    const cb = args[args.length - 1] as (err: Error | null, written?: number) => void;
    const real = () =>
      (fs.writev as (...a: unknown[]) => void)(...args.slice(0, -1), (err: Error | null, n?: number) => {
        held.written++;
        cb(err, n);
      });
    if (!held.holdNext) return real();
    held.holdNext = false;
    held.release = (err) => (err ? cb(err) : real());
  }) as typeof fs.writev;
  return { ...fs, default: { ...fs, writev }, writev };
});

const { PackFiles } = await import('./pack-files.js');

afterEach(() => {
  held.release = null;
  held.holdNext = false;
  held.written = 0;
});

const turn = () => new Promise((r) => setImmediate(r));
/** Waits (in real time: the writes run in the thread pool) until `done()`, for at most 10 s. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !done(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(done()).toBe(true);
}
const settledState = (p: Promise<unknown>) => {
  const state = { done: false, error: null as unknown };
  p.then(
    () => {
      state.done = true;
    },
    (err) => {
      state.done = true;
      state.error = err;
    },
  );
  return state;
};

it('acknowledges an entry only once every earlier write of its pack is done, and refuses it when one failed', async () => {
  const packs = new PackFiles(mkdtempSync(join(tmpdir(), 'fjord-packs-')), true);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(packs.dir, { recursive: true });
  held.holdNext = true;
  const first = settledState(packs.append([Buffer.from('first')], 5));
  await until(() => held.release !== null); // the first flush's write is held
  const second = settledState(packs.append([Buffer.from('second')], 6));
  await until(() => held.written === 1); // the second flush's write went through
  for (let i = 0; i < 20; i++) await turn();
  expect(second.done).toBe(false);
  held.release!(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }));
  await until(() => first.done && second.done);
  expect((first.error as Error).message).toMatch(/EIO/);
  expect((second.error as Error).message).toMatch(/EIO/);
  // The next append starts a new pack, and is acknowledged as usual.
  const third = await packs.append([Buffer.from('third')], 5);
  expect(
    readFileSync(packs.pathOf(third.split('.')[0]!))
      .subarray(8)
      .toString(),
  ).toBe('third');
});

it('acknowledges entries of overlapping flushes once the earlier write is done', async () => {
  const packs = new PackFiles(mkdtempSync(join(tmpdir(), 'fjord-packs-')), true);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(packs.dir, { recursive: true });
  held.holdNext = true;
  const first = packs.append([Buffer.from('one')], 3);
  await until(() => held.release !== null);
  const second = settledState(packs.append([Buffer.from('two')], 3));
  await until(() => held.written === 1);
  for (let i = 0; i < 20; i++) await turn();
  expect(second.done).toBe(false);
  held.release!(null);
  const ref = await first;
  await until(() => second.done);
  expect(second.error).toBeNull();
  const file = readFileSync(packs.pathOf(ref.split('.')[0]!));
  expect(file.subarray(8, 11).toString()).toBe('one');
  expect(file.subarray(19, 22).toString()).toBe('two');
});
