/**
 * The runtime side of apps: launching a revision on the driver and taking its verdict, routing the
 * ingress's requests, and stopping what the clock says should no longer run. Apart from
 * service.ts because the driver and the ingress call it, not the API routes.
 */
import type { Clock } from '../../kernel/clock.js';
import type { SecretBox } from '../../kernel/secrets.js';
import type { Store } from '../../kernel/store/store.js';
import { appPlanOf } from './catalogue.js';
import type { AppsDriver, DeployVerdict, HealthCheck, RevisionSpec, VolumeMount } from './drivers/driver.js';
import { appsErrors } from './errors.js';
import { podmanReference } from './image-policy.js';
import type { AppImages } from './images.js';
import type { AppsAppsTable, AppsRevisionsTable } from './migrations.js';
import { AppsRepo } from './repo.js';
import type { revisionSettings } from './revision-settings.js';
import { instancesOf, loadApp, parse } from './state.js';

export class AppsRuntime {
  private readonly repo: AppsRepo;
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    private readonly driver: AppsDriver,
    private readonly images: AppImages,
  ) {
    this.repo = AppsRepo.of(store);
  }

  /** Stores a new revision and asks the driver to deploy it; returns what starts it once committed. */
  async startDeploy(
    repo: AppsRepo,
    app: AppsAppsTable,
    id: string,
    number: number,
    s: ReturnType<typeof revisionSettings>,
    now: number,
  ) {
    const spec: RevisionSpec = {
      appId: app.id,
      customerId: app.customer_id,
      revisionId: id,
      hostLabel: app.host_label,
      idSlot: idSlotOf(app),
      image: podmanReference(s.image),
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
    const s = await loadApp(this.repo, raw, now);
    if (s.app.suspended_at !== null) return { refused: 'suspended' };
    if (!s.serving) return { refused: 'no_revision' };
    const running = instancesOf(this.driver, s, now).some((i) => i.revision_id === s.serving!.id);
    // One write a second at most per app: the idle timer needs no finer grain.
    if (running ? now - (s.app.last_request_at ?? 0) >= 1000 : true)
      await this.repo.updateApp(s.app.id, { last_request_at: now, ...(running ? {} : { woke_at: now }) });
    const app = { ...s.app, id_slot: s.app.id_slot ?? (await this.ensureIdSlot(s.app.id)) };
    return { spec: this.specOf(app, s.serving, await this.volumesOf(this.repo, s.app.id)) };
  }

  /**
   * The app's slot of host ids, given now to an app made before apps had one (new apps get theirs
   * when created). Under the `apps:id-slots` lock, so no two apps share a slot.
   */
  async ensureIdSlot(appId: string): Promise<number> {
    return this.store.unitOfWork({ locks: ['apps:id-slots'] }, async ({ tx }) => {
      const repo = AppsRepo.over(tx);
      const app = await repo.appById(appId);
      if (!app) throw appsErrors.notFound();
      if (app.id_slot !== null) return Number(app.id_slot);
      const slot = await repo.freeIdSlot();
      await repo.updateApp(appId, { id_slot: slot });
      return slot;
    });
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
      const s = await loadApp(this.repo, raw, now);
      for (const i of instancesOf(this.driver, s, now)) wanted.add(i.revision_id);
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
      customerId: app.customer_id,
      revisionId: r.id,
      hostLabel: app.host_label,
      idSlot: idSlotOf(app),
      image: podmanReference(r.image),
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
}

/** The app's id slot; every path that builds a spec has made sure it has one. */
function idSlotOf(app: AppsAppsTable): number {
  if (app.id_slot === null) throw new Error(`app ${app.id} has no id slot`);
  return Number(app.id_slot);
}
