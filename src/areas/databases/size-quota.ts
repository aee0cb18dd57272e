import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { DbType } from './drivers/driver.js';
import type { DatabasesTable } from './migrations.js';
import type { DatabasesRepo } from './repo.js';
import type { DatabaseQuotas } from './rules.js';
import type { DatabasesService } from './service.js';

export const SIZE_REVIEW_JOB = 'databases.size.review';
/** How often sizes are compared with the plans (on Fjord's clock). */
export const SIZE_REVIEW_SECONDS = 300;
const MB = 1024 * 1024;

/**
 * The size quota of each plan (1 GB free, 10 GB basic, 100 GB pro, 1 TB enterprise per
 * database). Neither engine can cap a database's size by itself, so a job compares every
 * database's size with its owner's plan every five minutes: over it, writes that make the
 * database grow are blocked (see `EngineDriver.setWritesBlocked`) and the database reports status
 * `read_only`; back under it, they are allowed again. The block is re-applied on every pass, so a
 * new firewall account or a hand-made grant does not lift it for long.
 */
export class DatabaseSizeQuota {
  constructor(
    private readonly repo: DatabasesRepo,
    private readonly service: DatabasesService,
    private readonly quotas: DatabaseQuotas,
    private readonly planOf: (customerId: string) => Promise<string>,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  async review(): Promise<{ blocked: number; allowed: number }> {
    let blocked = 0;
    let allowed = 0;
    const plans = new Map<string, string>();
    for (let after = ''; ; ) {
      const page = await this.repo.allAfter(after, 200);
      for (const row of page) {
        try {
          const plan = plans.get(row.customer_id) ?? (await this.planOf(row.customer_id));
          plans.set(row.customer_id, plan);
          const change = await this.reviewOne(row, this.quotas.of(plan).sizeMb * MB);
          if (change === 'blocked') blocked++;
          if (change === 'allowed') allowed++;
        } catch (err) {
          // One server that does not answer must not stop the review of the others.
          this.log.warn({ err, database: row.technical_name }, 'database size review failed');
        }
      }
      if (page.length < 200) break;
      after = page[page.length - 1]!.id;
    }
    return { blocked, allowed };
  }

  private async reviewOne(row: DatabasesTable, quotaBytes: number): Promise<'blocked' | 'allowed' | null> {
    const info = await this.service.serverInfo(row);
    // `read_only` is this review's own doing (a blocked database); anything else is the server's.
    if ((info.status !== 'running' && info.status !== 'read_only') || info.sizeBytes === null) return null;
    const over = info.sizeBytes > quotaBytes;
    const wasBlocked = row.writes_blocked_at !== null && row.writes_blocked_at !== undefined;
    if (!over && !wasBlocked) return null;
    await this.service.onServer(row.db_type as DbType, (d) =>
      d.setWritesBlocked(this.service.ref(row), over),
    );
    if (over === wasBlocked) return null;
    await this.repo.update(row.id, { writes_blocked_at: over ? this.clock.nowMs() : null });
    this.log.info(
      { database: row.technical_name, size_mb: Math.round(info.sizeBytes / MB), quota_mb: quotaBytes / MB },
      over
        ? 'database over its size quota: writes blocked'
        : 'database back under its size quota: writes allowed',
    );
    return over ? 'blocked' : 'allowed';
  }
}
