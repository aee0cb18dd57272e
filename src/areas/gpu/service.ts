import type { Readable } from 'node:stream';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Principal } from '../../kernel/auth/principal.js';
import { type Clock, isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { SecretBox } from '../../kernel/secrets.js';
import type { Store } from '../../kernel/store/store.js';
import type { WebhookService } from '../../kernel/webhooks/webhooks.js';
import type { InternalObjects } from '../storage/service.js';
import { type GpuCatalogue, type JobType, planMeets } from './catalogue.js';
import { gpuErrors } from './errors.js';
import { checkInputs } from './inputs.js';
import { contentTypeOf, openLink, sealLink } from './links.js';
import type { GpuJobsTable } from './migrations.js';
import { GpuRepo } from './repo.js';
import { GpuWorkerProtocol } from './worker-protocol.js';

/** A worker that has not called for a minute no longer makes its engines `available`. */
export const WORKER_SEEN_MS = 60_000;
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
  /** The worker side of the same queue. */
  readonly worker: GpuWorkerProtocol;

  constructor(
    readonly catalogue: GpuCatalogue,
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
    this.worker = new GpuWorkerProtocol(store, clock, this, outputs, secrets, baseUrl);
  }

  // --- catalogue --------------------------------------------------------------------------------

  /** Engines a worker has called in for in the last minute. */
  private async servedEngines(): Promise<Set<string>> {
    const seenSince = this.clock.nowMs() - WORKER_SEEN_MS;
    return new Set(
      (await this.repo.workers())
        .filter((w) => (w.last_seen_at ?? 0) >= seenSince)
        .flatMap((w) => JSON.parse(w.serving_engines ?? w.engines) as string[]),
    );
  }

  async engines() {
    const served = await this.servedEngines();
    return this.catalogue.engines.map((e) => ({
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
    const engine = this.catalogue.engine(input.engine);
    if (!engine) throw gpuErrors.unknownEngine(input.engine);
    if (engine.type !== input.type) throw gpuErrors.wrongType(engine.engine, engine.type);
    if (input.preset && !this.catalogue.presets.some((p) => p.name === input.preset && p.type === input.type))
      throw gpuErrors.unknownPreset(input.preset, input.type);
    if (input.webhook_url && input.type !== 'video') throw gpuErrors.webhookVideoOnly();
    const { inputs, units } = checkInputs(input.type, input.inputs, engine);
    const plan = (await this.identity.getCustomer(principal.customerId))?.plan ?? 'free';
    if (!planMeets(plan, engine.tier_required))
      throw gpuErrors.tier(engine.engine, engine.tier_required!, plan);
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
      estimated_cost: this.costOf(engine.engine, units, CURRENCY),
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
    const served = await this.servedEngines();
    return Promise.all((await this.repo.jobs(customerId, 100)).map((j) => this.view(j, served)));
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

  /** A download link's object, while the link is valid. */
  async download(
    jobId: string,
    name: string,
    token: string,
  ): Promise<{ body: Readable; contentType: string }> {
    const link = openLink(this.secrets, token, 'down', jobId, name, this.clock.nowMs());
    if (!link) throw gpuErrors.linkExpired();
    const body = await this.outputs.get(`${link.j}/${link.n}`).catch(() => {
      throw gpuErrors.linkExpired();
    });
    return { body, contentType: contentTypeOf(link.n) };
  }

  /** Units × the engine's price in `currency`. */
  costOf(engine: string, units: number, currency: string): number {
    return round(units * this.catalogue.pricePerUnit(engine, currency));
  }

  /** Video jobs with a webhook_url hear of every final state (a Replicate-like payload, docs/gpu.md). */
  async notify(job: GpuJobsTable) {
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

  /** The job as the API shows it; `served` (the engines workers serve now) when already known. */
  private async view(j: GpuJobsTable, served?: Set<string>) {
    // A queued job says why it waits when no worker serves its engine, so a client does not poll
    // a job that cannot move.
    const waiting =
      j.status === 'queued' && !(served ?? (await this.servedEngines())).has(j.engine)
        ? `No worker serves the engine ${j.engine}: the job stays queued until one calls in (GET /v1/gpu/engines shows it available).`
        : null;
    const expires = this.clock.nowMs() + LINK_MS;
    const output_files: Record<string, string> = {};
    if (j.status === 'completed')
      for (const name of JSON.parse(j.outputs) as string[]) {
        const token = sealLink(this.secrets, { k: 'down', j: j.id, n: name, e: expires });
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
      waiting_reason: waiting,
      created_at: isoOf(j.created_at)!,
      completed_at: isoOf(j.completed_at),
    };
  }
}

const round = (n: number) => Math.round(n * 10000) / 10000;
