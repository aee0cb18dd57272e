import type { Principal } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import { isUniqueViolation } from '../../kernel/store/dialect.js';
import { type DbType, FirewallUnmanaged, normaliseCidr } from './drivers/driver.js';
import type { DatabasesTable } from './migrations.js';
import type { DatabasesRepo } from './repo.js';
import { dbErrors } from './rules.js';
import type { DatabasesService } from './service.js';

/**
 * Firewall rules: stored, then applied on the engine's server before the answer (a rule the
 * server could not apply is removed again, so what the API lists is what the server enforces).
 */
export class FirewallService {
  constructor(
    private readonly repo: DatabasesRepo,
    private readonly dbs: DatabasesService,
    private readonly clock: Clock,
  ) {}

  async rules(customerId: string, dbType: DbType, name: string) {
    const row = await this.dbs.get(customerId, dbType, name);
    const { port } = await this.dbs.endpointOf(dbType);
    const rules = await this.repo.rules(row.id);
    return { row, port, rules };
  }

  private async applyRules(row: DatabasesTable) {
    const dbType = row.db_type as DbType;
    const cidrs = (await this.repo.rules(row.id)).map((r) => r.cidr);
    try {
      // PostgreSQL's managed pg_hba.conf holds every database's rules: one writer at a time.
      await this.dbs.exclusive(`firewall:${dbType}`, () =>
        this.dbs.onServer(dbType, async (d) => {
          await d.applyFirewall(this.dbs.ref(row), cidrs, () => this.repo.rulesOfEngine(dbType));
          // A new MariaDB account starts with every privilege: a database over its size quota
          // keeps its block on the new account too.
          if (row.writes_blocked_at) await d.setWritesBlocked(this.dbs.ref(row), true);
        }),
      );
    } catch (err) {
      if (err instanceof FirewallUnmanaged) throw dbErrors.firewallUnmanaged(err.message);
      throw err;
    }
  }

  async addRule(principal: Principal, dbType: DbType, name: string, ip: string, description: string | null) {
    const row = await this.dbs.get(principal.customerId, dbType, name);
    const cidr = normaliseCidr(ip);
    if (!cidr) throw dbErrors.badIp(ip);
    // The 50-rule check and the insert, and the accounts a rule makes on MariaDB (which copy
    // the current password), must not interleave with another change of this database.
    return this.dbs.exclusive(row.id, () => this.insertAndApply(principal, row, ip, cidr, description));
  }

  private async insertAndApply(
    principal: Principal,
    row: DatabasesTable,
    ip: string,
    cidr: string,
    description: string | null,
  ) {
    const dbType = row.db_type as DbType;
    const existing = await this.repo.rules(row.id);
    if (existing.some((r) => r.cidr === cidr)) throw dbErrors.ruleExists(ip);
    const max = this.dbs.quotas.of(await this.dbs.planOf(row.customer_id)).firewallRules;
    if (existing.length >= max) throw dbErrors.tooManyRules(max);
    const rule = {
      id: newId(),
      database_id: row.id,
      customer_id: row.customer_id,
      ip_address: cidr.endsWith('/32') ? cidr.slice(0, -3) : cidr,
      cidr,
      description,
      created_at: this.clock.nowMs(),
    };
    try {
      await this.repo.insertRule(rule);
    } catch (err) {
      if (isUniqueViolation(err)) throw dbErrors.ruleExists(ip);
      throw err;
    }
    try {
      await this.applyRules(row);
    } catch (err) {
      // Not enforced means not acknowledged: the rule goes again.
      await this.repo.deleteRule(row.id, rule.id);
      throw err;
    }
    await this.dbs.record(principal, row, 'database.firewall_rule_added', {
      rule_id: rule.id,
      ip_address: rule.ip_address,
    });
    const { port } = await this.dbs.endpointOf(dbType);
    return { row, rule, port };
  }

  async deleteRule(principal: Principal, dbType: DbType, name: string, ruleId: string) {
    const row = await this.dbs.get(principal.customerId, dbType, name);
    await this.dbs.exclusive(row.id, () => this.removeAndApply(principal, row, ruleId));
  }

  private async removeAndApply(principal: Principal, row: DatabasesTable, ruleId: string) {
    const rule = (await this.repo.rules(row.id)).find((r) => r.id === ruleId);
    if (!rule) throw dbErrors.ruleNotFound();
    await this.repo.deleteRule(row.id, ruleId);
    try {
      await this.applyRules(row);
    } catch (err) {
      await this.repo.insertRule(rule).catch(() => {});
      throw err;
    }
    await this.dbs.record(principal, row, 'database.firewall_rule_deleted', {
      rule_id: ruleId,
      ip_address: rule.ip_address,
    });
  }
}
