import type { Logger } from 'pino';
import type { Principal } from '../../kernel/auth/principal.js';
import { type Clock, isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';

export { DEFAULT_POLICY } from './backup-take.js';

import type { Store } from '../../kernel/store/store.js';
import { type BackupKind, DAY_MS, DEFAULT_POLICY, stamp, takeBackup } from './backup-take.js';
import { type Cron, CronError, nextRun, parseCron } from './cron.js';
import type { ClusterDriver } from './drivers/driver.js';
import { clusterErrors } from './errors.js';
import { phaseOf, serves } from './lifecycle.js';
import type {
  K8sBackupPoliciesTable,
  K8sBackupsTable,
  K8sClustersTable,
  K8sRestoresTable,
} from './migrations.js';
import { ClusterRepo } from './repo.js';
import { actorOf, customerLock, historyEntry, presentCluster } from './service.js';

/** The cluster's local time: the time zone of its region's city. */
export const TIME_ZONES: Record<string, string> = {
  no: 'Europe/Oslo',
  se: 'Europe/Stockholm',
  dk: 'Europe/Copenhagen',
  fi: 'Europe/Helsinki',
};
/** Backups one run of the policy job takes for one cluster while catching up; the next run goes on. */
const MAX_CATCH_UP = 500;
const EXPIRE_BATCH = 500;
const NAMESPACE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Who takes scheduled backups and lets old ones go, as history shows it. */
const POLICY_ACTOR = 'system:backup-policy';
const RETENTION_ACTOR = 'system:backup-retention';

export interface PolicyInput {
  enabled?: boolean;
  schedule_cron?: string;
  retention_days?: number;
  include_volumes?: boolean;
  namespaces?: string[] | null;
}

const zoneOf = (row: K8sClustersTable) => TIME_ZONES[row.region] ?? 'UTC';
/** Backups are taken while the cluster runs (an upgrade included); not while it provisions or is deleted. */
const takesBackups = (row: K8sClustersTable, at: number) =>
  ['running', 'upgrading', 'degraded'].includes(phaseOf(row, at).status);
const statusOf = (b: K8sBackupsTable, now: number) =>
  b.error !== null ? 'Failed' : now < b.completed_at ? 'InProgress' : 'Completed';

/**
 * Cluster backups, Velero-style: a policy (cron in the cluster's local time, retention, volumes,
 * namespaces) that a job runs on Fjord's clock, manual backups, restores into the same cluster, and
 * expiry by retention. A backup is `InProgress` until the driver's time for it has passed, then
 * `Completed`: like the cluster itself, derived from stored times and the clock.
 */
export class BackupService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly driver: ClusterDriver,
    private readonly log: Logger,
  ) {}

  async getPolicy(customerId: string, id: string) {
    const repo = ClusterRepo.of(this.store);
    const now = this.clock.nowMs();
    const row = await presentCluster(repo, customerId, id, now);
    return this.policyView(row, await repo.policy(id), now);
  }

  /** Changes the fields given; the others keep their values. */
  async putPolicy(principal: Principal, id: string, input: PolicyInput) {
    const now = this.clock.nowMs();
    return this.store.unitOfWork({ locks: [customerLock(principal.customerId)] }, async ({ tx }) => {
      const repo = ClusterRepo.over(tx);
      const row = await presentCluster(repo, principal.customerId, id, now);
      const status = phaseOf(row, now).status;
      if (status === 'deleting') throw clusterErrors.notReady(status, 'a backup policy');
      const current = this.policyView(row, await repo.policy(id), now);
      const next = {
        enabled: input.enabled ?? current.enabled,
        schedule_cron: (input.schedule_cron ?? current.schedule_cron).trim().replace(/\s+/g, ' '),
        retention_days: input.retention_days ?? current.retention_days,
        include_volumes: input.include_volumes ?? current.include_volumes,
        namespaces:
          input.namespaces === undefined
            ? current.namespaces
            : input.namespaces === null
              ? null
              : checkNamespaces(input.namespaces),
      };
      const cron = checkCron(next.schedule_cron, zoneOf(row), now);
      if (!Number.isInteger(next.retention_days) || next.retention_days < 1 || next.retention_days > 365)
        throw clusterErrors.invalid('retention_days is 1-365.', '/body/retention_days');
      const policy: K8sBackupPoliciesTable = {
        cluster_id: id,
        enabled: next.enabled ? 1 : 0,
        schedule_cron: next.schedule_cron,
        retention_days: next.retention_days,
        include_volumes: next.include_volumes ? 1 : 0,
        namespaces: next.namespaces === null ? null : JSON.stringify(next.namespaces),
        next_run_at: next.enabled ? nextRun(cron, zoneOf(row), now) : null,
        updated_at: now,
      };
      await repo.putPolicy(policy);
      await repo.record(historyEntry(id, actorOf(principal), 'cluster.backup-policy', next, now));
      return this.policyView(row, policy, now);
    });
  }

  async list(customerId: string, id: string) {
    const repo = ClusterRepo.of(this.store);
    const now = this.clock.nowMs();
    await presentCluster(repo, customerId, id, now);
    const rows = await repo.backups(id, now);
    return { backups: rows.reverse().map((b) => backupView(b, now)) };
  }

  /** A manual backup with the policy's volume setting and retention; 202 while it runs. */
  async create(principal: Principal, id: string, namespaces: string[] | null) {
    const checked = namespaces === null ? null : checkNamespaces(namespaces);
    const now = this.clock.nowMs();
    return this.store.unitOfWork({ locks: [customerLock(principal.customerId)] }, async ({ tx }) => {
      const repo = ClusterRepo.over(tx);
      const row = await presentCluster(repo, principal.customerId, id, now);
      const status = phaseOf(row, now).status;
      if (!serves(status)) throw clusterErrors.notReady(status, 'a backup');
      const policy = this.policyView(row, await repo.policy(id), now);
      const names = new Set((await repo.backupNames(id)).map((b) => b.name));
      const backup = await this.take(repo, row, 'manual', now, checked, policy, names);
      await repo.record(
        historyEntry(id, actorOf(principal), 'cluster.backup.create', backupDetails(backup), now),
      );
      return { id: backup.id, name: backup.name, status: statusOf(backup, now) };
    });
  }

  /** Restores a Completed backup into the same cluster (all it holds, or some of its namespaces). */
  async restore(principal: Principal, id: string, backupId: string, namespaces: string[] | null) {
    const checked = namespaces === null ? null : checkNamespaces(namespaces);
    const now = this.clock.nowMs();
    return this.store.unitOfWork({ locks: [customerLock(principal.customerId)] }, async ({ tx }) => {
      const repo = ClusterRepo.over(tx);
      const row = await presentCluster(repo, principal.customerId, id, now);
      const backup = (await repo.backups(id, now)).find((b) => b.id === backupId);
      if (!backup) throw clusterErrors.notFound('Backup');
      const status = phaseOf(row, now).status;
      if (!serves(status)) throw clusterErrors.notReady(status, 'a restore');
      const backupStatus = statusOf(backup, now);
      if (backupStatus !== 'Completed') throw clusterErrors.backupNotReady(backupStatus);
      const held: string[] | null = backup.namespaces === null ? null : JSON.parse(backup.namespaces);
      const missing = checked && held ? checked.find((n) => !held.includes(n)) : undefined;
      if (missing)
        throw clusterErrors.invalid(
          `Backup ${backup.name} does not hold namespace ${missing}; it holds ${held!.join(', ')}.`,
          '/body/namespaces',
        );
      const last = await repo.lastRestore(id);
      if (last && now < last.completed_at) throw clusterErrors.restoreRunning(last.name);
      const { seconds } = await this.driver.startRestore({
        clusterId: id,
        backup: backup.name,
        namespaces: checked ?? held,
        includeVolumes: backup.include_volumes === 1,
      });
      const restore = {
        id: newId(),
        cluster_id: id,
        backup_id: backup.id,
        name: `${backup.name}-restore-${stamp(now)}`,
        namespaces: checked === null ? null : JSON.stringify(checked),
        started_at: now,
        completed_at: now + seconds * 1000,
      };
      await repo.insertRestore(restore);
      await repo.record(
        historyEntry(
          id,
          actorOf(principal),
          'cluster.backup.restore',
          {
            backup: backup.id,
            backup_name: backup.name,
            restore: restore.name,
            namespaces: checked,
            completes_at: isoOf(restore.completed_at),
          },
          now,
        ),
      );
      return { restore: restore.name, status: 'InProgress' };
    });
  }

  /**
   * The latest restores with their progress, derived like everything else here from stored
   * times and the clock: a restore is `InProgress` until the driver's time for it has passed.
   */
  async restores(customerId: string, id: string) {
    const repo = ClusterRepo.of(this.store);
    const now = this.clock.nowMs();
    await presentCluster(repo, customerId, id, now);
    const rows = await repo.restores(id, RESTORES_LISTED);
    return { restores: rows.map((r) => restoreView(r, now)) };
  }

  /** Job: takes the scheduled backups that came due (catching up after a clock jump) and expires old ones. */
  async runDue(): Promise<{ taken: number; expired: number }> {
    const now = this.clock.nowMs();
    const read = ClusterRepo.of(this.store);
    let taken = 0;
    for (const due of await read.duePolicies(now)) {
      const cluster = await read.clusterById(due.cluster_id);
      if (!cluster) continue;
      try {
        taken += await this.store.unitOfWork({ locks: [customerLock(cluster.customer_id)] }, async ({ tx }) =>
          this.catchUp(ClusterRepo.over(tx), due.cluster_id, now),
        );
      } catch (err) {
        this.log.warn({ err, cluster: cluster.technical_name }, 'scheduled cluster backup failed');
      }
    }
    let expired = 0;
    for (const b of await read.expiredBackups(now, EXPIRE_BATCH)) {
      const gone = await this.store.unitOfWork({}, async ({ tx }) => {
        const repo = ClusterRepo.over(tx);
        if (!(await repo.deleteBackup(b.id))) return false;
        await repo.record(
          historyEntry(
            b.cluster_id,
            RETENTION_ACTOR,
            'cluster.backup.expire',
            { backup: b.id, name: b.name, expired_at: isoOf(b.expires_at) },
            now,
          ),
        );
        return true;
      });
      if (gone) expired++;
    }
    return { taken, expired };
  }

  private async catchUp(repo: ClusterRepo, clusterId: string, now: number): Promise<number> {
    const p = await repo.policy(clusterId);
    const row = await repo.clusterById(clusterId);
    if (!p || !row || p.enabled !== 1 || p.next_run_at === null || p.next_run_at > now) return 0;
    const zone = zoneOf(row);
    if (row.delete_requested_at !== null) {
      await repo.putPolicy({ ...p, next_run_at: null });
      return 0;
    }
    const cron = parseCron(p.schedule_cron);
    const policy = policyFields(p);
    // Runs whose backup would already have expired by now are not taken.
    const keepFrom = now - p.retention_days * DAY_MS;
    let at: number | null = p.next_run_at > keepFrom ? p.next_run_at : nextRun(cron, zone, keepFrom);
    const names = new Set((await repo.backupNames(clusterId)).map((b) => b.name));
    let taken = 0;
    while (at !== null && at <= now && taken < MAX_CATCH_UP) {
      if (takesBackups(row, at)) {
        const b = await this.take(repo, row, 'scheduled', at, policy.namespaces, policy, names);
        await repo.record(
          historyEntry(clusterId, POLICY_ACTOR, 'cluster.backup.create', backupDetails(b), at),
        );
        taken++;
      }
      at = nextRun(cron, zone, at);
    }
    await repo.putPolicy({ ...p, next_run_at: at });
    return taken;
  }

  private take(
    repo: ClusterRepo,
    row: K8sClustersTable,
    kind: BackupKind,
    at: number,
    namespaces: string[] | null,
    policy: { retention_days: number; include_volumes: boolean },
    names: Set<string>,
  ) {
    return takeBackup(repo, this.driver, row, kind, at, namespaces, policy, names);
  }

  private policyView(row: K8sClustersTable, p: K8sBackupPoliciesTable | undefined, now: number) {
    const fields = p ? policyFields(p) : DEFAULT_POLICY;
    return {
      ...fields,
      active: fields.enabled && takesBackups(row, now),
      time_zone: zoneOf(row),
      next_run_at: isoOf(p?.next_run_at),
      updated_at: isoOf(p?.updated_at ?? row.created_at)!,
    };
  }
}

function policyFields(p: K8sBackupPoliciesTable) {
  return {
    enabled: p.enabled === 1,
    schedule_cron: p.schedule_cron,
    retention_days: p.retention_days,
    include_volumes: p.include_volumes === 1,
    namespaces: p.namespaces === null ? null : (JSON.parse(p.namespaces) as string[]),
  };
}

/** A valid five-field cron that runs at most once an hour (a single minute) and at all. */
function checkCron(text: string, zone: string, now: number): Cron {
  let cron: Cron;
  try {
    cron = parseCron(text);
  } catch (err) {
    if (err instanceof CronError)
      throw clusterErrors.invalid(`schedule_cron: ${err.message}.`, '/body/schedule_cron');
    throw err;
  }
  if (cron.minutes.length !== 1)
    throw clusterErrors.invalid(
      'schedule_cron: name one minute (backups run at most once an hour), e.g. "0 3 * * *".',
      '/body/schedule_cron',
    );
  if (nextRun(cron, zone, now) === null)
    throw clusterErrors.invalid('schedule_cron never runs.', '/body/schedule_cron');
  return cron;
}

function checkNamespaces(namespaces: string[]): string[] {
  const out = [...new Set(namespaces)];
  if (out.length === 0 || out.length > 50)
    throw clusterErrors.invalid('namespaces: 1-50 names, or null for every namespace.', '/body/namespaces');
  out.forEach((n, i) => {
    if (!NAMESPACE.test(n))
      throw clusterErrors.invalid(
        `namespace ${n}: 1-63 lowercase letters, digits and hyphens, as Kubernetes names namespaces.`,
        `/body/namespaces/${i}`,
      );
  });
  return out;
}

function backupDetails(b: K8sBackupsTable) {
  return {
    backup: b.id,
    name: b.name,
    kind: b.kind,
    namespaces: b.namespaces === null ? null : JSON.parse(b.namespaces),
    include_volumes: b.include_volumes === 1,
    expires_at: isoOf(b.expires_at),
  };
}

/** How many restores the list shows: the latest, which is what a person follows. */
const RESTORES_LISTED = 20;

function restoreView(r: K8sRestoresTable, now: number) {
  const started = Number(r.started_at);
  const ends = Number(r.completed_at);
  const done = now >= ends;
  return {
    id: r.id,
    name: r.name,
    backup_id: r.backup_id,
    status: done ? 'Completed' : 'InProgress',
    namespaces: r.namespaces === null ? null : (JSON.parse(r.namespaces) as string[]),
    started_at: isoOf(started)!,
    completes_at: isoOf(ends)!,
    progress_percent: done
      ? 100
      : Math.floor((100 * Math.max(0, now - started)) / Math.max(1, ends - started)),
    next_change_in_seconds: done ? null : Math.ceil((ends - now) / 1000),
  };
}

function backupView(b: K8sBackupsTable, now: number) {
  const status = statusOf(b, now);
  return {
    id: b.id,
    kind: b.kind,
    name: b.name,
    status,
    started_at: isoOf(b.started_at)!,
    completed_at: status === 'Completed' ? isoOf(b.completed_at) : null,
    expires_at: isoOf(b.expires_at)!,
    items_count: status === 'Completed' ? b.items_count : 0,
    error: b.error,
    namespaces: b.namespaces === null ? null : (JSON.parse(b.namespaces) as string[]),
    include_volumes: b.include_volumes === 1,
  };
}
