import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import type { DbType } from './drivers/driver.js';
import type { DatabasesRepo } from './repo.js';
import { toMb } from './rules.js';
import type { DatabasesService } from './service.js';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * What the customer reads about their databases as a whole or over time: server statistics
 * (metrics), the audit trail (history), the plan's quota and the engines on offer.
 */
export class DatabaseReports {
  constructor(
    private readonly dbs: DatabasesService,
    private readonly repo: DatabasesRepo,
    private readonly identity: IdentityService,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  async metrics(customerId: string, dbType: DbType, name: string) {
    const row = await this.dbs.get(customerId, dbType, name);
    const m = await this.dbs.onServer(dbType, (d) => d.metrics(this.dbs.ref(row)));
    return {
      db_name: row.technical_name,
      db_type: dbType,
      collected_at: iso(this.clock.nowMs()),
      connections: { active: m.connections, limit: row.connection_limit },
      size_mb: toMb(m.sizeBytes) ?? 0,
      transactions: { commits: m.commits, rollbacks: m.rollbacks },
      cache_hit_ratio: m.cacheHitRatio === null ? null : Math.round(m.cacheHitRatio * 10000) / 10000,
      cache_hit_scope: m.cacheHitScope,
      rows: { read: m.rowsRead, written: m.rowsWritten },
    };
  }

  async history(customerId: string, filter: { dbName?: string; limit: number; offset: number }) {
    return this.audit.list(customerId, {
      area: 'databases',
      resourceType: 'database',
      resourceId: filter.dbName ? await this.technicalNameOf(customerId, filter.dbName) : undefined,
      limit: filter.limit,
      offset: filter.offset,
    });
  }

  /**
   * The history is kept under technical names (it outlives the database); a friendly name is
   * accepted too while exactly one live database carries it.
   */
  private async technicalNameOf(customerId: string, name: string): Promise<string> {
    const named = (await this.repo.list(customerId)).filter((r) => r.friendly_name === name);
    return named.length === 1 ? named[0]!.technical_name : name;
  }

  async quota(customerId: string) {
    const customer = await this.identity.getCustomer(customerId);
    const plan = customer?.plan ?? 'free';
    const q = this.dbs.quotas.of(plan);
    return { plan, quota: q, used: await this.repo.count(customerId) };
  }

  async engineList() {
    const out = [];
    for (const dbType of ['postgresql', 'mariadb'] as const) {
      const plan = this.dbs.engines.plans[dbType];
      let version: string | null = null;
      try {
        version = await (await this.dbs.engines.driver(dbType)).version();
      } catch {
        version = null;
      }
      out.push({
        name: dbType,
        versions: version ? [version] : [],
        default_version: version,
        driver: plan.kind,
        simulated: plan.kind === 'simulated',
        status: version ? 'available' : 'unavailable',
      });
    }
    return out;
  }
}
