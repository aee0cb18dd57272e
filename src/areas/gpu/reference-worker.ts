import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { referenceImage } from './png.js';
import { toneSequence } from './tones.js';

const run = promisify(execFile);

export interface WorkerOptions {
  /** Fjord's API base URL, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  /** An operator-issued worker token (fjw_…). */
  token: string;
  /** Narrows the engines the token was issued for; left out, the worker leases all of them. */
  engines?: string[];
  /** Seconds between polls when the queue is empty. */
  pollSeconds?: number;
  /** Stop after this many jobs (tests); run forever when left out. */
  maxJobs?: number;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

interface LeasedJob {
  id: string;
  type: string;
  inputs: {
    prompt: string;
    seed?: number;
    aspect_ratio?: string;
    duration_sec?: number;
    text?: string;
    format?: string;
  };
}

/**
 * The reference worker: a client of Fjord's GPU pull protocol (docs/gpu.md) that serves the
 * reference engines. It leases a job, reports progress, renders a deterministic test pattern
 * (PNG), a short test clip (ffmpeg's testsrc, H.264 MP4) or a tone sequence (WAV), PUTs the
 * output to the address Fjord signs for it and completes the job. A worker for a real engine is
 * the same loop around a model. Returns the jobs it finished.
 */
export async function runReferenceWorker(o: WorkerOptions): Promise<number> {
  // Left out, the lease takes every engine the operator issued the token for.
  const engines = o.engines;
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${o.baseUrl}/v1/gpu/worker${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: o.signal,
    });
    if (res.status >= 400) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? null : ((await res.json()) as Record<string, unknown>);
  };
  let done = 0;
  while (!o.signal?.aborted && (o.maxJobs === undefined || done < o.maxJobs)) {
    const job = (await call('/lease', engines ? { engines } : {})) as LeasedJob | null;
    if (!job) {
      await new Promise((r) => setTimeout(r, (o.pollSeconds ?? 2) * 1000));
      continue;
    }
    o.log?.(`leased ${job.id} (${job.type})`);
    const beat = async (progress: number) =>
      ((await call(`/jobs/${job.id}/heartbeat`, { progress })) as { cancel: boolean }).cancel;
    try {
      if (await beat(10)) continue;
      const output = await render(job);
      if (await beat(90)) continue;
      const address = (await call(`/jobs/${job.id}/uploads`, {
        name: output.name,
        content_type: output.contentType,
        size_bytes: output.bytes.length,
      })) as { upload_url: string; headers: Record<string, string> };
      const put = await fetch(address.upload_url, {
        method: 'PUT',
        headers: address.headers,
        body: output.bytes,
        signal: o.signal,
      });
      if (!put.ok) throw new Error(`upload: ${put.status} ${await put.text()}`);
      await call(`/jobs/${job.id}/complete`, { units: output.units });
      done++;
      o.log?.(`completed ${job.id}`);
    } catch (err) {
      o.log?.(`job ${job.id} failed: ${(err as Error).message}`);
      await call(`/jobs/${job.id}/fail`, { error_message: (err as Error).message.slice(0, 900) }).catch(
        () => {},
      );
    }
  }
  return done;
}

async function render(
  job: LeasedJob,
): Promise<{ name: string; bytes: Buffer; contentType: string; units: number }> {
  const i = job.inputs;
  switch (job.type) {
    case 'image':
      return {
        name: 'image.png',
        bytes: referenceImage(i.prompt, i.seed ?? 0, i.aspect_ratio ?? '16:9'),
        contentType: 'image/png',
        units: 1,
      };
    case 'video':
      return {
        name: 'video.mp4',
        bytes: await testClip(i.duration_sec ?? 5),
        contentType: 'video/mp4',
        units: i.duration_sec ?? 5,
      };
    case 'text-to-speech': {
      const wav = toneSequence(i.text ?? '');
      return i.format === 'mp3'
        ? {
            name: 'audio.mp3',
            bytes: await toMp3(wav),
            contentType: 'audio/mpeg',
            units: (i.text ?? '').length,
          }
        : { name: 'audio.wav', bytes: wav, contentType: 'audio/wav', units: (i.text ?? '').length };
    }
    default:
      throw new Error(`the reference worker does not serve ${job.type} jobs`);
  }
}

/** A test clip of `seconds` from ffmpeg's test source: small, deterministic, a valid MP4. */
async function testClip(seconds: number): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-gpu-'));
  try {
    const out = join(dir, 'clip.mp4');
    await run('ffmpeg', [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=320x180:rate=10:duration=${seconds}`,
      '-pix_fmt',
      'yuv420p',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-movflags',
      '+faststart',
      '-y',
      out,
    ]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** ffmpeg's MP3 encoding of a WAV file. */
async function toMp3(wav: Buffer): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-gpu-'));
  try {
    await writeFile(join(dir, 'in.wav'), wav);
    await run('ffmpeg', [
      '-v',
      'error',
      '-i',
      join(dir, 'in.wav'),
      '-codec:a',
      'libmp3lame',
      '-y',
      join(dir, 'out.mp3'),
    ]);
    return await readFile(join(dir, 'out.mp3'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
