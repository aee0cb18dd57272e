import type { Logger } from 'pino';
import { type Clock, isoOf } from '../../../kernel/clock.js';
import type { Store } from '../../../kernel/store/store.js';
import { vpsErrors } from '../errors.js';
import type { VpsBackupPoliciesTable } from '../migrations.js';
import { VpsRepo } from '../repo.js';
import { settle } from '../server-moves.js';
import type { BackupService } from './backup-service.js';
import { BackupRepo } from './repo.js';

const HOUR = 3600_000;
export type Frequency = 'daily' | 'weekly';

export interface PolicyInput {
  enabled: boolean;
  frequency?: Frequency;
  hour_utc?: number;
  day_of_week?: number;
  retention_count?: number;
}

/**
 * The backup policy of a server, like DigitalOcean's backup schedule (daily or weekly, in a
 * chosen hour) and Hetzner's backup slots (a fixed number kept, the oldest pruned): the kernel's
 * job scheduler takes the automatic backups that come due on Fjord's clock.
 */
export class BackupPolicyService {
  private readonly repo: BackupRepo;
  private readonly servers: VpsRepo;

  constructor(
    private readonly store: Store,
    private readonly backups: BackupService,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.repo = BackupRepo.of(store);
    this.servers = VpsRepo.of(store);
  }

  view(serverId: string, p: VpsBackupPoliciesTable | undefined) {
    const max = this.backups.maxBackups();
    return {
      vps_id: serverId,
      enabled: p ? p.enabled === 1 : false,
      frequency: (p?.frequency ?? 'daily') as Frequency,
      hour_utc: p?.hour_utc ?? 3,
      day_of_week: p?.day_of_week ?? 0,
      retention_count: p?.retention_count ?? max,
      max_retention: max,
      next_run_at: isoOf(p?.next_run_at ?? null),
      last_run_at: isoOf(p?.last_run_at ?? null),
      updated_at: isoOf(p?.updated_at ?? null),
    };
  }

  async get(customerId: string, id: string) {
    await this.backups.server(customerId, id);
    return this.view(id, await this.repo.policy(id));
  }

  async put(customerId: string, id: string, input: PolicyInput) {
    const max = this.backups.maxBackups();
    if (input.retention_count !== undefined && input.retention_count > max)
      throw vpsErrors.retentionTooHigh(max);
    const policy = await this.store.unitOfWork({ locks: [`vps:server:${id}`] }, async ({ tx }) => {
      if (!(await VpsRepo.over(tx).server(customerId, id))) throw vpsErrors.notFound();
      const repo = BackupRepo.over(tx);
      const current = await repo.policy(id);
      const now = this.clock.nowMs();
      const frequency = input.frequency ?? ((current?.frequency ?? 'daily') as Frequency);
      const hour = input.hour_utc ?? current?.hour_utc ?? 3;
      const day = input.day_of_week ?? current?.day_of_week ?? 0;
      const row: VpsBackupPoliciesTable = {
        server_id: id,
        customer_id: customerId,
        enabled: input.enabled ? 1 : 0,
        frequency,
        hour_utc: hour,
        day_of_week: day,
        retention_count: input.retention_count ?? Math.min(current?.retention_count ?? max, max),
        next_run_at: input.enabled ? nextRun(now, frequency, hour, day) : null,
        last_run_at: current?.last_run_at ?? null,
        updated_at: now,
      };
      await repo.putPolicy(row);
      return row;
    });
    return this.view(id, policy);
  }

  /**
   * Job: takes the automatic backups that came due and prunes past each policy's retention. A
   * server that is moving (provisioning, starting, stopping, being restored) is tried again at
   * the next tick; one deleted meanwhile has no policy left.
   */
  async runDue(): Promise<number> {
    const now = this.clock.nowMs();
    let taken = 0;
    for (const p of await this.repo.duePolicies(now)) {
      const row = await this.servers.byId(p.server_id);
      if (!row) continue;
      const s = settle(row, now);
      if (s.action === 'restore' || (s.status !== 'running' && s.status !== 'stopped')) continue;
      // Moved on first, so a failing server does not make the job take the same backup in a loop;
      // under the server's lock, and only if the policy (perhaps just PUT) is still due.
      const due = await this.store.unitOfWork({ locks: [`vps:server:${p.server_id}`] }, async ({ tx }) => {
        const repo = BackupRepo.over(tx);
        const current = await repo.policy(p.server_id);
        if (current?.enabled !== 1 || current.next_run_at === null || current.next_run_at > now) return null;
        const next = nextRun(now, current.frequency as Frequency, current.hour_utc, current.day_of_week);
        await repo.markRun(p.server_id, next, now);
        return current;
      });
      if (!due) continue;
      try {
        await this.backups.create(p.customer_id, p.server_id, {}, 'automatic');
        taken++;
      } catch (err) {
        this.log.warn({ err, vps: p.server_id }, 'automatic virtual server backup failed');
      }
      // The oldest go once the new one is safe; failed attempts go too.
      const automatic = await this.repo.backups(p.server_id, 'automatic');
      const available = automatic.filter((b) => b.status === 'available');
      const prune = [
        ...automatic.filter((b) => b.status === 'failed'),
        ...available.slice(0, Math.max(0, available.length - due.retention_count)),
      ];
      for (const old of prune) await this.backups.drop(old);
    }
    return taken;
  }
}

/**
 * The next run after `now`: daily at `hourUtc`:00 UTC; weekly on `dayOfWeek` (0 = Sunday) at
 * that hour.
 */
export function nextRun(now: number, frequency: Frequency, hourUtc: number, dayOfWeek: number): number {
  const d = new Date(now);
  let t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), hourUtc);
  if (t <= now) t += 24 * HOUR;
  if (frequency === 'weekly') while (new Date(t).getUTCDay() !== dayOfWeek) t += 24 * HOUR;
  return t;
}
