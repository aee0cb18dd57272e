import type { AnyDb, UnitDb } from '../../kernel/store/unit-of-work.js';
import type {
  BackupPoliciesTable,
  DatabasesTable,
  DatabasesTables,
  FirewallRulesTable,
  SnapshotsTable,
} from './migrations.js';

/**
 * Queries on databases, their firewall rules, snapshots and backup policies. Bound to the store for
 * reads, or to a unit's transaction (`DatabasesRepo.over`, through `unitsOf`): the checks that
 * need a unit (a plan's quota) are the services'.
 */
export class DatabasesRepo {
  constructor(private readonly db: UnitDb<DatabasesTables>) {}

  static over(db: AnyDb): DatabasesRepo {
    return new DatabasesRepo(db);
  }

  insert(row: DatabasesTable) {
    return this.db.insertInto('databases').values(row).execute();
  }
  list(customerId: string, dbType?: string) {
    let q = this.db.selectFrom('databases').selectAll().where('customer_id', '=', customerId);
    if (dbType) q = q.where('db_type', '=', dbType);
    return q.orderBy('created_at').orderBy('id').execute();
  }
  async count(customerId: string): Promise<number> {
    const r = await this.db
      .selectFrom('databases')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
  /** By technical name, or by the friendly name the customer chose. */
  find(customerId: string, dbType: string, name: string) {
    return this.db
      .selectFrom('databases')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('db_type', '=', dbType)
      .where((eb) => eb.or([eb('technical_name', '=', name), eb('friendly_name', '=', name)]))
      .orderBy('technical_name')
      .executeTakeFirst();
  }
  byTechnicalName(dbType: string, name: string) {
    return this.db
      .selectFrom('databases')
      .selectAll()
      .where('db_type', '=', dbType)
      .where('technical_name', '=', name)
      .executeTakeFirst();
  }
  /** Every database of every customer, in pages (the size review walks them all). */
  allAfter(afterId: string, limit: number) {
    return this.db
      .selectFrom('databases')
      .selectAll()
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  byId(id: string) {
    return this.db.selectFrom('databases').selectAll().where('id', '=', id).executeTakeFirst();
  }
  update(id: string, patch: Partial<DatabasesTable>) {
    return this.db.updateTable('databases').set(patch).where('id', '=', id).execute();
  }
  delete(id: string) {
    return this.db.deleteFrom('databases').where('id', '=', id).execute();
  }

  insertRule(row: FirewallRulesTable) {
    return this.db.insertInto('database_firewall_rules').values(row).execute();
  }
  rules(databaseId: string) {
    return this.db
      .selectFrom('database_firewall_rules')
      .selectAll()
      .where('database_id', '=', databaseId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  /** Every firewalled database of one engine (the managed pg_hba.conf holds them all). */
  async rulesOfEngine(dbType: string): Promise<Map<string, string[]>> {
    const rows = await this.db
      .selectFrom('database_firewall_rules as r')
      .innerJoin('databases as d', 'd.id', 'r.database_id')
      .select(['d.technical_name as name', 'r.cidr as cidr'])
      .where('d.db_type', '=', dbType)
      .orderBy('r.created_at')
      .execute();
    const out = new Map<string, string[]>();
    for (const r of rows) out.set(r.name, [...(out.get(r.name) ?? []), r.cidr]);
    return out;
  }
  async deleteRule(databaseId: string, ruleId: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('database_firewall_rules')
      .where('database_id', '=', databaseId)
      .where('id', '=', ruleId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Snapshots of a database that count against its plan's place: manual and automatic, not failed ones. */
  async keptSnapshots(databaseId: string): Promise<number> {
    const r = await this.db
      .selectFrom('database_snapshots')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('database_id', '=', databaseId)
      .where('status', '!=', 'failed')
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
  insertSnapshot(row: SnapshotsTable) {
    return this.db.insertInto('database_snapshots').values(row).execute();
  }
  /** Snapshots still `creating` whose process stopped beating before `before` (epoch ms, wall time). */
  async failAbandonedSnapshots(before: number, error: string): Promise<number> {
    const r = await this.db
      .updateTable('database_snapshots')
      .set({ status: 'failed', error, heartbeat_at: null })
      .where('status', '=', 'creating')
      .where('heartbeat_at', '<', before)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
  updateSnapshot(id: string, patch: Partial<SnapshotsTable>) {
    return this.db.updateTable('database_snapshots').set(patch).where('id', '=', id).execute();
  }
  snapshots(databaseId: string, kind?: string) {
    let q = this.db.selectFrom('database_snapshots').selectAll().where('database_id', '=', databaseId);
    if (kind) q = q.where('kind', '=', kind as SnapshotsTable['kind']);
    return q.orderBy('created_at').orderBy('id').execute();
  }
  snapshot(customerId: string, id: string) {
    return this.db
      .selectFrom('database_snapshots')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  deleteSnapshot(id: string) {
    return this.db.deleteFrom('database_snapshots').where('id', '=', id).execute();
  }

  policy(databaseId: string) {
    return this.db
      .selectFrom('database_backup_policies')
      .selectAll()
      .where('database_id', '=', databaseId)
      .executeTakeFirst();
  }
  async putPolicy(row: BackupPoliciesTable) {
    const { database_id: _, ...changes } = row;
    await this.db
      .insertInto('database_backup_policies')
      .values(row)
      .onConflict((oc) => oc.column('database_id').doUpdateSet(changes))
      .execute();
  }
  duePolicies(now: number) {
    return this.db
      .selectFrom('database_backup_policies')
      .selectAll()
      .where('enabled', '=', 1)
      .where('next_run_at', '<=', now)
      .execute();
  }
}
