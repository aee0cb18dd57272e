// GPU queue overhead: jobs leased and completed per second by 8 no-op workers, and the time from
// create to lease (p50, p99), against the kernel's own job queue running as many no-op jobs in
// the same run (the floor of "a row in, a row claimed, a row done" on this store).
//
//   npm run bench:gpu [-- --jobs 400 --workers 8]
//   FJORD_TEST_STORE=postgres FJORD_TEST_DATABASE_URL=postgres://… npm run bench:gpu
//
// Workers call the GPU service directly (lease, heartbeat, complete), so the figure is the
// queue's cost, not HTTP's.
import { parseArgs } from 'node:util';
import type { GpuService } from '../src/areas/gpu/service.js';
import { TestFjord } from '../test/helpers/fjord.js';

const { values: args } = parseArgs({
  options: { jobs: { type: 'string', default: '400' }, workers: { type: 'string', default: '8' } },
});
const JOBS = Number(args.jobs);
const WORKERS = Number(args.workers);

const pct = (v: number[], p: number) =>
  [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor((p / 100) * v.length))]!;

const t = await TestFjord.create({
  FJORD_LOG_LEVEL: 'fatal',
  FJORD_LIMITS: JSON.stringify({ 'gpu.concurrent_jobs_per_key': null }),
  FJORD_RATE_LIMITS: JSON.stringify({ gpu: { points: 100_000_000, duration: 60 } }),
});
try {
  const gpu = t.fjord.areas.get('gpu')!.service as GpuService;
  const c = await t.customer();
  const key = (await t.kernel.identity.createServiceKey(c.id, 'gpu', 'bench')).key;
  const workers = await Promise.all(
    Array.from({ length: WORKERS }, async (_, i) => {
      const w = await t.operator('POST', '/admin/v1/gpu/workers', {
        name: `bench-${i}`,
        engines: ['reference-image'],
      });
      return (await gpu.repo.workerByHash(
        (await import('../src/kernel/secrets.js')).hashToken(w.body.token),
      ))!;
    }),
  );
  const created = new Map<string, number>();
  const waits: number[] = [];
  for (let i = 0; i < JOBS; i++) {
    const r = await t.request('POST', '/v1/gpu/jobs', {
      key,
      body: { type: 'image', engine: 'reference-image', inputs: { prompt: `b${i}` } },
    });
    created.set(r.body.id, performance.now());
  }
  const t0 = performance.now();
  let done = 0;
  await Promise.all(
    workers.map(async (w) => {
      for (;;) {
        const job = await gpu.worker.lease(w, ['reference-image']);
        if (!job) return;
        waits.push(performance.now() - created.get(job.id)!);
        await gpu.worker.heartbeat(w, job.id, 50);
        await gpu.worker.complete(w, job.id, 1);
        done++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const gpuRate = done / seconds;

  // Create → lease on an idle queue: workers poll every millisecond, jobs arrive one at a time.
  const idleWaits: number[] = [];
  const sent = new Map<string, number>();
  let stop = false;
  const pollers = workers.map(async (w) => {
    while (!stop) {
      const job = await gpu.worker.lease(w, ['reference-image']);
      if (!job) {
        await new Promise((r) => setTimeout(r, 1));
        continue;
      }
      idleWaits.push(performance.now() - sent.get(job.id)!);
      await gpu.worker.complete(w, job.id, 1);
    }
  });
  for (let i = 0; i < Math.min(JOBS, 200); i++) {
    const at = performance.now();
    const r = await t.request('POST', '/v1/gpu/jobs', {
      key,
      body: { type: 'image', engine: 'reference-image', inputs: { prompt: `idle ${i}` } },
    });
    sent.set(r.body.id, at);
    while (idleWaits.length <= i) await new Promise((r) => setTimeout(r, 1));
  }
  stop = true;
  await Promise.all(pollers);

  // The reference: the kernel's job queue, the same number of no-op jobs.
  t.kernel.jobs.register('bench.noop', { concurrent: true, run: async () => {} });
  for (let i = 0; i < JOBS; i++) await t.kernel.jobs.enqueue('bench.noop', { i });
  const r0 = performance.now();
  const ran = await t.kernel.jobs.drain(10_000);
  const refRate = ran / ((performance.now() - r0) / 1000);

  console.log(`store ${t.kernel.store.kind}, ${JOBS} jobs, ${WORKERS} workers`);
  console.log(`GPU queue: ${gpuRate.toFixed(0)} jobs/s leased, heartbeated and completed`);
  console.log(
    `kernel job queue (reference): ${refRate.toFixed(0)} jobs/s — ratio ${(gpuRate / refRate).toFixed(2)}×`,
  );
  console.log(
    `create → lease, idle queue (workers polling every 1 ms): p50 ${pct(idleWaits, 50).toFixed(1)} ms, p99 ${pct(idleWaits, 99).toFixed(1)} ms`,
  );
  console.log(
    `create → lease, ${JOBS} jobs queued first: p50 ${pct(waits, 50).toFixed(1)} ms, p99 ${pct(waits, 99).toFixed(1)} ms (queue depth)`,
  );
} finally {
  await t.close();
}
