import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReferenceWorker } from '../../src/areas/gpu/reference-worker.js';
import { commandPath } from '../helpers/commands.js';
import { eventually } from '../helpers/eventually.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';

/**
 * GPU jobs end to end: the queue and its limits through the API, and the pull protocol served
 * by the reference worker over HTTP — lease, progress, outputs in Fjord's object storage,
 * signed downloads — plus leases lost on the clock, cancellation and time limits.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let t: TestFjord;
let a: TestCustomer;
let key: string;
let workerToken: string;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_RATE_LIMITS: JSON.stringify({ gpu: { points: 10_000, duration: 60 } }),
  });
  await t.fjord.start(['api']);
  a = await t.customer();
  key = (await t.kernel.identity.createServiceKey(a.id, 'gpu', 'renderer')).key;
  const w = await t.operator('POST', '/admin/v1/gpu/workers', {
    name: 'ref-1',
    engines: ['reference-image', 'reference-video'],
  });
  expect(w.status).toBe(201);
  workerToken = w.body.token;
});
afterAll(() => t.close());

const worker = (maxJobs: number, token = workerToken) =>
  runReferenceWorker({ baseUrl: t.kernel.baseUrl(), token, maxJobs, pollSeconds: 0.05 });
const create = (body: unknown, k = key) => t.request('POST', '/v1/gpu/jobs', { key: k, body });
/** The bytes behind one of a completed job's `output_files`. */
const download = async (job: { output_files: Record<string, string> }, name: string) =>
  Buffer.from(await (await fetch(job.output_files[name]!)).arrayBuffer());
async function durationOf(mp4: Buffer): Promise<number> {
  const file = join(mkdtempSync(join(tmpdir(), 'fjord-gpu-test-')), 'v.mp4');
  writeFileSync(file, mp4);
  const { stdout } = await promisify(execFile)('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'format=duration',
    '-of',
    'csv=p=0',
    file,
  ]);
  return Number(stdout);
}
const protocol = (path: string, body: unknown, token = workerToken) =>
  t.request('POST', `/v1/gpu/worker${path}`, { headers: { authorization: `Bearer ${token}` }, body });

describe('GPU jobs', () => {
  it('lists engines, presets and prices without credentials; an engine is available once a worker calls', async () => {
    const before = (await t.request('GET', '/v1/gpu/engines')).body as {
      engine: string;
      available: boolean;
    }[];
    expect(before.find((e) => e.engine === 'reference-image')).toMatchObject({
      available: false,
      tier_required: null,
      type: 'image',
    });
    await protocol('/lease', { engines: ['reference-image'] });
    const after = (await t.request('GET', '/v1/gpu/engines')).body as {
      engine: string;
      available: boolean;
    }[];
    expect(after.find((e) => e.engine === 'reference-image')!.available).toBe(true);
    expect(after.find((e) => e.engine === 'sdxl')!.available).toBe(false);
    expect((await t.request('GET', '/v1/gpu/presets')).body.length).toBeGreaterThan(0);
    const prices = (await t.request('GET', '/v1/gpu/pricing')).body as { engine: string; currency: string }[];
    expect(new Set(prices.filter((p) => p.engine === 'sdxl').map((p) => p.currency))).toEqual(
      new Set(['NOK', 'SEK', 'DKK', 'EUR', 'USD']),
    );
  });

  it('says why a queued job waits while no worker serves its engine', async () => {
    // No worker serves reference-speech here; reference-image has a worker since the test above.
    const waiting = await create({
      type: 'text-to-speech',
      engine: 'reference-speech',
      inputs: { text: 'hi' },
    });
    expect(waiting.status, waiting.text).toBe(201);
    expect(waiting.body.waiting_reason).toMatch(/No worker serves the engine reference-speech/);
    const served = await create({ type: 'image', engine: 'reference-image', inputs: { prompt: 'x' } });
    expect(served.body).toMatchObject({ status: 'queued', waiting_reason: null });
    const listed = (await t.request('GET', '/v1/gpu/jobs', { key })).body as {
      id: string;
      waiting_reason: unknown;
    }[];
    expect(listed.find((j) => j.id === waiting.body.id)!.waiting_reason).toEqual(expect.any(String));
    for (const id of [waiting.body.id, served.body.id])
      expect((await t.request('DELETE', `/v1/gpu/jobs/${id}`, { key })).status).toBeLessThan(300);
    expect(
      (await t.request('GET', `/v1/gpu/jobs/${waiting.body.id}`, { key })).body.waiting_reason,
    ).toBeNull();
  });

  it('runs an image job through the reference worker to a downloadable PNG of the asked aspect ratio', async () => {
    const job = await create({
      type: 'image',
      engine: 'reference-image',
      inputs: { prompt: 'a fjord at dawn', aspect_ratio: '9:16', seed: 7 },
    });
    expect(job.status, job.text).toBe(201);
    expect(job.body).toMatchObject({
      status: 'queued',
      progress: 0,
      output_files: {},
      estimated_cost: { amount: 0, currency: 'NOK' },
      actual_cost: null,
    });
    expect(await worker(1)).toBe(1);
    const done = await t.request('GET', `/v1/gpu/jobs/${job.body.id}`, { key });
    expect(done.body).toMatchObject({
      status: 'completed',
      progress: 100,
      actual_cost: { amount: 0, currency: 'NOK' },
    });
    const res = await fetch(done.body.output_files.image);
    expect(res.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await res.arrayBuffer());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([288, 512]);
    // The link opens that one file, for an hour.
    const url = new URL(done.body.output_files.image);
    expect((await fetch(url.href.replace('/image.png?', '/other.png?'))).status).toBe(404);
    await t.advance(3601);
    expect((await fetch(url)).status).toBe(404);
  });

  it.runIf(commandPath('ffprobe') !== null)(
    'is served by `fjord gpu-worker` running as its own process: a PNG of the asked aspect ratio and an MP4 of the asked duration',
    { timeout: 60_000 },
    async () => {
      const image = await create({
        type: 'image',
        engine: 'reference-image',
        inputs: { prompt: 'separate process', aspect_ratio: '4:5' },
      });
      const video = await create({
        type: 'video',
        engine: 'reference-video',
        inputs: { prompt: 'separate process', duration_sec: 3 },
      });
      const child = spawn(
        process.execPath,
        [join(ROOT, 'bin', 'fjord.js'), 'gpu-worker', '--url', t.kernel.baseUrl(), '--token', workerToken],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      try {
        await eventually(async () => {
          expect(out).toContain(`completed ${image.body.id}`);
          expect(out).toContain(`completed ${video.body.id}`);
        }, 30_000);
      } finally {
        child.kill('SIGTERM');
      }
      const png = await download(
        (await t.request('GET', `/v1/gpu/jobs/${image.body.id}`, { key })).body,
        'image',
      );
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([410, 512]);
      const mp4 = await download(
        (await t.request('GET', `/v1/gpu/jobs/${video.body.id}`, { key })).body,
        'video',
      );
      expect(await durationOf(mp4)).toBeCloseTo(3, 0);
    },
  );

  it.runIf(commandPath('ffprobe') !== null)(
    'runs a video job to an MP4 of the asked duration',
    { timeout: 60_000 },
    async () => {
      const job = await create({
        type: 'video',
        engine: 'reference-video',
        inputs: { prompt: 'waves', duration_sec: 2 },
      });
      expect(job.status, job.text).toBe(201);
      expect(await worker(1)).toBe(1);
      const done = await t.request('GET', `/v1/gpu/jobs/${job.body.id}`, { key });
      expect(await durationOf(await download(done.body, 'video'))).toBeCloseTo(2, 0);
    },
  );

  it('puts a job whose worker vanished back in the queue when its lease runs out, for another worker to finish', async () => {
    const job = await create({ type: 'image', engine: 'reference-image', inputs: { prompt: 'lost' } });
    const leased = await protocol('/lease', { engines: ['reference-image'] });
    expect(leased.body.id).toBe(job.body.id);
    expect((await t.request('GET', `/v1/gpu/jobs/${job.body.id}`, { key })).body.status).toBe('processing');
    await t.advance(61);
    expect((await t.request('GET', `/v1/gpu/jobs/${job.body.id}`, { key })).body.status).toBe('queued');
    const other = await t.operator('POST', '/admin/v1/gpu/workers', {
      name: 'ref-2',
      engines: ['reference-image'],
    });
    expect(await worker(1, other.body.token)).toBe(1);
    expect((await t.request('GET', `/v1/gpu/jobs/${job.body.id}`, { key })).body.status).toBe('completed');
    // The first worker's late calls are refused: it no longer holds the job.
    expect((await protocol(`/jobs/${job.body.id}/heartbeat`, { progress: 50 })).status).toBe(409);
  });

  it('cancels queued and processing jobs only; a processing job’s worker hears it on its next heartbeat', async () => {
    const queued = await create({ type: 'image', engine: 'reference-image', inputs: { prompt: 'q' } });
    const c1 = await t.request('DELETE', `/v1/gpu/jobs/${queued.body.id}`, { key });
    expect(c1.body.status).toBe('cancelled');
    const again = await t.request('DELETE', `/v1/gpu/jobs/${queued.body.id}`, { key });
    expect(again.status).toBe(409);
    expect(again.body.detail.code).toBe('job_not_cancellable');

    const running = await create({ type: 'image', engine: 'reference-image', inputs: { prompt: 'p' } });
    await protocol('/lease', { engines: ['reference-image'] });
    expect((await t.request('DELETE', `/v1/gpu/jobs/${running.body.id}`, { key })).body.status).toBe(
      'cancelled',
    );
    expect((await protocol(`/jobs/${running.body.id}/heartbeat`, { progress: 40 })).body.cancel).toBe(true);
  });

  it('fails a job that runs past its time limit', async () => {
    const job = await create({ type: 'image', engine: 'reference-image', inputs: { prompt: 'slow' } });
    await protocol('/lease', { engines: ['reference-image'] });
    for (let i = 0; i < 6; i++) {
      await t.advance(55);
      expect((await protocol(`/jobs/${job.body.id}/heartbeat`, { progress: 10 + i })).status).toBe(200);
    }
    await t.advance(1);
    await t.kernel.jobs.drain();
    const failed = await t.request('GET', `/v1/gpu/jobs/${job.body.id}`, { key });
    expect(failed.body).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/limit/) });
  });

  it('refuses engines above the account’s plan, bad inputs, and webhooks on image jobs', async () => {
    const tier = await create({ type: 'image', engine: 'sdxl', inputs: { prompt: 'x' } });
    expect(tier.status).toBe(403);
    expect(tier.body.detail.code).toBe('tier_required');
    for (const inputs of [{}, { prompt: 'x', aspect_ratio: '3:2' }, { prompt: 'x', extra: 1 }]) {
      const r = await create({ type: 'image', engine: 'reference-image', inputs });
      expect(r.status, JSON.stringify(inputs)).toBe(422);
    }
    const long = await create({
      type: 'video',
      engine: 'reference-video',
      inputs: { prompt: 'x', duration_sec: 31 },
    });
    expect(long.status).toBe(422);
    const hook = await create({
      type: 'image',
      engine: 'reference-image',
      inputs: { prompt: 'x' },
      webhook_url: 'https://example.test/h',
    });
    expect(hook.body.detail.code).toBe('webhook_video_only');
  });

  it('holds the 10 queued-or-processing jobs per key when requests arrive together', async () => {
    const k = (await t.kernel.identity.createServiceKey(a.id, 'gpu', 'burst')).key;
    const { refused } = await expectLimitHolds({
      room: 10,
      attempts: 20,
      send: (i) => create({ type: 'image', engine: 'reference-image', inputs: { prompt: `burst ${i}` } }, k),
      refusal: { status: 429 },
    });
    expect(refused.map((r) => r.body.error.code)).toEqual(Array(10).fill('concurrent_job_limit'));
  });

  it('sends a video job’s final state to its webhook', async () => {
    const job = await create({
      type: 'video',
      engine: 'reference-video',
      inputs: { prompt: 'hook', duration_sec: 1 },
      webhook_url: 'https://hooks.example.test/gpu',
    });
    await protocol('/lease', { engines: ['reference-video'] });
    await protocol(`/jobs/${job.body.id}/fail`, { error_message: 'out of memory' });
    const { deliveries } = await t.kernel.webhooks.listDeliveries(a.id);
    expect(deliveries.find((d) => d.event_type === 'gpu.job.failed')).toMatchObject({
      url: 'https://hooks.example.test/gpu',
    });
  });

  it('keeps jobs to their customer, and worker routes to workers', async () => {
    const b = await t.customer();
    const mine = (await t.request('GET', '/v1/gpu/jobs', { key })).body as { id: string }[];
    expect(mine.length).toBeGreaterThan(0);
    expect((await t.request('GET', `/v1/gpu/jobs/${mine[0]!.id}`, { key: b.pat })).status).toBe(404);
    expect((await t.request('GET', '/v1/gpu/jobs', { key: b.pat })).body).toEqual([]);
    expect(
      (await protocol('/lease', { engines: ['reference-image'] }, 'fjw_notARealWorkerToken000000000000'))
        .status,
    ).toBe(401);
    expect(
      (await t.request('POST', '/v1/gpu/worker/lease', { key: a.pat, body: { engines: ['x'] } })).status,
    ).toBe(401);
    // A worker token is not a customer's credential: it reads no job list, no job.
    const asWorker = { headers: { authorization: `Bearer ${workerToken}` } };
    expect((await t.request('GET', '/v1/gpu/jobs', asWorker)).status).toBe(401);
    expect((await t.request('GET', `/v1/gpu/jobs/${mine[0]!.id}`, asWorker)).status).toBe(401);
  });

  it('leases only the engines a worker token was issued for: a lease may narrow them, never widen or rewrite them', async () => {
    const w = await t.operator('POST', '/admin/v1/gpu/workers', {
      name: 'img-only',
      engines: ['reference-image'],
    });
    const token = w.body.token as string;
    const video = await create({ type: 'video', engine: 'reference-video', inputs: { prompt: 'not yours' } });
    expect(video.status, video.text).toBe(201);
    // Asking for an engine outside the token is refused, whatever else the list holds.
    for (const engines of [['reference-video'], ['reference-image', 'reference-video']]) {
      const r = await protocol('/lease', { engines }, token);
      expect(r.status, r.text).toBe(403);
      expect(r.body.detail).toMatchObject({ code: 'engine_not_issued' });
    }
    // Without a list, or with the issued one, it gets image jobs only: the video job stays queued.
    // (Earlier tests may have left image jobs queued: they are leased and failed here.)
    for (const body of [{}, { engines: ['reference-image'] }]) {
      for (;;) {
        const r = await protocol('/lease', body, token);
        if (r.status === 204) break;
        expect(r.body.engine).toBe('reference-image');
        expect((await protocol(`/jobs/${r.body.id}/fail`, { error_message: 'test' }, token)).status).toBe(
          204,
        );
      }
    }
    expect((await t.request('GET', `/v1/gpu/jobs/${video.body.id}`, { key })).body.status).toBe('queued');
    // What the operator issued is unchanged by the worker's calls.
    const listed = (await t.operator('GET', '/admin/v1/gpu/workers')).body as {
      id: string;
      engines: string[];
    }[];
    expect(listed.find((x) => x.id === w.body.id)!.engines).toEqual(['reference-image']);
    // A token issued for both engines may narrow to one, and the other engine's job waits.
    const image = await create({ type: 'image', engine: 'reference-image', inputs: { prompt: 'narrow' } });
    const narrowed = await protocol('/lease', { engines: ['reference-image'] });
    expect(narrowed.body).toMatchObject({ id: image.body.id, engine: 'reference-image' });
    expect((await protocol(`/jobs/${image.body.id}/fail`, { error_message: 'test' })).status).toBe(204);
    expect(await worker(1)).toBe(1);
    expect((await t.request('GET', `/v1/gpu/jobs/${video.body.id}`, { key })).body.status).toBe('completed');
  });
});
