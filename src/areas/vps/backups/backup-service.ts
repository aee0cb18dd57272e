import type { Logger } from 'pino';
import { type Clock, isoOf } from '../../../kernel/clock.js';
import { isAppError } from '../../../kernel/errors.js';
import { newId } from '../../../kernel/ids.js';
import type { Limits } from '../../../kernel/limits/quotas.js';
import type { Store } from '../../../kernel/store/store.js';
import type { RegionsService } from '../../regions/service.js';
import type { InternalObjects } from '../../storage/service.js';
import type { ServerSpec, VpsDriver } from '../drivers/driver.js';
import { vpsErrors } from '../errors.js';
import type { BackupKind, VpsBackupsTable, VpsServersTable } from '../migrations.js';
import { VpsRepo } from '../repo.js';
import { settle } from '../server-moves.js';
import { putArchive, verifyArchive } from './archives.js';
import { BackupRepo } from './repo.js';

/** How often a process taking a backup says it is alive, and how long silence means it died. */
const HEARTBEAT_MS = 30_000;
const ABANDONED_AFTER_MS = 10 * 60_000;
/** How long a restore holds the server before the hold lapses by itself (a crashed restore). */
const RESTORE_HOLD_MS = 30 * 60_000;
const GB = 1000 ** 3;

/** Whether a backup is still being taken: `creating`, and its taker said it was alive lately. */
const beingTaken = (b: VpsBackupsTable) =>
  b.status === 'creating' && Number(b.heartbeat_at ?? 0) >= Date.now() - ABANDONED_AFTER_MS;

export interface NewBackup {
  name?: string;
  description?: string;
}

/**
 * Backups of virtual servers: gzip-compressed tar archives of the server's disk, made by the
 * driver and kept in the storage area's internal `vps-backups` bucket (the same object store as
 * customers' buckets), restored into the same server. The archives' bytes are handled in
 * `archives.ts`, download links in `downloads.ts`, automatic backups in `policy.ts`.
 */
export class BackupService {
  readonly repo: BackupRepo;
  private readonly servers: VpsRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: Limits,
    private readonly regions: RegionsService,
    private readonly driver: VpsDriver,
    private readonly files: InternalObjects,
    private readonly log: Logger,
  ) {
    this.repo = BackupRepo.of(store);
    this.servers = VpsRepo.of(store);
  }

  /** Manual backups a server may keep, and the longest automatic retention. */
  maxBackups(): number {
    return this.limits.of('vps.backups_per_server', 'free') ?? 7;
  }

  view(b: VpsBackupsTable) {
    return {
      id: b.id,
      vps_id: b.server_id,
      name: b.name,
      description: b.description,
      kind: b.kind as BackupKind,
      status: b.status,
      format: 'tar.gz' as const,
      size_bytes: b.size_bytes === null ? null : Number(b.size_bytes),
      sha256: b.sha256,
      os_template: b.os_template,
      created_at: isoOf(b.created_at)!,
      completed_at: isoOf(b.completed_at),
      error: b.error,
    };
  }

  async server(customerId: string, id: string): Promise<VpsServersTable> {
    const row = await this.servers.server(customerId, id);
    if (!row) throw vpsErrors.notFound();
    return row;
  }

  async list(customerId: string, id: string) {
    await this.server(customerId, id);
    const rows = await this.repo.backups(id);
    // Newest first, like the control panels of DigitalOcean and Hetzner.
    const backups = rows.reverse().map((b) => this.view(b));
    return { backups, total: backups.length, max_backups: this.maxBackups() };
  }

  /**
   * Takes a backup now. The row is reserved under the server's lock (state, running backup and
   * limit checked there); the archive is written outside it, then the row made `available`.
   */
  async create(customerId: string, id: string, input: NewBackup, kind: BackupKind = 'manual') {
    const max = this.maxBackups();
    const now = this.clock.nowMs();
    const backupId = newId();
    const { row, spec } = await this.store.unitOfWork({ locks: [`vps:server:${id}`] }, async ({ tx }) => {
      const servers = VpsRepo.over(tx);
      const backups = BackupRepo.over(tx);
      const server = await servers.server(customerId, id);
      if (!server) throw vpsErrors.notFound();
      const s = settle(server, now);
      if (s.action === 'restore') throw vpsErrors.restoreInProgress(s.status);
      if (s.status !== 'running' && s.status !== 'stopped')
        throw vpsErrors.invalidState('back up', s.status, ['running', 'stopped']);
      const existing = await backups.backups(id);
      if (existing.some(beingTaken)) throw vpsErrors.backupInProgress();
      if (
        kind === 'manual' &&
        existing.filter((b) => b.kind === 'manual' && b.status !== 'failed').length >= max
      )
        throw vpsErrors.backupLimit(max);
      const row: VpsBackupsTable = {
        id: backupId,
        server_id: id,
        customer_id: customerId,
        name: input.name?.trim() || `${kind}-${new Date(now).toISOString().replace(/[:.]/g, '-')}`,
        description: input.description?.trim() || null,
        kind,
        status: 'creating',
        storage_key: `${customerId}/${id}/${backupId}.tar.gz`,
        size_bytes: null,
        sha256: null,
        os_template: s.os_template,
        error: null,
        created_at: now,
        completed_at: null,
        heartbeat_at: Date.now(),
      };
      await backups.insertBackup(row);
      return { row, spec: await servers.specOf(s) };
    });
    return this.view(await this.take(row, spec));
  }

  private async take(row: VpsBackupsTable, spec: ServerSpec): Promise<VpsBackupsTable> {
    const beat = setInterval(() => {
      this.repo.updateBackup(row.id, { heartbeat_at: Date.now() }).catch(() => {});
    }, HEARTBEAT_MS);
    beat.unref();
    let stored: { size: number; sha256: string };
    try {
      stored = await putArchive(this.files, row.storage_key, await this.driver.backup(spec));
    } catch (err) {
      await this.files.delete(row.storage_key).catch(() => {});
      await this.repo.updateBackup(row.id, {
        status: 'failed',
        error: (err as Error).message.slice(0, 500),
        heartbeat_at: null,
      });
      this.log.warn({ err, backup: row.id, vps: row.server_id }, 'virtual server backup failed');
      throw vpsErrors.backupFailed(err);
    } finally {
      clearInterval(beat);
    }
    row.status = 'available';
    row.size_bytes = stored.size;
    row.sha256 = stored.sha256;
    row.completed_at = this.clock.nowMs();
    row.heartbeat_at = null;
    const changed = await this.repo.updateBackup(row.id, {
      status: row.status,
      size_bytes: row.size_bytes,
      sha256: row.sha256,
      completed_at: row.completed_at,
      heartbeat_at: null,
    });
    if (changed === 0) {
      // The server (and so this backup) was deleted while the archive was written.
      await this.files.delete(row.storage_key).catch(() => {});
      throw vpsErrors.notFound();
    }
    return row;
  }

  async remove(customerId: string, id: string, backupId: string) {
    const row = await this.store.unitOfWork({ locks: [`vps:server:${id}`] }, async ({ tx }) => {
      const server = await VpsRepo.over(tx).server(customerId, id);
      if (!server) throw vpsErrors.notFound();
      const backups = BackupRepo.over(tx);
      const b = await backups.backup(id, backupId);
      if (!b) throw vpsErrors.backupNotFound();
      const s = settle(server, this.clock.nowMs());
      if (s.action === 'restore') throw vpsErrors.restoreInProgress(s.status);
      if (beingTaken(b)) throw vpsErrors.backupNotAvailable(b.status);
      await backups.deleteBackup(b.id);
      return b;
    });
    await this.files.delete(row.storage_key).catch((err) => {
      this.log.warn({ err, backup: row.id }, 'deleting a backup archive failed; its record is gone');
    });
    return { status: 'deleted' as const, backup_id: row.id };
  }

  /** Deletes one backup, row and archive (the policy prunes with it). */
  async drop(b: VpsBackupsTable) {
    await this.repo.deleteBackup(b.id);
    await this.files.delete(b.storage_key).catch((err) => {
      this.log.warn({ err, backup: b.id }, 'deleting a pruned backup archive failed');
    });
  }

  /** Deletes the archives of a deleted server's backups (the rows went with the server). */
  async dropFiles(keys: string[]) {
    for (const key of keys)
      await this.files.delete(key).catch((err) => {
        this.log.warn({ err, key }, 'deleting a backup archive of a deleted server failed');
      });
  }

  /**
   * Puts the stopped server's disk back as it was at the backup. The server is held (no start,
   * snapshot, rollback or other restore) while the archive is checked against its SHA-256 and
   * unpacked; a damaged archive changes nothing.
   */
  async restore(customerId: string, id: string, backupId: string) {
    const now = this.clock.nowMs();
    const { backup, spec } = await this.store.unitOfWork({ locks: [`vps:server:${id}`] }, async ({ tx }) => {
      const servers = VpsRepo.over(tx);
      const server = await servers.server(customerId, id);
      if (!server) throw vpsErrors.notFound();
      const backup = await BackupRepo.over(tx).backup(id, backupId);
      if (!backup) throw vpsErrors.backupNotFound();
      const s = settle(server, now);
      if (s.action === 'restore') throw vpsErrors.restoreInProgress(s.status);
      if (s.status !== 'stopped') throw vpsErrors.invalidState('restore', s.status, ['stopped']);
      if (backup.status !== 'available') throw vpsErrors.backupNotAvailable(backup.status);
      await servers.updateServer(id, {
        status: 'stopped',
        next_status: 'stopped',
        settles_at: now + RESTORE_HOLD_MS,
        action: 'restore',
        running_since: null,
      });
      return { backup, spec: await servers.specOf(s) };
    });
    try {
      await verifyArchive(this.files, backup);
      await this.driver.restore(spec, await this.files.get(backup.storage_key));
    } catch (err) {
      if (isAppError(err)) throw err;
      throw vpsErrors.backupUnreadable(err);
    } finally {
      await this.store
        .unitOfWork({ locks: [`vps:server:${id}`] }, async ({ tx }) => {
          const servers = VpsRepo.over(tx);
          const row = await servers.server(customerId, id);
          if (row?.action === 'restore')
            await servers.updateServer(id, { next_status: null, settles_at: null, action: null });
        })
        .catch((err) => this.log.warn({ err, vps: id }, 'releasing a server after a restore failed'));
    }
    return {
      status: 'restored' as const,
      backup_id: backup.id,
      vps_id: id,
      restored_at: isoOf(this.clock.nowMs())!,
      message: `The disk is as it was at backup ${backup.id} (${isoOf(backup.created_at)}); data written since is gone.`,
    };
  }

  async usage(customerId: string, id: string, currency?: string) {
    const server = await this.server(customerId, id);
    const prices = this.regions.pricing(server.region, currency);
    const rows = (await this.repo.backups(id)).filter((b) => b.status === 'available');
    const used = rows.reduce((sum, b) => sum + Number(b.size_bytes ?? 0), 0);
    const perGb = prices.services['vps']?.['snapshot_gb_per_month'] ?? 0;
    const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
    return {
      vps_id: id,
      region: server.region,
      server_status: settle(server, this.clock.nowMs()).status,
      backup_count: rows.length,
      manual_backups: rows.filter((b) => b.kind === 'manual').length,
      automatic_backups: rows.filter((b) => b.kind === 'automatic').length,
      max_backups: this.maxBackups(),
      used_bytes: used,
      used_gb: round(used / GB, 6),
      price_per_gb_month: perGb,
      estimated_monthly_cost: round((used / GB) * perGb, 4),
      currency: prices.currency,
    };
  }

  /** Job: marks `failed` the backups whose taking process stopped (a crash, a kill). */
  async failAbandoned(): Promise<number> {
    const n = await this.repo.failAbandoned(
      Date.now() - ABANDONED_AFTER_MS,
      'interrupted: the process taking the backup stopped',
    );
    if (n > 0)
      this.log.warn({ backups: n }, 'virtual server backups cut off by a stopped process marked failed');
    return n;
  }
}
