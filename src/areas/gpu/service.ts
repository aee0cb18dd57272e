import { Readable } from 'node:stream';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Principal } from '../../kernel/auth/principal.js';
import { type Clock, isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { SecretBox } from '../../kernel/secrets.js';
import type { Store } from '../../kernel/store/store.js';
import type { WebhookService } from '../../kernel/webhooks/webhooks.js';
import type { InternalObjects } from '../storage/service.js';
import { ENGINES, type JobType, PRESETS, planMeets, pricePerUnit, TIME_LIMIT_SECONDS } from './catalogue.js';
import { gpuErrors } from './errors.js';
import type { GpuJobsTable, GpuWorkersTable } from './migrations.js';
import { GpuRepo } from './repo.js';

/** A worker that has not called for a minute no longer makes its engines `available`. */
export const WORKER_SEEN_MS = 60_000;
/** A lease lasts this long; each heartbeat renews it. */
export const LEASE_MS = 60_000;
/** Leases a job may lose (its worker vanished) before it fails. */
export const MAX_ATTEMPTS = 3;
/** How long a download link works. */
const LINK_MS = 3600_000;
const CURRENCY = 'NOK';

export interface JobInput {
  type: JobType;
  engine: string;
  inputs: Record<string, unknown>;
  preset?: string;
  webhook_url?: string;
}

/** GPU jobs: the customer's queue and the pull protocol workers use to serve it. */
export class GpuService {
  readonly repo: GpuRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly webhooks: WebhookService,
    private readonly outputs: InternalObjects,
    private readonly secrets: SecretBox,
    private readonly baseUrl: () => string,
  ) {
    this.repo = GpuRepo.of(store);
  }

  // --- catalogue --------------------------------------------------------------------------------

  async engines() {
    const seenSince = this.clock.nowMs() - WORKER_SEEN_MS;
    const served = new Set(
      (await this.repo.workers())
        .filter((w) => (w.last_seen_at ?? 0) >= seenSince)
        .flatMap((w) => JSON.parse(w.engines) as string[]),
    );
    return ENGINES.map((e) => ({
      engine: e.engine,
      name: e.name,
      description: e.description,
      type: e.type,
      tier_required: e.tier_required,
      available: served.has(e.engine),
    }));
  }

  // --- jobs -------------------------------------------------------------------------------------

  async create(principal: Principal, input: JobInput) {
    const engine = ENGINES.find((e) => e.engine === input.engine);
    if (!engine) throw gpuErrors.unknownEngine(input.engine);
    if (engine.type !== input.type) throw gpuErrors.wrongType(engine.engine, engine.type);
    if (input.preset && !PRESETS.some((p) => p.name === input.preset && p.type === input.type))
      throw gpuErrors.unknownPreset(input.preset, input.type);
    if (input.webhook_url && input.type !== 'video') throw gpuErrors.webhookVideoOnly();
    const inputs = checkInputs(input.type, input.inputs, engine.maxDurationSec ?? 30);
    const plan = (await this.identity.getCustomer(principal.customerId))?.plan ?? 'free';
    if (!planMeets(plan, engine.tier_required))
      throw gpuErrors.tier(engine.engine, engine.tier_required!, plan);
    const units = input.type === 'video' ? (inputs['duration_sec'] as number) : 1;
    const now = this.clock.nowMs();
    const row: GpuJobsTable = {
      id: newId(),
      customer_id: principal.customerId,
      key_id: principal.credential.id,
      type: input.type,
      engine: engine.engine,
      preset: input.preset ?? null,
      inputs: JSON.stringify(inputs),
      webhook_url: input.webhook_url ?? null,
      status: 'queued',
      progress: 0,
      outputs: '[]',
      currency: CURRENCY,
      estimated_cost: round(units * pricePerUnit(engine.engine, CURRENCY)),
      actual_cost: null,
      error_message: null,
      worker_id: null,
      lease_until: null,
      attempts: 0,
      cancel_requested: 0,
      created_at: now,
      started_at: null,
      completed_at: null,
    };
    const max = this.limits.of('gpu.concurrent_jobs_per_key', plan);
    // Counted and queued under the key's lock: the 11th of eleven at once is the one refused.
    await this.store.unitOfWork({ locks: [`gpu:key:${principal.credential.id}`] }, async ({ tx }) => {
      const repo = GpuRepo.over(tx);
      if (max !== null && (await repo.countActiveOfKey(principal.credential.id)) >= max)
        throw gpuErrors.concurrent(max);
      await repo.insertJob(row);
    });
    return this.view(row);
  }

  async list(customerId: string) {
    return Promise.all((await this.repo.jobs(customerId, 100)).map((j) => this.view(j)));
  }

  async get(customerId: string, id: string) {
    const job = await this.repo.job(customerId, id);
    if (!job) throw gpuErrors.notFound();
    return this.view(job);
  }

  /** Queued: cancelled at once. Processing: cancelled now, and its worker learns it on its next heartbeat. */
  async cancel(customerId: string, id: string) {
    const job = await this.repo.job(customerId, id);
    if (!job) throw gpuErrors.notFound();
    const now = this.clock.nowMs();
    const moved = await this.repo.updateJob(
      id,
      { status: 'cancelled', cancel_requested: 1, completed_at: now, lease_until: null },
      ['queued', 'processing'],
    );
    if (!moved) throw gpuErrors.notCancellable((await this.repo.jobById(id))?.status ?? job.status);
    const after = (await this.repo.jobById(id))!;
    await this.notify(after);
    return this.view(after);
  }

  // --- the worker protocol ----------------------------------------------------------------------

  /** Gives the oldest queued job of the worker's engines, leased to it; null when there is none. */
  async lease(worker: GpuWorkersTable, engines: string[]) {
    const now = this.clock.nowMs();
    await this.repo.touchWorker(worker.id, now, engines);
    await this.sweep();
    if (engines.length === 0) return null;
    const leased = await this.store.unitOfWork({ locks: ['gpu:queue'] }, async ({ tx }) => {
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
      time_limit_seconds: TIME_LIMIT_SECONDS[leased.type as JobType],
    };
  }

  /** Renews the lease and records progress; `cancel: true` tells the worker to stop. */
  async heartbeat(worker: GpuWorkersTable, jobId: string, progress: number) {
    const now = this.clock.nowMs();
    await this.repo.touchWorker(worker.id, now, JSON.parse(worker.engines));
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

  async putOutput(worker: GpuWorkersTable, jobId: string, name: string, bytes: Buffer, contentType: string) {
    if (!/^[a-z0-9][a-z0-9._-]{0,63}\.[a-z0-9]{1,8}$/.test(name)) throw gpuErrors.badOutputName();
    const job = await this.held(worker, jobId);
    await this.outputs.put(`${job.id}/${name}`, Readable.from([bytes]), contentType);
    const names = [...new Set([...(JSON.parse(job.outputs) as string[]), name])];
    await this.repo.updateJob(job.id, { outputs: JSON.stringify(names) });
    return { name, size: bytes.length };
  }

  /** `units`: images made, or seconds of video; the actual cost is units × the engine's price. */
  async complete(worker: GpuWorkersTable, jobId: string, units: number | undefined) {
    const job = await this.held(worker, jobId);
    const inputs = JSON.parse(job.inputs) as Record<string, unknown>;
    const used = units ?? (job.type === 'video' ? (inputs['duration_sec'] as number) : 1);
    const now = this.clock.nowMs();
    await this.repo.updateJob(
      job.id,
      {
        status: 'completed',
        progress: 100,
        completed_at: now,
        lease_until: null,
        actual_cost: round(used * pricePerUnit(job.engine, job.currency)),
      },
      ['processing'],
    );
    await this.notify((await this.repo.jobById(job.id))!);
  }

  async fail(worker: GpuWorkersTable, jobId: string, message: string) {
    const job = await this.held(worker, jobId);
    await this.finish(job, 'failed', message.slice(0, 1000));
  }

  /** Leases that ran out go back to the queue (or fail after MAX_ATTEMPTS); jobs past their time limit fail. */
  async sweep(): Promise<number> {
    const now = this.clock.nowMs();
    let changed = 0;
    for (const job of await this.repo.processing()) {
      const limit = TIME_LIMIT_SECONDS[job.type as JobType] * 1000;
      if (job.started_at !== null && now - job.started_at > limit) {
        await this.finish(
          job,
          'failed',
          `Processing took longer than the ${limit / 1000} s limit of ${job.type} jobs.`,
        );
        changed++;
      } else if ((job.lease_until ?? 0) < now) {
        if (job.attempts >= MAX_ATTEMPTS)
          await this.finish(job, 'failed', `The job lost its worker ${job.attempts} times.`);
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

  /** A download link's object, while the link is valid. */
  async download(
    jobId: string,
    name: string,
    token: string,
  ): Promise<{ body: Readable; contentType: string }> {
    let claim: { j: string; n: string; e: number };
    try {
      claim = JSON.parse(this.secrets.open(Buffer.from(token, 'base64url').toString('utf8')));
    } catch {
      throw gpuErrors.linkExpired();
    }
    // The token is sealed with the data key: it names the one file it opens, until it expires.
    if (claim.j !== jobId || claim.n !== name || claim.e < this.clock.nowMs()) throw gpuErrors.linkExpired();
    const body = await this.outputs.get(`${claim.j}/${claim.n}`).catch(() => {
      throw gpuErrors.linkExpired();
    });
    return { body, contentType: contentTypeOf(claim.n) };
  }

  private async held(worker: GpuWorkersTable, jobId: string): Promise<GpuJobsTable> {
    const job = await this.repo.jobById(jobId);
    if (!job || job.worker_id !== worker.id || job.status !== 'processing') throw gpuErrors.notLeased();
    return job;
  }

  private async finish(job: GpuJobsTable, status: 'failed', message: string) {
    const moved = await this.repo.updateJob(
      job.id,
      {
        status,
        error_message: message,
        completed_at: this.clock.nowMs(),
        lease_until: null,
        cancel_requested: 1,
      },
      ['processing', 'queued'],
    );
    if (moved) await this.notify((await this.repo.jobById(job.id))!);
  }

  /** Video jobs with a webhook_url hear of every final state (a Replicate-like payload, docs/gpu.md). */
  private async notify(job: GpuJobsTable) {
    if (!job.webhook_url) return;
    const view = await this.view(job);
    await this.webhooks.send({
      customerId: job.customer_id,
      url: job.webhook_url,
      eventType: `gpu.job.${job.status}`,
      payload: {
        id: job.id,
        type: job.type,
        engine: job.engine,
        status: job.status,
        output: view.output_files,
        error: job.error_message,
        created_at: view.created_at,
        completed_at: view.completed_at,
        metrics: {
          predict_time:
            job.started_at && job.completed_at ? (job.completed_at - job.started_at) / 1000 : null,
        },
      },
    });
  }

  private async view(j: GpuJobsTable) {
    const expires = this.clock.nowMs() + LINK_MS;
    const output_files: Record<string, string> = {};
    if (j.status === 'completed')
      for (const name of JSON.parse(j.outputs) as string[]) {
        const token = Buffer.from(
          this.secrets.seal(JSON.stringify({ j: j.id, n: name, e: expires })),
        ).toString('base64url');
        // The key is the name without its extension: `image` for an image job's `image.png`.
        output_files[name.replace(/\.[^.]+$/, '')] =
          `${this.baseUrl()}/v1/gpu/outputs/${j.id}/${name}?token=${token}`;
      }
    return {
      id: j.id,
      type: j.type,
      engine: j.engine,
      status: j.status,
      progress: j.progress,
      output_files,
      estimated_cost: { amount: j.estimated_cost, currency: j.currency },
      actual_cost: j.actual_cost === null ? null : { amount: j.actual_cost, currency: j.currency },
      error_message: j.error_message,
      created_at: isoOf(j.created_at)!,
      completed_at: isoOf(j.completed_at),
    };
  }
}

const ASPECTS = ['1:1', '4:5', '16:9', '9:16'];

/** Inputs per type, with defaults filled in; anything else in `inputs` is refused. */
function checkInputs(
  type: JobType,
  inputs: Record<string, unknown>,
  maxDuration: number,
): Record<string, unknown> {
  const allowed =
    type === 'image'
      ? ['prompt', 'aspect_ratio', 'negative_prompt', 'seed']
      : ['prompt', 'duration_sec', 'negative_prompt', 'seed'];
  for (const k of Object.keys(inputs))
    if (!allowed.includes(k))
      throw gpuErrors.inputs(`inputs.${k} is not an input of ${type} jobs.`, `/body/inputs/${k}`);
  const prompt = inputs['prompt'];
  if (typeof prompt !== 'string' || prompt.trim() === '' || prompt.length > 4000)
    throw gpuErrors.inputs('inputs.prompt is required: 1-4000 characters.', '/body/inputs/prompt');
  const neg = inputs['negative_prompt'];
  if (neg !== undefined && (typeof neg !== 'string' || neg.length > 4000))
    throw gpuErrors.inputs(
      'inputs.negative_prompt is text of at most 4000 characters.',
      '/body/inputs/negative_prompt',
    );
  const seed = inputs['seed'];
  if (
    seed !== undefined &&
    !(Number.isInteger(seed) && (seed as number) >= 0 && (seed as number) <= 4294967295)
  )
    throw gpuErrors.inputs('inputs.seed is an integer from 0 to 4294967295.', '/body/inputs/seed');
  const out: Record<string, unknown> = {
    prompt,
    seed: seed ?? 0,
    ...(neg !== undefined ? { negative_prompt: neg } : {}),
  };
  if (type === 'image') {
    const aspect = inputs['aspect_ratio'] ?? '16:9';
    if (typeof aspect !== 'string' || !ASPECTS.includes(aspect))
      throw gpuErrors.inputs(
        `inputs.aspect_ratio is one of ${ASPECTS.join(', ')}.`,
        '/body/inputs/aspect_ratio',
      );
    out['aspect_ratio'] = aspect;
  } else {
    const d = inputs['duration_sec'] ?? 5;
    if (typeof d !== 'number' || !Number.isFinite(d) || d <= 0 || d > maxDuration)
      throw gpuErrors.inputs(
        `inputs.duration_sec is more than 0 and at most ${maxDuration} seconds for this engine.`,
        '/body/inputs/duration_sec',
      );
    out['duration_sec'] = d;
  }
  return out;
}

const round = (n: number) => Math.round(n * 10000) / 10000;

function contentTypeOf(name: string): string {
  if (name.endsWith('.png')) return 'image/png';
  if (name.endsWith('.mp4')) return 'video/mp4';
  if (name.endsWith('.webm')) return 'video/webm';
  if (name.endsWith('.jpg') || name.endsWith('.jpeg')) return 'image/jpeg';
  return 'application/octet-stream';
}
