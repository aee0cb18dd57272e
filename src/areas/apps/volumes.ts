import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { IdentityService } from '../../kernel/auth/identity.js';
import { type Clock, isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { Store } from '../../kernel/store/store.js';
import type { InternalObjects } from '../storage/service.js';
import type { AppsDriver } from './drivers/driver.js';
import { appsErrors } from './errors.js';
import type { AppsVolumeSnapshotsTable, AppsVolumesTable } from './migrations.js';
import { AppsRepo } from './repo.js';
import type { AppsService } from './service.js';

const NAME = /^[a-z](?:[a-z0-9-]{0,28}[a-z0-9])$/;
/** Paths of the container's own system a volume may not hide. */
const SYSTEM = ['/', '/bin', '/dev', '/etc', '/lib', '/proc', '/sbin', '/sys', '/usr'];
const snapshotKey = (id: string) => `snapshots/${id}.tar.gz`;
/** What a simulated volume's snapshot holds: an empty tar, gzipped. */
const EMPTY_TAR_GZ = gzipSync(Buffer.alloc(1024));

export interface CreateVolume {
  name: string;
  size_gb: number;
  mount_path: string;
  snapshot_id?: string;
}

/**
 * Persistent storage of an app: a volume belongs to one app, every instance of the app mounts it
 * at its path, and it outlives deploys, restarts and scale to zero. Snapshots are gzipped tars in
 * Fjord's own object storage; a new volume (of any app of the account) can start from one.
 */
export class AppVolumes {
  private readonly repo: AppsRepo;
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly apps: AppsService,
    private readonly driver: AppsDriver,
    private readonly files: InternalObjects,
  ) {
    this.repo = AppsRepo.of(store);
  }

  async create(customerId: string, appRef: string, input: CreateVolume) {
    const name = input.name.trim().toLowerCase();
    if (!NAME.test(name)) throw appsErrors.badVolumeName();
    const mountPath = mountPathOf(input.mount_path);
    const tier = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
    const maxGb = this.limits.of('apps.volume_gb', tier);
    if (maxGb !== null && input.size_gb > maxGb) throw appsErrors.volumeTooLarge(maxGb);
    const maxVolumes = this.limits.of('apps.volumes', tier);
    const app = await this.apps.statusOfApp(customerId, appRef);
    const source = input.snapshot_id ? await this.readySnapshot(customerId, input.snapshot_id) : null;
    const id = newId();
    const now = this.clock.nowMs();
    const row: AppsVolumesTable = {
      id,
      customer_id: customerId,
      app_id: app.id,
      name,
      size_gb: input.size_gb,
      mount_path: mountPath,
      source_snapshot_id: source?.id ?? null,
      created_at: now,
    };
    // Counted under the account's lock; the app's lock keeps a concurrent app delete out.
    await this.store.unitOfWork(
      { locks: [`apps:volumes:${customerId}`, `apps:app:${app.id}`] },
      async ({ tx }) => {
        const repo = AppsRepo.over(tx);
        if (!(await repo.appById(app.id))) throw appsErrors.notFound();
        const existing = await repo.volumes(app.id);
        if (existing.some((v) => v.name === name)) throw appsErrors.volumeExists(name);
        const clash = existing.find((v) => overlaps(v.mount_path, mountPath));
        if (clash)
          throw appsErrors.badMountPath(`${mountPath} overlaps the mount path of volume ${clash.name}.`);
        if (maxVolumes !== null && (await repo.countVolumes(customerId)) >= maxVolumes)
          throw appsErrors.quotaOf('volumes', maxVolumes);
        await repo.insertVolume(row);
      },
    );
    try {
      await this.driver.createVolume?.(id, input.size_gb);
      if (source && this.driver.restoreVolume)
        await this.driver.restoreVolume(id, await this.files.get(snapshotKey(source.id)));
    } catch (err) {
      await this.repo.deleteVolume(id);
      await this.driver.removeVolume?.(id).catch(() => {});
      // The runtime could not make the volume or unpack the snapshot: a back-end failure, said
      // with its reason; nothing of the volume is left.
      throw appsErrors.volumeFailed(source ? `from snapshot ${source.id}` : '', err);
    }
    return this.view(row);
  }

  async list(customerId: string, appRef: string) {
    const app = await this.apps.statusOfApp(customerId, appRef);
    const volumes = [];
    for (const v of await this.repo.volumes(app.id)) volumes.push(await this.view(v));
    return { volumes, total: volumes.length };
  }

  async get(customerId: string, appRef: string, volumeRef: string) {
    return this.view(await this.find(customerId, appRef, volumeRef));
  }

  /** Refused while instances may have it mounted: suspend the app (or let it scale to zero) first. */
  async remove(customerId: string, appRef: string, volumeRef: string) {
    const app = await this.apps.statusOfApp(customerId, appRef);
    const v = await this.find(customerId, appRef, volumeRef);
    if (app.status === 'running' || app.status === 'deploying')
      throw appsErrors.invalidState('delete a volume of', app.status);
    const snapshots = await this.repo.snapshots(v.id);
    await this.store.unitOfWork(
      { locks: [`apps:volumes:${customerId}`, `apps:app:${app.id}`] },
      async ({ tx }) => {
        const repo = AppsRepo.over(tx);
        await repo.deleteSnapshots(snapshots.map((s) => s.id));
        await repo.deleteVolume(v.id);
      },
    );
    for (const s of snapshots) await this.files.delete(snapshotKey(s.id)).catch(() => undefined);
    await this.driver.removeVolume?.(v.id);
    return { deleted: true as const, id: v.id };
  }

  /**
   * Writes a gzipped tar of the volume into object storage and answers once it is stored. Files
   * written meanwhile may or may not be in it: suspend the app first for a consistent snapshot.
   * Past `apps.snapshots_per_volume`, the oldest snapshots go.
   */
  async snapshot(customerId: string, appRef: string, volumeRef: string) {
    const v = await this.find(customerId, appRef, volumeRef);
    const tier = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
    const keep = this.limits.of('apps.snapshots_per_volume', tier) ?? Number.MAX_SAFE_INTEGER;
    const row: AppsVolumeSnapshotsTable = {
      id: newId(),
      customer_id: customerId,
      volume_id: v.id,
      app_id: v.app_id,
      status: 'creating',
      size_bytes: null,
      error: null,
      created_at: this.clock.nowMs(),
      ready_at: null,
    };
    await this.repo.insertSnapshot(row);
    try {
      const body = this.driver.snapshotVolume
        ? await this.driver.snapshotVolume(v.id)
        : Readable.from([EMPTY_TAR_GZ]);
      const stored = await this.files.put(snapshotKey(row.id), body, 'application/gzip');
      Object.assign(row, { status: 'ready', size_bytes: stored.size, ready_at: this.clock.nowMs() });
    } catch (err) {
      Object.assign(row, {
        status: 'failed',
        error: `The snapshot could not be written: ${(err as Error).message}`,
      });
    }
    await this.repo.updateSnapshot(row.id, {
      status: row.status,
      size_bytes: row.size_bytes,
      error: row.error,
      ready_at: row.ready_at,
    });
    const old = (await this.repo.snapshots(v.id)).slice(keep);
    await this.repo.deleteSnapshots(old.map((s) => s.id));
    for (const s of old) await this.files.delete(snapshotKey(s.id)).catch(() => undefined);
    return this.snapshotView(row);
  }

  async snapshots(customerId: string, appRef: string, volumeRef: string) {
    const v = await this.find(customerId, appRef, volumeRef);
    const snapshots = (await this.repo.snapshots(v.id)).map((s) => this.snapshotView(s));
    return { snapshots, total: snapshots.length };
  }

  private async readySnapshot(customerId: string, id: string) {
    const s = await this.repo.snapshot(customerId, id.trim().toLowerCase());
    if (!s) throw appsErrors.snapshotNotFound();
    if (s.status !== 'ready') throw appsErrors.snapshotNotReady(s.status);
    return s;
  }

  private async find(customerId: string, appRef: string, volumeRef: string) {
    const app = await this.apps.statusOfApp(customerId, appRef);
    const v = await this.repo.volume(app.id, volumeRef.trim().toLowerCase());
    if (!v) throw appsErrors.volumeNotFound();
    return v;
  }

  private async view(v: AppsVolumesTable) {
    return {
      id: v.id,
      app_id: v.app_id,
      name: v.name,
      size_gb: v.size_gb,
      mount_path: v.mount_path,
      used_bytes: this.driver.volumeUsage ? await this.driver.volumeUsage(v.id) : null,
      size_enforced: this.driver.volumeSizeEnforced ? await this.driver.volumeSizeEnforced(v.id) : null,
      source_snapshot_id: v.source_snapshot_id,
      simulated: this.driver.simulated,
      created_at: isoOf(Number(v.created_at))!,
    };
  }

  private snapshotView(s: AppsVolumeSnapshotsTable) {
    return {
      id: s.id,
      volume_id: s.volume_id,
      app_id: s.app_id,
      status: s.status,
      size_bytes: s.size_bytes === null ? null : Number(s.size_bytes),
      error: s.error,
      created_at: isoOf(Number(s.created_at))!,
      ready_at: isoOf(s.ready_at === null ? null : Number(s.ready_at)),
    };
  }
}

/** An absolute, normalised path outside the container's system directories. */
function mountPathOf(raw: string): string {
  const path = raw.trim();
  if (!path.startsWith('/')) throw appsErrors.badMountPath('A mount path is absolute: it starts with /.');
  const parts = path.split('/').filter(Boolean);
  if (parts.some((p) => p === '.' || p === '..'))
    throw appsErrors.badMountPath('A mount path may not contain . or .. segments.');
  if (parts.some((p) => !/^[A-Za-z0-9._-]+$/.test(p)))
    throw appsErrors.badMountPath('A mount path has only letters, digits, ., _ and - between its slashes.');
  const normal = `/${parts.join('/')}`;
  if (SYSTEM.some((s) => normal === s || (s !== '/' && normal.startsWith(`${s}/`))))
    throw appsErrors.badMountPath(`${normal} would hide the container's own system files.`);
  return normal;
}

const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
