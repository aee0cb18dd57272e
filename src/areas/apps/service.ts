import type { IdentityService } from '../../kernel/auth/identity.js';
import { type Clock, isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { SecretBox } from '../../kernel/secrets.js';
import type { Store } from '../../kernel/store/store.js';
import type { RegionsService } from '../regions/service.js';
import { APP_PLANS, appPlanOf, REGION_SERVICE } from './catalogue.js';
import type {
  AppsDriver,
  DeployVerdict,
  HealthCheck,
  LogLine,
  RevisionSpec,
  VolumeMount,
} from './drivers/driver.js';
import { appsErrors } from './errors.js';
import type { AppImages } from './images.js';
import {
  type AppStatus,
  appStatus,
  type InstanceState,
  instancesAt,
  settleApp,
  settleRevision,
} from './lifecycle.js';
import { AppMetrics, METRICS_MINUTES } from './metrics.js';
import type { AppsAppsTable, AppsRevisionsTable } from './migrations.js';
import { AppsRepo } from './repo.js';
import { revisionSettings, type SettingsInput } from './revision-settings.js';

const NAME = /^[a-z](?:[a-z0-9-]{0,28}[a-z0-9])$/;
/** Names that are routes of their own under /v1/apps. */
const RESERVED = new Set(['plans', 'image-uploads', 'certificate-authority']);

/** The settings of a revision; on a deploy, every one left out is copied from the latest revision. */
export interface RevisionInput {
  /** A registry reference, or an uploaded archive: `{upload_id}`. */
  image?: string | { upload_id: string };
  command?: string[] | null;
  args?: string[] | null;
  port?: number;
  env?: Record<string, string>;
  secrets?: Record<string, string>;
  plan_code?: string;
  concurrency?: number;
  min_instances?: number;
  max_instances?: number;
  idle_timeout_seconds?: number;
  health_check?: Partial<HealthCheck>;
}
export interface CreateApp extends RevisionInput {
  name: string;
  region?: string;
  image: string | { upload_id: string };
}

interface Loaded {
  app: AppsAppsTable;
  serving: AppsRevisionsTable | undefined;
  pending: AppsRevisionsTable | undefined;
  latest: AppsRevisionsTable | undefined;
}

const parse = <T>(json: string | null): T | null => (json === null ? null : (JSON.parse(json) as T));

export class AppsService {
  readonly repo: AppsRepo;
  /** What the ingress measured per app (this process, last hour). */
  readonly metrics = new AppMetrics();
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly secrets: SecretBox,
    private readonly regions: RegionsService,
    readonly driver: AppsDriver,
    /** The domain app hosts are named under. */
    readonly domain: string,
    readonly images: AppImages,
  ) {
    this.repo = AppsRepo.of(store);
  }

  plans() {
    return { plans: APP_PLANS.map((p) => ({ ...p })) };
  }

  async create(customerId: string, input: CreateApp) {
    const name = input.name.trim().toLowerCase();
    if (!NAME.test(name) || RESERVED.has(name)) throw appsErrors.badName();
    const region = this.regionOf(input.region);
    const customer = await this.identity.getCustomer(customerId);
    const tier = customer?.plan ?? 'free';
    const settings = revisionSettings(
      this.secrets,
      this.limits,
      await this.resolveImage(customerId, input),
      undefined,
      tier,
    );
    const maxApps = this.limits.of('apps.apps', tier);
    const appId = newId();
    const revisionId = newId();
    // Counted and inserted under the customer's lock: two creates at once cannot both take the last place.
    const launch = await this.store.unitOfWork({ locks: [`apps:customer:${customerId}`] }, async ({ tx }) => {
      const repo = AppsRepo.over(tx);
      if (await repo.appByName(customerId, name)) throw appsErrors.exists(name);
      if (maxApps !== null && (await repo.countApps(customerId)) >= maxApps) throw appsErrors.quota(maxApps);
      const now = this.clock.nowMs();
      const app: AppsAppsTable = {
        id: appId,
        customer_id: customerId,
        name,
        region,
        host_label: `${name}-${(customer?.short_id ?? customerId).toLowerCase()}`,
        serving_revision_id: null,
        pending_revision_id: revisionId,
        traffic_moved_at: null,
        last_request_at: null,
        woke_at: null,
        suspended_at: null,
        created_at: now,
        updated_at: now,
      };
      await repo.insertApp(app);
      return this.startDeploy(repo, app, revisionId, 1, settings, now);
    });
    launch();
    return this.get(customerId, appId);
  }

  async list(customerId: string, page: { limit: number; offset: number; page: number; size: number }) {
    const now = this.clock.nowMs();
    const rows = await this.repo.apps(customerId, page.limit, page.offset);
    const apps = [];
    for (const row of rows) apps.push(this.appView(await this.load(this.repo, row, now), now));
    return { apps, total: await this.repo.countApps(customerId), page: page.page, per_page: page.size };
  }

  async get(customerId: string, idOrName: string) {
    const now = this.clock.nowMs();
    return this.appView(
      await this.load(this.repo, await this.find(this.repo, customerId, idOrName), now),
      now,
    );
  }

  async remove(customerId: string, idOrName: string) {
    const id = await this.locked(customerId, idOrName, async (repo, s) => {
      const volumes = await repo.volumes(s.app.id);
      await this.driver.destroy(s.app.id);
      await repo.deleteApp(s.app.id);
      for (const v of volumes) await this.driver.removeVolume?.(v.id);
      return s.app.id;
    });
    return { deleted: true as const, id };
  }

  /** A new immutable revision; the traffic moves to it once it passes its health check. */
  async deploy(customerId: string, idOrName: string, input: RevisionInput) {
    const tier = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
    const keep = this.limits.of('apps.revisions_per_app', tier) ?? Number.MAX_SAFE_INTEGER;
    const resolved = await this.resolveImage(customerId, input);
    const [revisionId, launch] = await this.locked(customerId, idOrName, async (repo, s, now) => {
      const settings = revisionSettings(this.secrets, this.limits, resolved, s.latest, tier);
      if (s.app.pending_revision_id) throw appsErrors.deployInProgress(s.pending?.number ?? 0);
      const id = newId();
      const launch = await this.startDeploy(repo, s.app, id, (s.latest?.number ?? 0) + 1, settings, now);
      await repo.updateApp(s.app.id, { pending_revision_id: id, updated_at: now });
      // Keep the newest revisions; older ones that neither serve nor deploy go.
      const all = await repo.revisions(s.app.id);
      const extra = all
        .slice(keep)
        .filter((r) => r.id !== s.app.serving_revision_id && r.id !== id)
        .map((r) => r.id);
      await repo.deleteRevisions(extra);
      return [id, launch] as const;
    });
    launch();
    return this.revision(customerId, idOrName, revisionId);
  }

  async revisions(customerId: string, idOrName: string) {
    const now = this.clock.nowMs();
    const s = await this.load(this.repo, await this.find(this.repo, customerId, idOrName), now);
    const revisions = (await this.repo.revisions(s.app.id)).map((r) =>
      this.revisionView(settleRevision(r, now), s.app),
    );
    return { revisions, total: revisions.length };
  }

  async revision(customerId: string, idOrName: string, revisionRef: string) {
    const now = this.clock.nowMs();
    const s = await this.load(this.repo, await this.find(this.repo, customerId, idOrName), now);
    const r = await this.findRevision(this.repo, s.app.id, revisionRef);
    return this.revisionView(settleRevision(r, now), s.app);
  }

  /** Moves all traffic to an earlier healthy revision at once. */
  async rollback(customerId: string, idOrName: string, revisionRef: string) {
    await this.locked(customerId, idOrName, async (repo, s, now) => {
      const target = settleRevision(await this.findRevision(repo, s.app.id, revisionRef), now);
      if (s.app.pending_revision_id) throw appsErrors.deployInProgress(s.pending?.number ?? 0);
      if (target.status !== 'ready') throw appsErrors.revisionNotReady(target.number, target.status);
      if (target.id === s.app.serving_revision_id) throw appsErrors.alreadyServing(target.number);
      if (s.app.serving_revision_id) await this.driver.retire(s.app.id, s.app.serving_revision_id);
      await repo.updateApp(s.app.id, {
        serving_revision_id: target.id,
        traffic_moved_at: now,
        woke_at: now,
        updated_at: now,
      });
    });
    return this.get(customerId, idOrName);
  }

  async suspend(customerId: string, idOrName: string) {
    await this.locked(customerId, idOrName, async (repo, s, now) => {
      if (s.app.suspended_at !== null) throw appsErrors.invalidState('suspend', 'suspended');
      if (s.app.serving_revision_id) await this.driver.retire(s.app.id, s.app.serving_revision_id);
      await repo.updateApp(s.app.id, { suspended_at: now, updated_at: now });
    });
    return this.get(customerId, idOrName);
  }

  async resume(customerId: string, idOrName: string) {
    await this.locked(customerId, idOrName, async (repo, s, now) => {
      if (s.app.suspended_at === null) throw appsErrors.invalidState('resume', this.statusOf(s, now));
      await repo.updateApp(s.app.id, { suspended_at: null, woke_at: now, updated_at: now });
    });
    return this.get(customerId, idOrName);
  }

  /** What a request through the ingress does: a cold start when nothing runs, and a fresh idle timer. */
  async wake(customerId: string, idOrName: string) {
    await this.locked(customerId, idOrName, async (repo, s, now) => {
      const status = this.statusOf(s, now);
      if (status === 'suspended' || !s.serving) throw appsErrors.invalidState('wake', status);
      const running = this.instances(s, now).some((i) => i.revision_id === s.serving!.id);
      await repo.updateApp(s.app.id, { last_request_at: now, ...(running ? {} : { woke_at: now }) });
    });
    return this.get(customerId, idOrName);
  }

  async instanceList(customerId: string, idOrName: string) {
    const now = this.clock.nowMs();
    const s = await this.load(this.repo, await this.find(this.repo, customerId, idOrName), now);
    const instances = this.instances(s, now).map((i) => ({
      id: i.id,
      revision_id: i.revision_id,
      revision_number: i.revision_number,
      state: i.state,
      started_at: isoOf(i.started_at)!,
      status_message: this.note(
        i.state === 'starting' ? 'Starting; not yet healthy.' : 'Running.',
        'Simulated instance: no container runs.',
      ),
    }));
    return { instances, total: instances.length };
  }

  /**
   * The last lines the app's instances wrote (serving and deploying revisions). A driver that runs
   * nothing has no output: the lines then tell what its deploys did, marked simulated.
   */
  async logs(customerId: string, idOrName: string, lines: number) {
    const now = this.clock.nowMs();
    const s = await this.load(this.repo, await this.find(this.repo, customerId, idOrName), now);
    const numbers = new Map<string, number>();
    for (const r of [s.serving, s.pending, s.latest]) if (r) numbers.set(r.id, r.number);
    let out: LogLine[];
    if (this.driver.logs) {
      out = await this.driver.logs(
        [s.serving?.id, s.pending?.id].filter((x): x is string => !!x),
        lines,
      );
    } else {
      out = [];
      for (const r of (await this.repo.revisions(s.app.id)).slice(0, 5).reverse()) {
        const v = settleRevision(r, now);
        numbers.set(v.id, v.number);
        const at = (time: number, text: string, stream: 'stdout' | 'stderr' = 'stdout') =>
          out.push({ time, revisionId: v.id, stream, text });
        at(v.created_at, `[simulated] pulling ${v.image}`);
        at(v.created_at, `[simulated] starting an instance listening on port ${v.port}`);
        if (v.ready_at !== null)
          at(v.ready_at, `[simulated] health check GET ${parse<HealthCheck>(v.health_check)!.path} passed`);
        if (v.failed_at !== null) at(v.failed_at, `[simulated] ${v.failure_reason}`, 'stderr');
      }
      out = out.filter((l) => l.time <= now).slice(-lines);
    }
    return {
      lines: out.map((l) => ({
        time: isoOf(l.time)!,
        revision_id: l.revisionId,
        revision_number: numbers.get(l.revisionId) ?? null,
        stream: l.stream,
        text: l.text,
      })),
      simulated: this.driver.simulated,
    };
  }

  /**
   * Requests and latency the ingress measured over the last `windowSeconds` of the clock, per
   * minute, and each running instance's CPU and memory now.
   */
  async metricsOf(customerId: string, idOrName: string, windowSeconds: number) {
    const now = this.clock.nowMs();
    const s = await this.load(this.repo, await this.find(this.repo, customerId, idOrName), now);
    const toMinute = Math.floor(now / 60_000);
    const minutes = Math.min(METRICS_MINUTES, Math.ceil(windowSeconds / 60));
    const m = this.metrics.summary(s.app.id, toMinute - minutes, toMinute);
    const numbers = new Map([s.serving, s.pending].filter((r) => !!r).map((r) => [r!.id, r!.number]));
    const stats = (await this.driver.stats?.([...numbers.keys()])) ?? [];
    return {
      window_seconds: minutes * 60,
      requests: m.requests,
      errors: m.errors,
      latency_ms: m.latency,
      per_minute: m.perMinute.map((p) => ({
        minute: isoOf(p.minute * 60_000)!,
        requests: p.requests,
        errors: p.errors,
        latency_ms: { p50: p.p50, p95: p.p95 },
      })),
      instances: stats.map((i) => ({
        instance: i.instance,
        revision_number: numbers.get(i.revisionId) ?? null,
        cpu_percent: i.cpuPercent,
        memory_bytes: i.memoryBytes,
      })),
      simulated: this.driver.simulated,
    };
  }

  /** The app's id and status as of now (volumes refuse some changes while instances run). */
  async statusOfApp(customerId: string, idOrName: string) {
    const now = this.clock.nowMs();
    const s = await this.load(this.repo, await this.find(this.repo, customerId, idOrName), now);
    return { id: s.app.id, status: this.statusOf(s, now) };
  }

  /** Entries for the account's services list. */
  async serviceEntries(customerId: string) {
    const now = this.clock.nowMs();
    const out = [];
    for (const row of await this.repo.apps(customerId))
      out.push(this.appView(await this.load(this.repo, row, now), now));
    return out;
  }

  // ----- internals -----

  /** An uploaded image becomes its local reference; the upload must hold an archive. */
  private async resolveImage(customerId: string, input: RevisionInput): Promise<SettingsInput> {
    const { image, ...rest } = input;
    if (image === undefined) return rest;
    if (typeof image === 'string') return { ...rest, image, image_upload_id: null };
    const up = await this.images.resolve(customerId, image.upload_id);
    return { ...rest, image: up.image, image_upload_id: up.uploadId };
  }

  private regionOf(requested: string | undefined): string {
    if (requested !== undefined) {
      const code = requested.trim().toLowerCase();
      if (!this.regions.offers(code, REGION_SERVICE)) throw appsErrors.unknownRegion(requested);
      return code;
    }
    const first = this.regions.list().regions.find((r) => this.regions.offers(r.code, REGION_SERVICE));
    if (!first) throw appsErrors.unknownRegion('(default)');
    return first.code;
  }

  private async startDeploy(
    repo: AppsRepo,
    app: AppsAppsTable,
    id: string,
    number: number,
    s: ReturnType<typeof revisionSettings>,
    now: number,
  ) {
    const spec: RevisionSpec = {
      appId: app.id,
      revisionId: id,
      hostLabel: app.host_label,
      image: s.image,
      imageArchive: s.imageUploadId ? this.images.archive(s.imageUploadId) : null,
      command: s.command,
      args: s.args,
      port: s.port,
      env: s.env,
      secrets: s.secretsSealed
        ? (JSON.parse(this.secrets.open(s.secretsSealed)) as Record<string, string>)
        : {},
      plan: s.plan,
      concurrency: s.concurrency,
      minInstances: s.min,
      maxInstances: s.max,
      idleTimeoutSeconds: s.idle,
      healthCheck: s.healthCheck,
      volumes: await this.volumesOf(repo, app.id),
    };
    const outcome = await this.driver.deploy(spec);
    const timed = 'pending' in outcome ? null : outcome;
    await repo.insertRevision({
      id,
      app_id: app.id,
      customer_id: app.customer_id,
      number,
      image: s.image,
      command: s.command ? JSON.stringify(s.command) : null,
      args: s.args ? JSON.stringify(s.args) : null,
      port: s.port,
      env: JSON.stringify(s.env),
      secrets_sealed: s.secretsSealed,
      secret_names: JSON.stringify(s.secretNames),
      plan_code: s.plan.plan_code,
      concurrency: s.concurrency,
      min_instances: s.min,
      max_instances: s.max,
      idle_timeout_seconds: s.idle,
      health_check: JSON.stringify(s.healthCheck),
      status: 'deploying',
      next_status: timed ? (timed.healthy ? 'ready' : 'failed') : null,
      settles_at: timed ? now + timed.seconds * 1000 : null,
      failure_reason: timed && !timed.healthy ? timed.reason : null,
      created_at: now,
      ready_at: null,
      failed_at: null,
      image_upload_id: s.imageUploadId,
    });
    // Started once the revision is stored (the caller's unit of work has committed).
    return () => {
      if (!timed) this.driver.launch?.(spec, (v) => this.reportDeploy(app.id, id, v));
    };
  }

  /** A driver's verdict on a deploy it launched: the revision settles, and traffic moves if healthy. */
  async reportDeploy(appId: string, revisionId: string, verdict: DeployVerdict): Promise<void> {
    await this.store.unitOfWork({ locks: [`apps:app:${appId}`] }, async ({ tx }) => {
      const repo = AppsRepo.over(tx);
      const app = await repo.appById(appId);
      const rev = await repo.revision(appId, revisionId);
      if (!app || !rev || rev.status !== 'deploying') return;
      const now = this.clock.nowMs();
      await repo.updateRevision(revisionId, {
        status: verdict.healthy ? 'ready' : 'failed',
        next_status: null,
        settles_at: null,
        ready_at: verdict.healthy ? now : null,
        failed_at: verdict.healthy ? null : now,
        failure_reason: verdict.healthy ? null : verdict.reason,
      });
      if (app.pending_revision_id !== revisionId) return;
      if (verdict.healthy) {
        if (app.serving_revision_id) await this.driver.retire(appId, app.serving_revision_id);
        await repo.updateApp(appId, {
          serving_revision_id: revisionId,
          pending_revision_id: null,
          traffic_moved_at: now,
          updated_at: now,
        });
      } else {
        await repo.updateApp(appId, { pending_revision_id: null, updated_at: now });
      }
    });
  }

  /**
   * The ingress's question for a host: the serving revision to send the request to (with its
   * secrets opened for the process), after counting the request against the idle timer.
   */
  async route(
    hostLabel: string,
  ): Promise<{ spec: RevisionSpec } | { refused: 'not_found' | 'suspended' | 'no_revision' }> {
    const raw = await this.repo.appByHost(hostLabel);
    if (!raw) return { refused: 'not_found' };
    const now = this.clock.nowMs();
    const s = await this.load(this.repo, raw, now);
    if (s.app.suspended_at !== null) return { refused: 'suspended' };
    if (!s.serving) return { refused: 'no_revision' };
    const running = this.instances(s, now).some((i) => i.revision_id === s.serving!.id);
    // One write a second at most per app: the idle timer needs no finer grain.
    if (running ? now - (s.app.last_request_at ?? 0) >= 1000 : true)
      await this.repo.updateApp(s.app.id, { last_request_at: now, ...(running ? {} : { woke_at: now }) });
    return { spec: this.specOf(s.app, s.serving, await this.volumesOf(this.repo, s.app.id)) };
  }

  /**
   * At start: deploys a driver was running when the process stopped have no one to report them;
   * they fail with that reason, so the app is not stuck deploying and can be deployed again.
   */
  async failInterruptedDeploys(): Promise<number> {
    let n = 0;
    for (const app of await this.repo.allApps()) {
      if (!app.pending_revision_id) continue;
      const rev = await this.repo.revision(app.id, app.pending_revision_id);
      if (!rev || rev.status !== 'deploying' || rev.next_status !== null) continue;
      await this.reportDeploy(app.id, rev.id, {
        healthy: false,
        reason: 'Fjord restarted while this revision was deploying; deploy it again.',
      });
      n++;
    }
    return n;
  }

  /** Revisions that should have instances as of now on the clock: the rest are stopped. */
  async wantedRevisions(): Promise<Set<string>> {
    const now = this.clock.nowMs();
    const wanted = new Set<string>();
    for (const raw of await this.repo.allApps()) {
      const s = await this.load(this.repo, raw, now);
      for (const i of this.instances(s, now)) wanted.add(i.revision_id);
    }
    return wanted;
  }

  /** Stops the instances the clock says should no longer run (idle, suspended, replaced). */
  async sweep(): Promise<void> {
    await this.driver.trim?.();
    const running = this.driver.runningRevisions?.() ?? [];
    if (!running.length) return;
    const wanted = await this.wantedRevisions();
    for (const rev of running) if (!wanted.has(rev)) await this.driver.retire('', rev);
  }

  /** The app's volumes, as every instance started from now on mounts them. */
  private async volumesOf(repo: AppsRepo, appId: string): Promise<VolumeMount[]> {
    return (await repo.volumes(appId)).map((v) => ({ id: v.id, mountPath: v.mount_path }));
  }

  private specOf(app: AppsAppsTable, r: AppsRevisionsTable, volumes: VolumeMount[]): RevisionSpec {
    return {
      appId: app.id,
      revisionId: r.id,
      hostLabel: app.host_label,
      image: r.image,
      imageArchive: r.image_upload_id ? this.images.archive(r.image_upload_id) : null,
      command: parse<string[]>(r.command),
      args: parse<string[]>(r.args),
      port: r.port,
      env: parse<Record<string, string>>(r.env)!,
      secrets: r.secrets_sealed
        ? (JSON.parse(this.secrets.open(r.secrets_sealed)) as Record<string, string>)
        : {},
      plan: appPlanOf(r.plan_code)!,
      concurrency: r.concurrency,
      minInstances: r.min_instances,
      maxInstances: r.max_instances,
      idleTimeoutSeconds: r.idle_timeout_seconds,
      healthCheck: parse<HealthCheck>(r.health_check)!,
      volumes,
    };
  }

  private async find(repo: AppsRepo, customerId: string, idOrName: string) {
    const row = await repo.app(customerId, idOrName.trim().toLowerCase());
    if (!row) throw appsErrors.notFound();
    return row;
  }

  private async findRevision(repo: AppsRepo, appId: string, ref: string) {
    const r = /^\d{1,9}$/.test(ref)
      ? await repo.revisionByNumber(appId, Number(ref))
      : await repo.revision(appId, ref);
    if (!r) throw appsErrors.revisionNotFound();
    return r;
  }

  /** The app with its serving, pending and latest revisions, settled as of `now`. */
  private async load(repo: AppsRepo, raw: AppsAppsTable, now: number): Promise<Loaded> {
    const rawPending = raw.pending_revision_id
      ? await repo.revision(raw.id, raw.pending_revision_id)
      : undefined;
    const app = settleApp(raw, rawPending, now);
    const pendingSettled = rawPending ? settleRevision(rawPending, now) : undefined;
    const serving = app.serving_revision_id
      ? app.serving_revision_id === pendingSettled?.id
        ? pendingSettled
        : await repo.revision(raw.id, app.serving_revision_id)
      : undefined;
    const latestRaw = await repo.latestRevision(raw.id);
    const latest = latestRaw ? settleRevision(latestRaw, now) : undefined;
    return { app, serving, pending: app.pending_revision_id ? pendingSettled : undefined, latest };
  }

  /**
   * Runs `work` under the app's lock on its settled state, storing what settled first (a deploy
   * that finished, the traffic that moved) so every write starts from the state as of now.
   */
  private async locked<T>(
    customerId: string,
    idOrName: string,
    work: (repo: AppsRepo, s: Loaded, now: number) => Promise<T>,
  ): Promise<T> {
    const ref = await this.find(this.repo, customerId, idOrName);
    return this.store.unitOfWork({ locks: [`apps:app:${ref.id}`] }, async ({ tx }) => {
      const repo = AppsRepo.over(tx);
      const raw = await repo.app(customerId, ref.id);
      if (!raw) throw appsErrors.notFound();
      const now = this.clock.nowMs();
      const s = await this.load(repo, raw, now);
      if (raw.pending_revision_id && !s.app.pending_revision_id) {
        const p = settleRevision((await repo.revision(raw.id, raw.pending_revision_id))!, now);
        await repo.updateRevision(p.id, {
          status: p.status,
          next_status: null,
          settles_at: null,
          ready_at: p.ready_at,
          failed_at: p.failed_at,
        });
        if (s.app.serving_revision_id !== raw.serving_revision_id && raw.serving_revision_id)
          await this.driver.retire(raw.id, raw.serving_revision_id);
        await repo.updateApp(raw.id, {
          serving_revision_id: s.app.serving_revision_id,
          pending_revision_id: null,
          traffic_moved_at: s.app.traffic_moved_at,
          updated_at: s.app.updated_at,
        });
      }
      return work(repo, s, now);
    });
  }

  private instances(s: Loaded, now: number): InstanceState[] {
    return instancesAt(s.app, s.serving, s.pending, now, this.driver.coldStartSeconds * 1000);
  }

  private statusOf(s: Loaded, now: number): AppStatus {
    return appStatus(s.app, s.serving, this.instances(s, now));
  }

  private note(message: string, simulatedNote = this.driver.note): string {
    return this.driver.simulated && simulatedNote ? `${message} ${simulatedNote}` : message;
  }

  private appView(s: Loaded, now: number) {
    const instances = this.instances(s, now);
    const status = appStatus(s.app, s.serving, instances);
    const running = s.serving ? instances.filter((i) => i.revision_id === s.serving!.id).length : 0;
    return {
      id: s.app.id,
      name: s.app.name,
      region: s.app.region,
      url: `https://${s.app.host_label}.${this.domain}`,
      status,
      status_message: this.note(this.appMessage(s, status, running)),
      current_revision: s.serving
        ? { id: s.serving.id, number: s.serving.number, status: s.serving.status }
        : null,
      latest_revision: s.latest
        ? { id: s.latest.id, number: s.latest.number, status: s.latest.status }
        : null,
      min_instances: s.serving?.min_instances ?? 0,
      max_instances: s.serving?.max_instances ?? 0,
      instances_running: running,
      driver: this.driver.name,
      simulated: this.driver.simulated,
      created_at: isoOf(s.app.created_at)!,
      updated_at: isoOf(s.app.updated_at)!,
    };
  }

  private appMessage(s: Loaded, status: AppStatus, running: number): string {
    const failedLatest =
      s.latest && s.latest.status === 'failed'
        ? ` Revision ${s.latest.number} failed: ${s.latest.failure_reason}`
        : '';
    switch (status) {
      case 'suspended':
        return 'Suspended: no instance runs and requests are answered 503 until you resume the app.';
      case 'deploying':
        return s.serving
          ? `Revision ${s.pending?.number} is deploying; revision ${s.serving.number} keeps serving until it is healthy.`
          : `Revision ${s.pending?.number} is deploying.`;
      case 'failed':
        return `No revision serves.${failedLatest}`;
      case 'running':
        return `Revision ${s.serving!.number} serves with ${running} instance${running === 1 ? '' : 's'}.${
          failedLatest ? `${failedLatest} Revision ${s.serving!.number} keeps serving.` : ''
        }`;
      case 'scaled_to_zero':
        return `Revision ${s.serving!.number} serves; scaled to zero after ${s.serving!.idle_timeout_seconds} s without requests, the next request starts an instance.${
          failedLatest ? `${failedLatest} Revision ${s.serving!.number} keeps serving.` : ''
        }`;
    }
  }

  private revisionView(r: AppsRevisionsTable, app: AppsAppsTable) {
    const serving = r.id === app.serving_revision_id;
    const message =
      r.status === 'deploying'
        ? 'Pulling the image and starting a first instance; traffic moves here once it passes its health check.'
        : r.status === 'failed'
          ? `${r.failure_reason} It never took traffic.`
          : serving
            ? 'Healthy; takes all traffic.'
            : 'Healthy; not serving (roll back to it to serve it again).';
    const plan = appPlanOf(r.plan_code)!;
    return {
      id: r.id,
      app_id: r.app_id,
      number: r.number,
      status: r.status,
      status_message: this.note(message),
      serving,
      image: r.image,
      image_upload_id: r.image_upload_id,
      command: parse<string[]>(r.command),
      args: parse<string[]>(r.args),
      port: r.port,
      env: parse<Record<string, string>>(r.env)!,
      secret_names: parse<string[]>(r.secret_names)!,
      plan_code: r.plan_code,
      cpu: plan.cpu,
      memory_mb: plan.memory_mb,
      concurrency: r.concurrency,
      min_instances: r.min_instances,
      max_instances: r.max_instances,
      idle_timeout_seconds: r.idle_timeout_seconds,
      health_check: parse<HealthCheck>(r.health_check)!,
      created_at: isoOf(r.created_at)!,
      ready_at: isoOf(r.ready_at),
      failed_at: isoOf(r.failed_at),
    };
  }
}
