import { expect, it } from 'vitest';
import { GroupCommit } from '../../src/kernel/store/group-commit.js';

it('shares one write among submissions that arrive together, up to the batch size', async () => {
  const writes: number[][] = [];
  const g = new GroupCommit<number>(async (items) => void writes.push(items), 3);
  await Promise.all([g.submit([1]), g.submit([2, 3]), g.submit([4]), g.submit([5])]);
  expect(writes).toEqual([
    [1, 2, 3],
    [4, 5],
  ]);
});

it('writes each submission of a failed shared write again on its own: only the bad one fails', async () => {
  const writes: number[][] = [];
  const g = new GroupCommit<number>(async (items) => {
    writes.push(items);
    if (items.includes(13)) throw new Error('bad item');
  }, 100);
  const results = await Promise.allSettled([g.submit([1]), g.submit([13]), g.submit([2])]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect(writes).toEqual([[1, 13, 2], [1], [13], [2]]);
});
