/**
 * The public surface of container apps, and the lifecycle of apps and revisions: create, deploy,
 * roll back, suspend, resume, delete. How state is read (state.ts), shown (views.ts), observed
 * (logs.ts, observe.ts) and run on the driver (runtime.ts) live in modules of their own.
 */
import type { IdentityService } from '../../kernel/auth/identity.js';
import { type Clock, isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { SecretBox } from '../../kernel/secrets.js';
import type { Store } from '../../kernel/store/store.js';
import type { RegionsService } from '../regions/service.js';
import { APP_PLANS, REGION_SERVICE } from './catalogue.js';
import type { AppsDriver, HealthCheck, LogWindow } from './drivers/driver.js';
import { appsErrors } from './errors.js';
import type { ImagePolicy } from './image-policy.js';
import type { AppImages } from './images.js';
import { settleRevision } from './lifecycle.js';
import { AppLogReader } from './logs.js';
import { AppMetrics } from './metrics.js';
import type { AppsAppsTable } from './migrations.js';
import { appMetrics } from './observe.js';
import { AppsRepo } from './repo.js';
import { revisionSettings, type SettingsInput } from './revision-settings.js';
import { AppsRuntime } from './runtime.js';
import { findApp, findRevision, instancesOf, type Loaded, loadApp, statusOf } from './state.js';
import { appView, note, revisionView } from './views.js';

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

export class AppsService {
  readonly repo: AppsRepo;
  /** What the ingress measured per app (this process, last hour). */
  readonly metrics = new AppMetrics();
  /** Launching revisions on the driver, routing the ingress's requests, stopping idle instances. */
  readonly runtime: AppsRuntime;
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
    /** Which images revisions may use: the customer's uploads and the operator's registries. */
    private readonly imagePolicy: ImagePolicy,
  ) {
    this.repo = AppsRepo.of(store);
    this.runtime = new AppsRuntime(store, clock, secrets, driver, images);
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
    // The id-slot lock too: the app's slot of host ids must be no other app's.
    const locks = [`apps:customer:${customerId}`, 'apps:id-slots'];
    const launch = await this.store.unitOfWork({ locks }, async ({ tx }) => {
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
        id_slot: await repo.freeIdSlot(),
        created_at: now,
        updated_at: now,
      };
      await repo.insertApp(app);
      return this.runtime.startDeploy(repo, app, revisionId, 1, settings, now);
    });
    launch();
    return this.get(customerId, appId);
  }

  async list(customerId: string, page: { limit: number; offset: number; page: number; size: number }) {
    const now = this.clock.nowMs();
    const rows = await this.repo.apps(customerId, page.limit, page.offset);
    const apps = [];
    for (const row of rows)
      apps.push(appView(this.driver, this.domain, await loadApp(this.repo, row, now), now));
    return { apps, total: await this.repo.countApps(customerId), page: page.page, per_page: page.size };
  }

  async get(customerId: string, idOrName: string) {
    const now = this.clock.nowMs();
    return appView(
      this.driver,
      this.domain,
      await loadApp(this.repo, await findApp(this.repo, customerId, idOrName), now),
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
    if (input.image === undefined) await this.recheckLatestImage(customerId, idOrName);
    await this.runtime.ensureIdSlot((await findApp(this.repo, customerId, idOrName)).id);
    const [revisionId, launch] = await this.locked(customerId, idOrName, async (repo, s, now) => {
      const settings = revisionSettings(this.secrets, this.limits, resolved, s.latest, tier);
      if (s.app.pending_revision_id) throw appsErrors.deployInProgress(s.pending?.number ?? 0);
      const id = newId();
      const launch = await this.runtime.startDeploy(
        repo,
        s.app,
        id,
        (s.latest?.number ?? 0) + 1,
        settings,
        now,
      );
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
    const s = await loadApp(this.repo, await findApp(this.repo, customerId, idOrName), now);
    const revisions = (await this.repo.revisions(s.app.id)).map((r) =>
      revisionView(this.driver, settleRevision(r, now), s.app),
    );
    return { revisions, total: revisions.length };
  }

  async revision(customerId: string, idOrName: string, revisionRef: string) {
    const now = this.clock.nowMs();
    const s = await loadApp(this.repo, await findApp(this.repo, customerId, idOrName), now);
    const r = await findRevision(this.repo, s.app.id, revisionRef);
    return revisionView(this.driver, settleRevision(r, now), s.app);
  }

  /** Moves all traffic to an earlier healthy revision at once. */
  async rollback(customerId: string, idOrName: string, revisionRef: string) {
    await this.locked(customerId, idOrName, async (repo, s, now) => {
      const target = settleRevision(await findRevision(repo, s.app.id, revisionRef), now);
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
      if (s.app.suspended_at === null) throw appsErrors.invalidState('resume', statusOf(this.driver, s, now));
      await repo.updateApp(s.app.id, { suspended_at: null, woke_at: now, updated_at: now });
    });
    return this.get(customerId, idOrName);
  }

  /** What a request through the ingress does: a cold start when nothing runs, and a fresh idle timer. */
  async wake(customerId: string, idOrName: string) {
    await this.locked(customerId, idOrName, async (repo, s, now) => {
      const status = statusOf(this.driver, s, now);
      if (status === 'suspended' || !s.serving) throw appsErrors.invalidState('wake', status);
      const running = instancesOf(this.driver, s, now).some((i) => i.revision_id === s.serving!.id);
      await repo.updateApp(s.app.id, { last_request_at: now, ...(running ? {} : { woke_at: now }) });
    });
    return this.get(customerId, idOrName);
  }

  async instanceList(customerId: string, idOrName: string) {
    const now = this.clock.nowMs();
    const s = await loadApp(this.repo, await findApp(this.repo, customerId, idOrName), now);
    const instances = instancesOf(this.driver, s, now).map((i) => ({
      id: i.id,
      revision_id: i.revision_id,
      revision_number: i.revision_number,
      state: i.state,
      started_at: isoOf(i.started_at)!,
      status_message: note(
        this.driver,
        i.state === 'starting' ? 'Starting; not yet healthy.' : 'Running.',
        'Simulated instance: no container runs.',
      ),
    }));
    return { instances, total: instances.length };
  }

  /**
   * The logs of the app's instances (serving and deploying revisions): `last()` lines, or
   * `follow()` them. Refuses (404, 422) before anything is read, so a stream opens only after.
   */
  async logs(customerId: string, idOrName: string, window: LogWindow) {
    const now = this.clock.nowMs();
    const s = await loadApp(this.repo, await findApp(this.repo, customerId, idOrName), now);
    return new AppLogReader(this.repo, this.driver, this.clock, s, window);
  }

  /**
   * Requests and latency the ingress measured over the last `windowSeconds` of the clock, per
   * minute, and each running instance's CPU and memory now.
   */
  async metricsOf(customerId: string, idOrName: string, windowSeconds: number) {
    const now = this.clock.nowMs();
    const s = await loadApp(this.repo, await findApp(this.repo, customerId, idOrName), now);
    return appMetrics(this.metrics, this.driver, s, now, windowSeconds);
  }

  /** The app's id and status as of now (volumes refuse some changes while instances run). */
  async statusOfApp(customerId: string, idOrName: string) {
    const now = this.clock.nowMs();
    const s = await loadApp(this.repo, await findApp(this.repo, customerId, idOrName), now);
    return { id: s.app.id, status: statusOf(this.driver, s, now) };
  }

  /** Entries for the account's services list. */
  async serviceEntries(customerId: string) {
    const now = this.clock.nowMs();
    const out = [];
    for (const row of await this.repo.apps(customerId))
      out.push(appView(this.driver, this.domain, await loadApp(this.repo, row, now), now));
    return out;
  }

  // ----- internals -----

  /**
   * An uploaded image becomes its local reference (the upload must be the customer's own and hold
   * an archive, whether named by `{upload_id}` or by the reference Fjord gave it); any other
   * reference must pass the image policy (valid, on a listed registry, at an allowed address).
   */
  private async resolveImage(customerId: string, input: RevisionInput): Promise<SettingsInput> {
    const { image, ...rest } = input;
    if (image === undefined) return rest;
    const uploadId = typeof image === 'string' ? this.uploadNamedBy(image) : image.upload_id;
    if (uploadId === null) return { ...rest, image: image as string, image_upload_id: null };
    const up = await this.images.resolve(customerId, uploadId);
    return { ...rest, image: up.image, image_upload_id: up.uploadId };
  }

  /** The upload an image string names, or null for a registry image the policy allows. */
  private uploadNamedBy(image: string): string | null {
    const choice = this.imagePolicy.choose(image);
    return 'upload' in choice ? choice.upload : null;
  }

  /**
   * A deploy that keeps the latest revision's image checks it again: the operator's registry list
   * may have changed, and revisions stored before these rules existed named images freely.
   */
  private async recheckLatestImage(customerId: string, idOrName: string): Promise<void> {
    const app = await findApp(this.repo, customerId, idOrName);
    const latest = (await this.repo.revisions(app.id))[0];
    if (!latest) return;
    if (latest.image_upload_id !== null) await this.images.resolve(customerId, latest.image_upload_id);
    else await this.resolveImage(customerId, { image: latest.image });
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

  /**
   * Runs `work` under the app's lock on its settled state, storing what settled first (a deploy
   * that finished, the traffic that moved) so every write starts from the state as of now.
   */
  private async locked<T>(
    customerId: string,
    idOrName: string,
    work: (repo: AppsRepo, s: Loaded, now: number) => Promise<T>,
  ): Promise<T> {
    const ref = await findApp(this.repo, customerId, idOrName);
    return this.store.unitOfWork({ locks: [`apps:app:${ref.id}`] }, async ({ tx }) => {
      const repo = AppsRepo.over(tx);
      const raw = await repo.app(customerId, ref.id);
      if (!raw) throw appsErrors.notFound();
      const now = this.clock.nowMs();
      const s = await loadApp(repo, raw, now);
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
}
