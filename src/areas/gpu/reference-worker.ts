import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { referenceImage } from './png.js';

const run = promisify(execFile);

export interface WorkerOptions {
  /** Fjord's API base URL, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  /** An operator-issued worker token (fjw_…). */
  token: string;
  engines?: string[];
  /** Seconds between polls when the queue is empty. */
  pollSeconds?: number;
  /** Stop after this many jobs (tests); run forever when left out. */
  maxJobs?: number;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

export const REFERENCE_ENGINES = ['reference-image', 'reference-video'];

/**
 * The reference worker: a client of Fjord's GPU pull protocol (docs/gpu.md) that serves the
 * reference engines. It leases a job, reports progress, renders a deterministic test pattern
 * (PNG) or a short test clip (ffmpeg's testsrc, H.264 MP4), uploads the output and completes the
 * job. A worker for a real engine is the same loop around a model. Returns the jobs it finished.
 */
export async function runReferenceWorker(o: WorkerOptions): Promise<number> {
  const engines = o.engines ?? REFERENCE_ENGINES;
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
    const job = (await call('/lease', { engines })) as {
      id: string;
      type: string;
      inputs: { prompt: string; seed?: number; aspect_ratio?: string; duration_sec?: number };
    } | null;
    if (!job) {
      await new Promise((r) => setTimeout(r, (o.pollSeconds ?? 2) * 1000));
      continue;
    }
    o.log?.(`leased ${job.id} (${job.type})`);
    const beat = async (progress: number) =>
      ((await call(`/jobs/${job.id}/heartbeat`, { progress })) as { cancel: boolean }).cancel;
    try {
      if (await beat(10)) continue;
      const { name, bytes, contentType, units } =
        job.type === 'image'
          ? {
              name: 'image.png',
              bytes: referenceImage(
                job.inputs.prompt,
                job.inputs.seed ?? 0,
                job.inputs.aspect_ratio ?? '16:9',
              ),
              contentType: 'image/png',
              units: 1,
            }
          : {
              name: 'video.mp4',
              bytes: await testClip(job.inputs.duration_sec ?? 5),
              contentType: 'video/mp4',
              units: job.inputs.duration_sec ?? 5,
            };
      if (await beat(90)) continue;
      await call(`/jobs/${job.id}/outputs/${name}`, {
        content_base64: bytes.toString('base64'),
        content_type: contentType,
      });
      await call(`/jobs/${job.id}/complete`, { units });
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
