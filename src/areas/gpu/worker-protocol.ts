import type { Readable } from 'node:stream';
import { type Clock, isoOf } from '../../kernel/clock.js';
import type { SecretBox } from '../../kernel/secrets.js';
import type { Store } from '../../kernel/store/store.js';
import type { InternalObjects } from '../storage/service.js';
import {
  type JobType,
  MAX_IMAGE_SIDE,
  MAX_TRANSCRIPTION_SECONDS,
  MAX_VIDEO_SECONDS,
  TYPE_LIMITS,
} from './catalogue.js';
import { gpuErrors } from './errors.js';
import { openLink, sealLink } from './links.js';
import type { GpuJobsTable, GpuWorkersTable } from './migrations.js';
import { GpuRepo } from './repo.js';
import type { GpuService } from './service.js';
import { boundedUpload } from './upload-stream.js';

/** A lease lasts this long; each heartbeat renews it. */
export const LEASE_MS = 60_000;
/** Leases a job may lose (its worker vanished) before it fails. */
export const MAX_ATTEMPTS = 3;
/** How long an upload address works. */
const UPLOAD_LINK_MS = 3600_000;
/** Leases sweep lost leases and overdue jobs at most this often (the clock job sweeps too). */
const SWEEP_EVERY_MS = 1000;
/** A worker's `last_seen_at` is written at most this often while it keeps calling. */
const SEEN_WRITE_MS = 10_000;
const OUTPUT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}\.[a-z0-9]{1,8}$/;

export interface UploadRequest {
  name: string;
  content_type: string;
  size_bytes: number;
}

/**
 * The worker side of the queue: lease, heartbeat, upload, complete, fail — and the sweep that
 * takes jobs back from workers that went silent and fails jobs past their type's time limit.
 * A worker reaches only the jobs it holds; every call checks the lease is still its own.
 */
export class GpuWorkerProtocol {
  private readonly repo: GpuRepo;
  private lastSweep = Number.NEGATIVE_INFINITY;
  private readonly lastSeen = new Map<string, { at: number; engines: string }>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly jobs: GpuService,
    private readonly outputs: InternalObjects,
    private readonly secrets: SecretBox,
    private readonly baseUrl: () => string,
  ) {
    this.repo = GpuRepo.of(store);
  }

  /**
   * Gives the oldest queued job of the engines asked for, leased to it; null when there is none.
   * The token's issued engines bound the list: it may narrow them, and an engine outside them is
   * refused (the worker is the operator's machine, but its token is only as wide as issued).
   */
  async lease(worker: GpuWorkersTable, asked: string[] | undefined) {
    const issued = JSON.parse(worker.engines) as string[];
    const outside = [...new Set(asked ?? [])].filter((e) => !issued.includes(e));
    if (outside.length) throw gpuErrors.engineNotIssued(outside);
    const engines = asked ? [...new Set(asked)] : issued;
    const now = this.clock.nowMs();
    await this.seen(worker.id, now, engines);
    if (now - this.lastSweep >= SWEEP_EVERY_MS) await this.sweep();
    // PostgreSQL hands each worker a different row (FOR UPDATE SKIP LOCKED), so leases run side by
    // side; SQLite has one writer anyway, and its queue lock keeps two leases off the same row.
    const locks = this.store.kind === 'postgres' ? [] : ['gpu:queue'];
    const leased = await this.store.unitOfWork({ locks }, async ({ tx }) => {
      const repo = GpuRepo.over(tx);
      const job = await repo.nextQueued(engines, this.store.kind === 'postgres');
      if (!job) return null;
      const patch = {
        status: 'processing',
        worker_id: worker.id,
        lease_until: now + LEASE_MS,
        attempts: job.attempts + 1,
        started_at: job.started_at ?? now,
        progress: 0,
      };
      await repo.updateJob(job.id, patch, ['queued']);
      return { ...job, ...patch };
    });
    if (!leased) return null;
    return {
      id: leased.id,
      type: leased.type,
      engine: leased.engine,
      preset: leased.preset,
      inputs: JSON.parse(leased.inputs) as Record<string, unknown>,
      lease_expires_at: isoOf(leased.lease_until)!,
      time_limit_seconds: TYPE_LIMITS[leased.type as JobType].timeLimitSeconds,
      max_output_bytes: TYPE_LIMITS[leased.type as JobType].maxOutputBytes,
    };
  }

  /** Renews the lease and records progress; `cancel: true` tells the worker to stop. */
  async heartbeat(worker: GpuWorkersTable, jobId: string, progress: number) {
    const now = this.clock.nowMs();
    await this.seen(worker.id, now, JSON.parse(worker.serving_engines ?? worker.engines));
    const job = await this.repo.jobById(jobId);
    if (!job || job.worker_id !== worker.id) throw gpuErrors.notLeased();
    if (job.status !== 'processing') return { cancel: true, lease_expires_at: null };
    await this.repo.updateJob(
      jobId,
      { progress: Math.max(job.progress, Math.min(99, progress)), lease_until: now + LEASE_MS },
      ['processing'],
    );
    return { cancel: false, lease_expires_at: isoOf(now + LEASE_MS) };
  }

  /** A signed address the worker PUTs one output file to: this job, this name, this size, for an hour. */
  async uploadAddress(worker: GpuWorkersTable, jobId: string, req: UploadRequest) {
    if (!OUTPUT_NAME.test(req.name)) throw gpuErrors.badOutputName();
    const job = await this.held(worker, jobId);
    const max = TYPE_LIMITS[job.type as JobType].maxOutputBytes;
    if (req.size_bytes > max) throw gpuErrors.outputTooLarge(job.type, max);
    const expires = this.clock.nowMs() + UPLOAD_LINK_MS;
    const token = sealLink(this.secrets, {
      k: 'up',
      j: job.id,
      n: req.name,
      e: expires,
      w: worker.id,
      s: req.size_bytes,
      t: req.content_type,
    });
    return {
      name: req.name,
      method: 'PUT' as const,
      upload_url: `${this.baseUrl()}/v1/gpu/uploads/${job.id}/${req.name}?token=${token}`,
      headers: { 'content-type': req.content_type },
      expires_at: isoOf(expires)!,
    };
  }

  /**
   * The PUT to an upload address: the body is streamed into Fjord's object storage, refused
   * unless it is exactly the stated size (and, for a PNG image, at most 4K on each side). The
   * job must still be held by the worker the address was made for.
   */
  async receiveUpload(jobId: string, name: string, token: string, body: Readable, contentLength?: number) {
    const link = openLink(this.secrets, token, 'up', jobId, name, this.clock.nowMs());
    if (!link) throw gpuErrors.uploadLinkInvalid();
    if (contentLength !== undefined && contentLength !== link.s) throw gpuErrors.uploadSize(link.s);
    const job = await this.repo.jobById(jobId);
    if (!job || job.worker_id !== link.w || job.status !== 'processing') throw gpuErrors.notLeased();
    const checked = boundedUpload(body, link.s, job.type === 'image' ? MAX_IMAGE_SIDE : null);
    await this.outputs.put(`${job.id}/${name}`, checked, link.t);
    // Two outputs uploaded at once must both be listed: the list is read and written under the job's lock.
    await this.store.unitOfWork({ locks: [`gpu:job:${job.id}`] }, async ({ tx }) => {
      const repo = GpuRepo.over(tx);
      const now = await repo.jobById(job.id);
      const names = new Set([...(JSON.parse(now?.outputs ?? '[]') as string[]), name]);
      await repo.updateJob(job.id, { outputs: JSON.stringify([...names]) });
    });
    return { name, size: link.s };
  }

  /**
   * `units`: images made, seconds of video, characters spoken, or seconds of audio transcribed
   * (default: what the job asked for); the actual cost is units × the engine's price.
   */
  async complete(worker: GpuWorkersTable, jobId: string, units: number | undefined) {
    const job = await this.held(worker, jobId);
    const asked = askedUnits(job);
    const used = units ?? asked;
    if (job.type === 'transcription' && used > MAX_TRANSCRIPTION_SECONDS)
      return this.finish(job, `The audio is longer than the ${MAX_TRANSCRIPTION_SECONDS / 3600} hour limit.`);
    if (job.type === 'video' && used > MAX_VIDEO_SECONDS)
      return this.finish(job, `The video is longer than the ${MAX_VIDEO_SECONDS} s limit.`);
    const moved = await this.repo.updateJob(
      job.id,
      {
        status: 'completed',
        progress: 100,
        completed_at: this.clock.nowMs(),
        lease_until: null,
        actual_cost: this.jobs.costOf(job.engine, used, job.currency),
      },
      ['processing'],
    );
    if (moved) await this.jobs.notify((await this.repo.jobById(job.id))!);
  }

  async fail(worker: GpuWorkersTable, jobId: string, message: string) {
    await this.finish(await this.held(worker, jobId), message.slice(0, 1000));
  }

  /** Leases that ran out go back to the queue (or fail after MAX_ATTEMPTS); jobs past their time limit fail. */
  async sweep(): Promise<number> {
    const now = this.clock.nowMs();
    this.lastSweep = now;
    let changed = 0;
    for (const job of await this.repo.processing()) {
      const limit = TYPE_LIMITS[job.type as JobType].timeLimitSeconds * 1000;
      if (job.started_at !== null && now - job.started_at > limit) {
        await this.finish(
          job,
          `Processing took longer than the ${limit / 1000} s limit of ${job.type} jobs.`,
        );
        changed++;
      } else if ((job.lease_until ?? 0) < now) {
        if (job.attempts >= MAX_ATTEMPTS)
          await this.finish(job, `The job lost its worker ${job.attempts} times.`);
        else
          await this.repo.updateJob(
            job.id,
            { status: 'queued', worker_id: null, lease_until: null, progress: 0 },
            ['processing'],
          );
        changed++;
      }
    }
    return changed;
  }

  /**
   * Records that a worker called, with the engines it serves. A worker polling an empty queue
   * calls often; its row is written at most every 10 s (or when its engines change), which keeps
   * `available` (seen in the last minute) true without a write per poll.
   */
  private async seen(workerId: string, now: number, engines: string[]) {
    const key = engines.join(',');
    const last = this.lastSeen.get(workerId);
    if (last && last.engines === key && now - last.at < SEEN_WRITE_MS && now >= last.at) return;
    await this.repo.touchWorker(workerId, now, engines);
    this.lastSeen.set(workerId, { at: now, engines: key });
  }

  private async held(worker: GpuWorkersTable, jobId: string): Promise<GpuJobsTable> {
    const job = await this.repo.jobById(jobId);
    if (!job || job.worker_id !== worker.id || job.status !== 'processing') throw gpuErrors.notLeased();
    return job;
  }

  private async finish(job: GpuJobsTable, message: string) {
    const moved = await this.repo.updateJob(
      job.id,
      {
        status: 'failed',
        error_message: message,
        completed_at: this.clock.nowMs(),
        lease_until: null,
        cancel_requested: 1,
      },
      ['processing', 'queued'],
    );
    if (moved) await this.jobs.notify((await this.repo.jobById(job.id))!);
  }
}

/** What the job asked for, in its engine's unit (transcription: nothing until the worker says). */
function askedUnits(job: GpuJobsTable): number {
  const inputs = JSON.parse(job.inputs) as Record<string, unknown>;
  switch (job.type as JobType) {
    case 'image':
      return 1;
    case 'video':
      return inputs['duration_sec'] as number;
    case 'text-to-speech':
      return (inputs['text'] as string).length;
    case 'transcription':
      return 0;
  }
}
