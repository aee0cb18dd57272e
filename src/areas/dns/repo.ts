import { type Kysely, sql } from 'kysely';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type {
  DnsKeysTable,
  DnsQueryPausesTable,
  DnsQueryStatsTable,
  DnsRecordsTable,
  DnsTables,
  DnsTsigKeysTable,
  DnsZonesTable,
} from './migrations.js';

/**
 * Every DNS query. Bound to the store's Kysely or to a unit's transaction (`DnsRepo.over`); units
 * are opened by the area's code through `unitsOf` (index.ts), never by the repo.
 */
export class DnsRepo {
  constructor(readonly db: Kysely<DnsTables>) {}

  static over(db: AnyDb): DnsRepo {
    return new DnsRepo(db);
  }

  // Zones

  insertZone(row: DnsZonesTable) {
    return this.db.insertInto('dns_zones').values(row).execute();
  }
  zoneByName(name: string) {
    return this.db.selectFrom('dns_zones').selectAll().where('name', '=', name).executeTakeFirst();
  }
  zoneById(id: string) {
    return this.db.selectFrom('dns_zones').selectAll().where('id', '=', id).executeTakeFirst();
  }
  zonesOf(customerId: string) {
    return this.db
      .selectFrom('dns_zones')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('name')
      .execute();
  }
  async countZones(customerId: string): Promise<number> {
    const r = await this.db
      .selectFrom('dns_zones')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('customer_id', '=', customerId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
  /** Zones that are `name` itself, one of its parents, or lie below it. */
  overlapping(name: string, parents: string[]) {
    return this.db
      .selectFrom('dns_zones')
      .select(['id', 'name', 'customer_id'])
      .where((eb) => eb.or([eb('name', 'in', [name, ...parents]), eb('name', 'like', `%.${name}`)]))
      .execute();
  }
  /** Zones whose apex is one of `names` (a name and its parents), for finding the zone of a name. */
  zonesNamed(names: string[]) {
    if (names.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('dns_zones').selectAll().where('name', 'in', names).execute();
  }
  zonesWithStatus(status: DnsZonesTable['status']) {
    return this.db.selectFrom('dns_zones').selectAll().where('status', '=', status).execute();
  }
  /** Zones to serve in `month`: not disabled, and not paused for the month's query quota. */
  servedZones(month: string) {
    return this.db
      .selectFrom('dns_zones')
      .selectAll()
      .where('status', '!=', 'disabled')
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('dns_query_pauses')
              .select('dns_query_pauses.customer_id')
              .whereRef('dns_query_pauses.customer_id', '=', 'dns_zones.customer_id')
              .where('dns_query_pauses.month', '=', month),
          ),
        ),
      )
      .execute();
  }
  async setStatus(
    id: string,
    from: DnsZonesTable['status'][],
    to: DnsZonesTable['status'],
    at: number,
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('dns_zones')
      .set({ status: to, updated_at: at })
      .where('id', '=', id)
      .where('status', 'in', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
  markChecked(id: string, at: number) {
    return this.db.updateTable('dns_zones').set({ delegation_checked_at: at }).where('id', '=', id).execute();
  }
  /** Takes the zone's row lock (PostgreSQL) before reading its records, so changes to one zone serialise. */
  async lockZone(id: string, at: number): Promise<DnsZonesTable | undefined> {
    await this.db.updateTable('dns_zones').set({ updated_at: at }).where('id', '=', id).execute();
    return this.zoneById(id);
  }
  setSerial(id: string, serial: number, at: number) {
    return this.db.updateTable('dns_zones').set({ serial, updated_at: at }).where('id', '=', id).execute();
  }
  setDnssec(id: string, enabled: boolean, serial: number, at: number) {
    return this.db
      .updateTable('dns_zones')
      .set({ dnssec_enabled: enabled ? 1 : 0, serial, updated_at: at })
      .where('id', '=', id)
      .execute();
  }
  async deleteZone(id: string): Promise<boolean> {
    await this.db.deleteFrom('dns_query_stats').where('zone_id', '=', id).execute();
    const r = await this.db.deleteFrom('dns_zones').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  // Records

  records(zoneId: string) {
    return this.db
      .selectFrom('dns_records')
      .selectAll()
      .where('zone_id', '=', zoneId)
      .orderBy('name')
      .orderBy('type')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  recordsOfZones(zoneIds: string[]): Promise<DnsRecordsTable[]> {
    return inChunks(zoneIds, (ids) =>
      this.db.selectFrom('dns_records').selectAll().where('zone_id', 'in', ids).execute(),
    );
  }
  async recordCounts(zoneIds: string[]): Promise<Map<string, number>> {
    const rows = await inChunks(zoneIds, (ids) =>
      this.db
        .selectFrom('dns_records')
        .select(['zone_id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('zone_id', 'in', ids)
        .groupBy('zone_id')
        .execute(),
    );
    return new Map(rows.map((r) => [r.zone_id, Number(r.n)]));
  }
  async insertRecords(rows: DnsRecordsTable[]) {
    // Chunks keep each statement under SQLite's bound-parameter limit.
    for (let i = 0; i < rows.length; i += 100) {
      await this.db
        .insertInto('dns_records')
        .values(rows.slice(i, i + 100))
        .execute();
    }
  }
  updateRecord(row: DnsRecordsTable) {
    return this.db
      .updateTable('dns_records')
      .set({ name: row.name, content: row.content, ttl: row.ttl, priority: row.priority })
      .where('id', '=', row.id)
      .where('zone_id', '=', row.zone_id)
      .execute();
  }
  async deleteRecords(zoneId: string, ids: string[]) {
    for (let i = 0; i < ids.length; i += 500) {
      await this.db
        .deleteFrom('dns_records')
        .where('zone_id', '=', zoneId)
        .where('id', 'in', ids.slice(i, i + 500))
        .execute();
    }
  }

  // Signing keys

  key(zoneId: string) {
    return this.db.selectFrom('dns_keys').selectAll().where('zone_id', '=', zoneId).executeTakeFirst();
  }
  keysOf(zoneIds: string[]): Promise<DnsKeysTable[]> {
    return inChunks(zoneIds, (ids) =>
      this.db.selectFrom('dns_keys').selectAll().where('zone_id', 'in', ids).execute(),
    );
  }
  insertKey(row: DnsKeysTable) {
    return this.db.insertInto('dns_keys').values(row).execute();
  }

  // Query statistics

  /** The owner of each zone of `ids` that still exists. */
  async zoneOwners(ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('dns_zones')
      .select(['id', 'customer_id'])
      .where('id', 'in', ids)
      .execute();
    return new Map(rows.map((r) => [r.id, r.customer_id]));
  }

  // Monthly query quota

  /** Queries counted since `fromDay` (inclusive), summed per customer over all its zones. */
  async queriesByCustomer(customerIds: string[], fromDay: string): Promise<Map<string, number>> {
    if (customerIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('dns_query_stats')
      .innerJoin('dns_zones', 'dns_zones.id', 'dns_query_stats.zone_id')
      .select(['dns_zones.customer_id', (eb) => eb.fn.sum<number | string>('dns_query_stats.count').as('n')])
      .where('dns_zones.customer_id', 'in', customerIds)
      .where('dns_query_stats.day', '>=', fromDay)
      .groupBy('dns_zones.customer_id')
      .execute();
    return new Map(rows.map((r) => [r.customer_id, Number(r.n)]));
  }
  queryPause(customerId: string) {
    return this.db
      .selectFrom('dns_query_pauses')
      .selectAll()
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
  }
  queryPauses() {
    return this.db.selectFrom('dns_query_pauses').selectAll().execute();
  }
  /** Records the pause; false when this month's pause was already there (another process wrote it). */
  async pauseQueries(row: DnsQueryPausesTable): Promise<boolean> {
    const r = await this.db
      .insertInto('dns_query_pauses')
      .values(row)
      .onConflict((oc) =>
        oc
          .column('customer_id')
          .doUpdateSet({
            month: row.month,
            paused_at: row.paused_at,
            queries: row.queries,
            query_limit: row.query_limit,
          })
          .where('dns_query_pauses.month', '!=', row.month),
      )
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }
  /** Ends the pause of `month`; false when it was already ended. */
  async resumeQueries(customerId: string, month: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('dns_query_pauses')
      .where('customer_id', '=', customerId)
      .where('month', '=', month)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
  addStats(rows: DnsQueryStatsTable[]) {
    return this.db
      .insertInto('dns_query_stats')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['zone_id', 'day', 'qtype']).doUpdateSet({
          count: sql`dns_query_stats.count + excluded.count`,
          total_micros: sql`dns_query_stats.total_micros + excluded.total_micros`,
        }),
      )
      .execute();
  }
  async purgeStatsBefore(day: string): Promise<number> {
    const r = await this.db.deleteFrom('dns_query_stats').where('day', '<', day).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
  /** Counts per type from `fromDay` (inclusive), and today's total. */
  statsSince(zoneId: string, fromDay: string) {
    return this.db
      .selectFrom('dns_query_stats')
      .select(['day', 'qtype', 'count', 'total_micros'])
      .where('zone_id', '=', zoneId)
      .where('day', '>=', fromDay)
      .execute();
  }
}

/** TSIG keys (operator-wide, not a customer's). */
export class TsigKeyRepo {
  constructor(readonly db: Kysely<DnsTables>) {}

  all() {
    return this.db.selectFrom('dns_tsig_keys').selectAll().orderBy('name').execute();
  }
  byName(name: string) {
    return this.db.selectFrom('dns_tsig_keys').selectAll().where('name', '=', name).executeTakeFirst();
  }
  insert(row: DnsTsigKeysTable) {
    return this.db.insertInto('dns_tsig_keys').values(row).execute();
  }
  async delete(name: string): Promise<boolean> {
    const r = await this.db.deleteFrom('dns_tsig_keys').where('name', '=', name).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

/** Runs an `IN (…)` query over a long id list in pieces, under every engine's bound-parameter limit. */
async function inChunks<T>(
  ids: string[],
  query: (chunk: string[]) => Promise<T[]>,
  size = 500,
): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += size) out.push(...(await query(ids.slice(i, i + size))));
  return out;
}
