import type { Logger } from 'pino';
import type { Principal } from '../../../kernel/auth/principal.js';
import { type Clock, isoOf as iso } from '../../../kernel/clock.js';
import type { DbType } from '../drivers/driver.js';
import type { BackupPoliciesTable, DatabasesTable } from '../migrations.js';
import type { DatabasesRepo } from '../repo.js';
import { dbErrors } from '../rules.js';
import type { DatabasesService } from '../service.js';
import type { SnapshotService } from './snapshot-service.js';

const HOUR = 3600_000;

export interface PolicyInput {
  enabled: boolean;
  frequency?: 'hourly' | 'daily' | 'weekly';
  hour_utc?: number;
  retention_count?: number;
}

/**
 * The backup policy (DigitalOcean's backup window, Aiven's `backup_hour`): a schedule and a
 * retention per database, run by the job scheduler, which takes automatic snapshots and
 * prunes the oldest past the retention.
 */
export class BackupPolicyService {
  constructor(
    private readonly repo: DatabasesRepo,
    private readonly dbs: DatabasesService,
    private readonly snapshots: SnapshotService,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly planOf: (customerId: string) => Promise<string>,
  ) {}

  policyView(row: DatabasesTable, p: BackupPoliciesTable | undefined, plan: string) {
    return {
      db_name: row.technical_name,
      db_type: row.db_type,
      enabled: p ? p.enabled === 1 : false,
      frequency: p?.frequency ?? 'daily',
      hour_utc: p?.hour_utc ?? 3,
      retention_count: p?.retention_count ?? Math.min(7, this.dbs.quotas.of(plan).snapshotsPerDatabase),
      next_run_at: iso(p?.next_run_at ?? null),
      last_run_at: iso(p?.last_run_at ?? null),
    };
  }

  async getPolicy(customerId: string, dbType: DbType, name: string) {
    const row = await this.dbs.get(customerId, dbType, name);
    return this.policyView(row, await this.repo.policy(row.id), await this.planOf(customerId));
  }

  async putPolicy(principal: Principal, dbType: DbType, name: string, input: PolicyInput) {
    const row = await this.dbs.get(principal.customerId, dbType, name);
    const plan = await this.planOf(principal.customerId);
    const current = this.policyView(row, await this.repo.policy(row.id), plan);
    const max = this.dbs.quotas.of(plan).snapshotsPerDatabase;
    const retention = input.retention_count ?? Math.min(current.retention_count, max);
    if (retention > max) throw dbErrors.retentionTooHigh(max);
    const frequency = input.frequency ?? current.frequency;
    const hour = input.hour_utc ?? current.hour_utc;
    const now = this.clock.nowMs();
    const policy: BackupPoliciesTable = {
      database_id: row.id,
      customer_id: row.customer_id,
      enabled: input.enabled ? 1 : 0,
      frequency,
      hour_utc: hour,
      retention_count: retention,
      next_run_at: input.enabled ? nextRun(now, frequency, hour) : null,
      last_run_at: current.last_run_at ? Date.parse(current.last_run_at) : null,
      updated_at: now,
    };
    await this.repo.putPolicy(policy);
    await this.dbs.record(principal, row, 'database.backup_policy_updated', {
      enabled: input.enabled,
      frequency,
      hour_utc: hour,
      retention_count: retention,
    });
    return this.policyView(row, policy, plan);
  }

  /** Job: takes the automatic snapshots that came due and prunes past each policy's retention. */
  async runDueBackups(): Promise<number> {
    const now = this.clock.nowMs();
    let taken = 0;
    for (const p of await this.repo.duePolicies(now)) {
      // Moved on first, so a failing server does not make the job run the same backup in a loop.
      await this.repo.putPolicy({
        ...p,
        next_run_at: nextRun(now, p.frequency, p.hour_utc),
        last_run_at: now,
      });
      const row = await this.repo.byId(p.database_id);
      if (!row) continue;
      // Manual and automatic snapshots together stay within the plan's count: automatic ones
      // keep what the manual ones leave, up to the policy's retention.
      const max = this.dbs.quotas.of(await this.planOf(row.customer_id)).snapshotsPerDatabase;
      const manual = (await this.repo.snapshots(row.id, 'manual')).filter((s) => s.status !== 'failed');
      const keep = Math.min(p.retention_count, max - manual.length);
      if (keep <= 0) {
        this.log.warn(
          { database: row.technical_name, manual: manual.length, max },
          'automatic database snapshot skipped: manual snapshots use every place of the plan',
        );
        continue;
      }
      try {
        await this.snapshots.create(null, row, { kind: 'automatic' });
        taken++;
      } catch (err) {
        this.log.warn({ err, database: row.technical_name }, 'automatic database snapshot failed');
        continue;
      }
      // The oldest go once the new one is safe; failed attempts go too.
      const automatic = await this.repo.snapshots(row.id, 'automatic');
      const available = automatic.filter((s) => s.status === 'available');
      const prune = [
        ...automatic.filter((s) => s.status === 'failed'),
        ...available.slice(0, Math.max(0, available.length - keep)),
      ];
      for (const old of prune) await this.snapshots.drop(old);
    }
    return taken;
  }
}

/** The next time a policy runs after `now`: on the hour, at `hour_utc` daily, Sundays weekly. */
export function nextRun(now: number, frequency: string, hourUtc: number): number {
  if (frequency === 'hourly') return Math.floor(now / HOUR) * HOUR + HOUR;
  const d = new Date(now);
  let t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), hourUtc);
  if (t <= now) t += 24 * HOUR;
  if (frequency === 'weekly') while (new Date(t).getUTCDay() !== 0) t += 24 * HOUR;
  return t;
}
