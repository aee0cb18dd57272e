import { expect, it } from 'vitest';
import { KeyedMutex } from '../../src/kernel/keyed-mutex.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

it('runs work of one key one at a time, in order, and other keys alongside; a failure frees the key', async () => {
  const m = new KeyedMutex();
  const log: string[] = [];
  const step = (key: string, name: string, fail = false) =>
    m.run(key, async () => {
      log.push(`${name}:start`);
      await tick();
      log.push(`${name}:end`);
      if (fail) throw new Error(name);
      return name;
    });
  const results = await Promise.allSettled([step('a', 'a1', true), step('a', 'a2'), step('b', 'b1')]);
  expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
  expect(log.indexOf('a1:end')).toBeLessThan(log.indexOf('a2:start'));
  expect(log.indexOf('b1:start')).toBeLessThan(log.indexOf('a1:end'));
});
