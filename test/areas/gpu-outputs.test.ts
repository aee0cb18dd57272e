import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuCatalogue } from '../../src/areas/gpu/catalogue.js';
import { encodePng } from '../../src/areas/gpu/png.js';
import { runReferenceWorker } from '../../src/areas/gpu/reference-worker.js';
import { commandPath } from '../helpers/commands.js';
import { eventually } from '../helpers/eventually.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { HttpsReceiver, signatureValid } from '../helpers/https-receiver.js';

/**
 * GPU outputs and the catalogue: files PUT to signed upload addresses and held to their stated
 * size and type limits, text-to-speech and transcription jobs, a worker process killed in the
 * middle of a job, signed webhooks at a local receiver, and an operator's catalogue file.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let t: TestFjord;
let hooks: HttpsReceiver;
let a: TestCustomer;
let key: string;
let token: string;

beforeAll(async () => {
  hooks = new HttpsReceiver();
  await hooks.listen();
  const catalogue = join(mkdtempSync(join(tmpdir(), 'fjord-gpu-cat-')), 'gpu.json');
  const shipped = new GpuCatalogue();
  writeFileSync(
    catalogue,
    JSON.stringify({
      engines: [
        ...shipped.engines.map((e) => (e.tier_required === 'basic' ? { ...e, tier_required: null } : e)),
        { ...shipped.engine('sdxl')!, engine: 'house-model', name: 'House model', tier_required: null },
      ],
      presets: shipped.presets,
    }),
  );
  t = await TestFjord.create(
    {
      FJORD_API_PORT: '0',
      FJORD_GPU_CATALOGUE: catalogue,
      FJORD_WEBHOOK_ALLOW_PRIVATE: '1',
      FJORD_RATE_LIMITS: JSON.stringify({ gpu: { points: 10_000, duration: 60 } }),
    },
    { fetchImpl: hooks.fetch },
  );
  await t.fjord.start(['api']);
  a = await t.customer();
  key = (await t.kernel.identity.createServiceKey(a.id, 'gpu', 'outputs')).key;
  const w = await t.operator('POST', '/admin/v1/gpu/workers', {
    name: 'outputs',
    engines: ['reference-image', 'reference-video', 'reference-speech', 'whisper-large', 'house-model'],
  });
  expect(w.status, w.text).toBe(201);
  token = w.body.token;
});
afterAll(async () => {
  await t.close();
  await hooks.close();
});

const create = (body: unknown) => t.request('POST', '/v1/gpu/jobs', { key, body });
const job = async (id: string) => (await t.request('GET', `/v1/gpu/jobs/${id}`, { key })).body;
const protocol = (path: string, body: unknown) =>
  t.request('POST', `/v1/gpu/worker${path}`, { headers: { authorization: `Bearer ${token}` }, body });
const put = (url: string, body: Buffer, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'PUT', body, headers });
/** The reference worker, serving one job of `engine`; resolves to the jobs it finished. */
const serveOne = (engine: string) =>
  runReferenceWorker({
    baseUrl: t.kernel.baseUrl(),
    token,
    maxJobs: 1,
    pollSeconds: 0.05,
    engines: [engine],
  });
/** An upload address for `png` as the job's `image.png`. */
const uploadAddress = (jobId: string, png: Buffer) =>
  protocol(`/jobs/${jobId}/uploads`, {
    name: 'image.png',
    content_type: 'image/png',
    size_bytes: png.length,
  });
/** A job of `engine` leased by the test's own worker. */
async function leased(body: Record<string, unknown>, engine: string) {
  const created = await create(body);
  expect(created.status, created.text).toBe(201);
  const lease = await protocol('/lease', { engines: [engine] });
  expect(lease.body.id).toBe(created.body.id);
  return created.body.id as string;
}

describe('GPU outputs', () => {
  it('takes each output by PUT to a signed address, exactly the stated size, and only from the worker holding the job', async () => {
    const id = await leased(
      { type: 'image', engine: 'house-model', inputs: { prompt: 'upload' } },
      'house-model',
    );
    const png = encodePng(16, 9, () => [10, 20, 30]);
    const address = await uploadAddress(id, png);
    expect(address.status, address.text).toBe(201);
    expect(address.body).toMatchObject({ method: 'PUT', headers: { 'content-type': 'image/png' } });
    const url = address.body.upload_url as string;
    // Not the stated size: refused, and nothing is listed.
    expect((await put(url, png.subarray(1))).status).toBe(422);
    expect((await put(url, Buffer.concat([png, png]))).status).toBe(422);
    // Another name with this token, or a forged token: refused.
    expect((await put(url.replace('/image.png?', '/other.png?'), png)).status).toBe(403);
    expect((await put(`${url.slice(0, -4)}AAAA`, png)).status).toBe(403);
    const ok = await put(url, png, { 'content-type': 'image/png' });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await ok.json()).toEqual({ name: 'image.png', size: png.length });
    await protocol(`/jobs/${id}/complete`, { units: 1 });
    const done = await job(id);
    expect(done.status).toBe('completed');
    expect(Buffer.from(await (await fetch(done.output_files.image)).arrayBuffer())).toEqual(png);
    // The job is no longer held: the address stops working.
    expect((await put(url, png)).status).toBe(409);
  });

  it('refuses outputs over their type’s limits: 10 MB of speech, images over 4K', async () => {
    const speech = await leased(
      { type: 'text-to-speech', engine: 'reference-speech', inputs: { text: 'hello' } },
      'reference-speech',
    );
    const big = await protocol(`/jobs/${speech}/uploads`, {
      name: 'audio.wav',
      content_type: 'audio/wav',
      size_bytes: 10 * 2 ** 20 + 1,
    });
    expect(big.status).toBe(413);
    expect(big.body.detail.code).toBe('output_too_large');
    await protocol(`/jobs/${speech}/fail`, { error_message: 'test over' });

    const image = await leased(
      { type: 'image', engine: 'house-model', inputs: { prompt: 'huge' } },
      'house-model',
    );
    const huge = encodePng(4097, 1, () => [0, 0, 0]);
    const address = await uploadAddress(image, huge);
    const r = await put(address.body.upload_url, huge);
    expect(r.status).toBe(422);
    expect(((await r.json()) as { detail: { code: string } }).detail.code).toBe('image_too_large');
  });

  it('runs a text-to-speech job through the reference worker to a WAV, charged per character', async () => {
    const created = await create({
      type: 'text-to-speech',
      engine: 'reference-speech',
      inputs: { text: 'three short words' },
    });
    expect(created.status, created.text).toBe(201);
    expect(await serveOne('reference-speech')).toBe(1);
    const done = await job(created.body.id);
    expect(done.status).toBe('completed');
    const wav = Buffer.from(await (await fetch(done.output_files.audio)).arrayBuffer());
    expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    // Three tones of 0.25 s at 16 kHz, 16-bit.
    expect(wav.readUInt32LE(40)).toBe(3 * 4000 * 2);
  });

  it('fails a transcription whose audio is longer than an hour, and charges the seconds of one within it', async () => {
    const inputs = { audio_url: 'https://media.example.test/talk.mp3' };
    const long = await leased({ type: 'transcription', engine: 'whisper-large', inputs }, 'whisper-large');
    expect((await protocol(`/jobs/${long}/complete`, { units: 3601 })).status).toBe(204);
    expect(await job(long)).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/hour/) });
    const ok = await leased({ type: 'transcription', engine: 'whisper-large', inputs }, 'whisper-large');
    await protocol(`/jobs/${ok}/complete`, { units: 600 });
    expect((await job(ok)).actual_cost).toEqual({ amount: 1.2, currency: 'NOK' });
    const bad = await create({
      type: 'transcription',
      engine: 'whisper-large',
      inputs: { audio_url: 'http://x.test/a' },
    });
    expect(bad.status).toBe(422);
  });

  it('serves the operator’s catalogue file, and refuses worker tokens for engines it does not list', async () => {
    const engines = (await t.request('GET', '/v1/gpu/engines')).body as { engine: string }[];
    expect(engines.map((e) => e.engine)).toContain('house-model');
    const r = await t.operator('POST', '/admin/v1/gpu/workers', { name: 'x', engines: ['no-such-engine'] });
    expect(r.status).toBe(422);
    expect(() => new GpuCatalogue({ engines: [{ engine: 'BAD' }], presets: [] }, 'bad.json')).toThrow(
      /GPU catalogue bad.json: \/engines\/0/,
    );
  });

  it('signs a video job’s webhook so the receiver can check it', async () => {
    const id = await leased(
      {
        type: 'video',
        engine: 'reference-video',
        inputs: { prompt: 'signed', duration_sec: 1 },
        webhook_url: `${hooks.base}/gpu`,
      },
      'reference-video',
    );
    await protocol(`/jobs/${id}/fail`, { error_message: 'no GPU today' });
    await t.kernel.jobs.drain();
    const hook = await eventually(async () => {
      const [received] = hooks.to('/gpu');
      expect(received).toBeDefined();
      return received!;
    }, 10_000);
    expect(hook.json).toMatchObject({ id, status: 'failed', error: 'no GPU today', output: {} });
    expect(signatureValid(hook, await t.kernel.webhooks.secretFor(a.id))).toBe(true);
  });

  it.runIf(commandPath('ffmpeg') !== null)(
    'gives a job back to the queue when its worker process is killed mid-job, for another worker to finish',
    { timeout: 60_000 },
    async () => {
      const created = await create({
        type: 'video',
        engine: 'reference-video',
        inputs: { prompt: 'killed', duration_sec: 1 },
      });
      // The worker's ffmpeg hangs, so the job is mid-render when the process is killed.
      const bin = mkdtempSync(join(tmpdir(), 'fjord-gpu-hang-'));
      writeFileSync(join(bin, 'ffmpeg'), '#!/bin/sh\nexec sleep 120\n');
      chmodSync(join(bin, 'ffmpeg'), 0o755);
      const child = spawn(
        process.execPath,
        [
          join(ROOT, 'bin', 'fjord.js'),
          'gpu-worker',
          '--url',
          t.kernel.baseUrl(),
          '--token',
          token,
          '--engines',
          'reference-video',
        ],
        { stdio: 'ignore', detached: true, env: { ...process.env, PATH: `${bin}:${process.env['PATH']}` } },
      );
      try {
        await eventually(async () => {
          expect(await job(created.body.id)).toMatchObject({ status: 'processing', progress: 10 });
        }, 30_000);
      } finally {
        process.kill(-child.pid!, 'SIGKILL');
      }
      await t.advance(61);
      expect((await job(created.body.id)).status).toBe('queued');
      expect(await serveOne('reference-video')).toBe(1);
      expect(await job(created.body.id)).toMatchObject({ status: 'completed', progress: 100 });
    },
  );
});
