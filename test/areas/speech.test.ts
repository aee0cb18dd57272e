import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageService } from '../../src/areas/storage/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { clipDir, curlUpload, noAudio, speak, wordAccuracy } from '../helpers/speech.js';

/**
 * Transcription jobs through the API, on both stores: create, upload with curl to the presigned
 * address, upload-complete, the durable job with the real recogniser, exports, expiry, delete.
 * (Accuracy per container is measured in test/e2e/speech-accuracy.test.ts.)
 */
const SENTENCE = 'the quick brown fox jumps over the lazy dog';
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let dir: string;
let wav: string;

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_S3_PORT: '0' });
  await t.fjord.start(['s3']);
  a = await t.customer();
  b = await t.customer();
  dir = clipDir();
  wav = speak(dir, SENTENCE, 'wav');
});
afterAll(() => t.close());

const as = (c: TestCustomer) => ({ bearer: c.pat });
const create = (c: TestCustomer, file: string, extra: Record<string, unknown> = {}) =>
  t.request('POST', '/v1/transcript/jobs', {
    ...as(c),
    body: { filename: 'clip', content_type: 'audio/wav', file_size_bytes: statSync(file).size, ...extra },
  });
const complete = (c: TestCustomer, id: string) =>
  t.request('POST', `/v1/transcript/jobs/${id}/upload-complete`, { ...as(c), body: {} });
const uploads = () => (t.fjord.areas.get('storage')!.service as StorageService).internalBucket('speech');

describe('a job from upload to exports', () => {
  let jobId: string;

  it('creates a job with a presigned upload address, and checks size and language', async () => {
    const r = await create(a, wav);
    expect(r.status).toBe(201);
    expect(r.body.upload_expires_in).toBe(3600);
    expect(r.body.upload_url).toMatch(/X-Amz-Signature=/);
    jobId = r.body.job_id;
    const big = await create(a, wav, { file_size_bytes: 2 * 1024 ** 3 + 1 });
    expect(big.status).toBe(422);
    expect(big.body.detail.code).toBe('file_too_large');
    expect((await create(a, wav, { language: 'english' })).status).toBe(422);
    // Not uploaded yet: 422, and the job stays created.
    const early = await complete(a, jobId);
    expect(early.status).toBe(422);
    expect(early.body.detail.code).toBe('file_not_found');
    expect(await curlUpload(r.body.upload_url, wav)).toBe(200);
  });

  it('queues once on upload-complete, idempotently, and recognises the words in order', async () => {
    const first = await complete(a, jobId);
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('queued');
    const again = await complete(a, jobId);
    expect(again.body.status).toBe('queued');
    await t.kernel.jobs.drain();
    const r = await t.request('GET', `/v1/transcript/jobs/${jobId}`, as(a));
    expect(r.body.status).toBe('ready');
    expect(r.body.language).toBe('en');
    expect(r.body.audio_duration_sec).toBeGreaterThan(2);
    expect(r.body.processing_time_ms).toBeGreaterThan(0);
    const words = r.body.segments.flatMap((s: { words: { word: string; start: number }[] }) => s.words);
    expect(
      wordAccuracy(SENTENCE, words.map((w: { word: string }) => w.word).join(' ')),
    ).toBeGreaterThanOrEqual(0.75);
    const starts = words.map((w: { start: number }) => w.start);
    expect(starts).toEqual([...starts].sort((x, y) => x - y));
    expect(r.body.artifacts.map((x: { format: string }) => x.format).sort()).toEqual(['json', 'txt']);
    // Ready stays ready: upload-complete answers the status, queues nothing.
    expect((await complete(a, jobId)).body.status).toBe('ready');
  });

  it('makes srt and vtt once, keeps their ids, and serves them through expiring addresses', async () => {
    const srt = await t.request('POST', `/v1/transcript/jobs/${jobId}/export`, {
      ...as(a),
      body: { format: 'srt' },
    });
    expect(srt.status).toBe(200);
    const again = await t.request('POST', `/v1/transcript/jobs/${jobId}/export`, {
      ...as(a),
      body: { format: 'srt' },
    });
    expect(again.body.artifact_id).toBe(srt.body.artifact_id);
    for (const format of ['srt', 'vtt']) {
      const e = await t.request('POST', `/v1/transcript/jobs/${jobId}/export`, {
        ...as(a),
        body: { format },
      });
      const url = new URL(e.body.download_url);
      const file = await t.request('GET', `${url.pathname}${url.search}`);
      expect(file.status).toBe(200);
      expect(file.text).toMatch(/fox/);
      expect(file.raw.length).toBe(e.body.size_bytes);
      const path = join(dir, `out.${format}`);
      writeFileSync(path, file.raw);
      // ffmpeg reads it as subtitles (it fails on a malformed file).
      execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-y', '-i', path, join(dir, `check-${format}.ass`)]);
    }
    const link = new URL(srt.body.download_url);
    await t.advance(3601);
    expect((await t.request('GET', `${link.pathname}${link.search}`)).status).toBe(404);
    expect((await t.request('GET', link.pathname)).status).toBeGreaterThanOrEqual(400);
  });

  it('is invisible to another customer, and delete removes the upload and every artifact', async () => {
    expect((await t.request('GET', `/v1/transcript/jobs/${jobId}`, as(b))).status).toBe(404);
    expect((await t.request('DELETE', `/v1/transcript/jobs/${jobId}`, as(b))).status).toBe(404);
    const before = await uploads().usage();
    expect(before.objects).toBeGreaterThanOrEqual(5);
    const r = await t.request('DELETE', `/v1/transcript/jobs/${jobId}`, as(a));
    expect(r.body).toEqual({ status: 'deleted', job_id: jobId });
    await expect(uploads().get(`jobs/${jobId}/upload`)).rejects.toThrow();
    expect((await uploads().usage()).objects).toBe(before.objects - 5);
    expect((await t.request('GET', `/v1/transcript/jobs/${jobId}`, as(a))).status).toBe(404);
  });
});

it('refuses files without audio with a clear reason', async () => {
  const junk = join(dir, 'junk.bin');
  writeFileSync(junk, randomBytes(4096));
  const cases: [string, RegExp][] = [
    [junk, /not a media file/],
    [noAudio(dir, 'png'), /image/],
    [noAudio(dir, 'silent-mp4'), /no audio stream/],
  ];
  for (const [file, reason] of cases) {
    const r = await create(a, file);
    expect(await curlUpload(r.body.upload_url, file)).toBe(200);
    const c = await complete(a, r.body.job_id);
    expect(c.status).toBe(422);
    expect(c.body.detail.code).toBe('no_audio_stream');
    expect(c.body.detail.message).toMatch(reason);
  }
});

it('fails a job in a language the recogniser lacks, expires jobs never uploaded, and lists by status', async () => {
  const de = await create(a, wav, { language: 'de' });
  expect(await curlUpload(de.body.upload_url, wav)).toBe(200);
  await complete(a, de.body.job_id);
  const idle = await create(a, wav);
  await t.kernel.jobs.drain();
  const failed = await t.request('GET', `/v1/transcript/jobs/${de.body.job_id}`, as(a));
  expect(failed.body.status).toBe('failed');
  expect(failed.body.error_message).toMatch(/English only/);
  await t.advance(3601);
  const expired = await t.request('GET', `/v1/transcript/jobs/${idle.body.job_id}`, as(a));
  expect(expired.body.status).toBe('expired');
  expect((await complete(a, idle.body.job_id)).status).toBe(422);
  const list = await t.request('GET', '/v1/transcript/jobs', {
    ...as(a),
    query: { status: 'expired', limit: '1' },
  });
  expect(list.body.total).toBeGreaterThanOrEqual(1);
  expect(list.body.jobs).toHaveLength(1);
  expect(list.body.jobs[0].status).toBe('expired');
  expect(list.body.limit).toBe(1);
  expect((await t.request('GET', '/v1/transcript/jobs', as(b))).body.total).toBe(0);
});
