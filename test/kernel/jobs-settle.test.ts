import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestFjord } from '../helpers/fjord.js';
import { latch } from '../helpers/latch.js';

/**
 * The emulator's clock advance answers once every job that came due has finished, also the ones
 * another drain of the process (its background worker) took before the advance could.
 */
let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create({ FJORD_API_PORT: '0' });
});
afterAll(() => t.close());

it('answers a clock advance after the due jobs another drain took first have finished', async () => {
  const kind = 'test.settle.held';
  const order: string[] = [];
  const started = latch();
  const gate = latch();
  t.kernel.jobs.register(kind, {
    run: async () => {
      started.open();
      await gate.opened;
      order.push('job finished');
    },
  });
  await t.kernel.jobs.enqueue(kind, {}, { delaySeconds: 60 });
  await t.kernel.clockStore.advance(60);
  // Another drain (as the worker's would) takes the job and holds it.
  const worker = t.kernel.jobs.drain();
  await started.opened;
  const advanced = t.advance(0).then((r) => {
    order.push('advance answered');
    return r;
  });
  // Long enough for an advance that does not wait to answer first.
  await new Promise((r) => setTimeout(r, 300));
  gate.open();
  expect((await advanced).jobs_run).toBe(0);
  expect(await worker).toBeGreaterThanOrEqual(1); // with the schedules the minute made due
  expect(order).toEqual(['job finished', 'advance answered']);
});
