import { statSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { clipDir, curlUpload, speak, wordAccuracy } from '../helpers/speech.js';

// fjord-test: one store (sqlite). One pass runs it: the recogniser's accuracy is its subject, not
// the store.

/**
 * The whole pipeline with the real recogniser: flite speech in four containers (one with a video
 * track), uploaded with curl to the presigned address, transcribed, scored as 1 − WER.
 */
const TEXT =
  'the quick brown fox jumps over the lazy dog and the weather today is cold and windy with rain in the evening';
let t: TestFjord;
let c: TestCustomer;
let dir: string;
beforeAll(async () => {
  t = await TestFjord.create({ FJORD_S3_PORT: '0' });
  await t.fjord.start(['s3']);
  c = await t.customer();
  dir = clipDir();
});
afterAll(() => t.close());

it.each(['wav', 'mp3', 'ogg', 'mp4'] as const)(
  'recognises %s at 75 %% word accuracy or better',
  async (ext) => {
    const file = speak(dir, TEXT, ext, ext);
    const r = await t.request('POST', '/v1/transcript/jobs', {
      bearer: c.pat,
      body: {
        filename: `clip.${ext}`,
        content_type: 'application/octet-stream',
        file_size_bytes: statSync(file).size,
      },
    });
    expect(await curlUpload(r.body.upload_url, file)).toBe(200);
    expect(
      (await t.request('POST', `/v1/transcript/jobs/${r.body.job_id}/upload-complete`, { bearer: c.pat }))
        .status,
    ).toBe(200);
    await t.kernel.jobs.drain();
    const job = await t.request('GET', `/v1/transcript/jobs/${r.body.job_id}`, { bearer: c.pat });
    expect(job.body.status).toBe('ready');
    const heard = job.body.segments.map((s: { text: string }) => s.text).join(' ');
    const accuracy = wordAccuracy(TEXT, heard);
    console.log(`speech accuracy ${ext}: ${(accuracy * 100).toFixed(1)} % (${heard})`);
    expect(accuracy).toBeGreaterThanOrEqual(0.75);
  },
);
