import { type Kysely, sql } from 'kysely';
import type { IpTables } from './migrations.js';

type Report = IpTables['ip_reports'];

/** Every query of the IP area, on the store or on a unit's transaction. */
export class IpRepo {
  constructor(readonly db: Kysely<IpTables>) {}

  subscription(customerId: string) {
    return this.db
      .selectFrom('ip_subscriptions')
      .selectAll()
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
  }
  /** Creates the subscription unless one exists (first use); returns the one in force. */
  async ensureSubscription(customerId: string, tier: string, at: number) {
    await this.db
      .insertInto('ip_subscriptions')
      .values({ customer_id: customerId, tier, started_at: at, updated_at: at })
      .onConflict((oc) => oc.column('customer_id').doNothing())
      .execute();
    return (await this.subscription(customerId))!;
  }
  async setTier(customerId: string, tier: string, at: number) {
    await this.db
      .insertInto('ip_subscriptions')
      .values({ customer_id: customerId, tier, started_at: at, updated_at: at })
      .onConflict((oc) => oc.column('customer_id').doUpdateSet({ tier, updated_at: at }))
      .execute();
  }

  /** Counts one request of the day, atomically; returns the day's count including it. */
  async countRequest(customerId: string, day: string): Promise<number> {
    const row = await this.db
      .insertInto('ip_usage')
      .values({ customer_id: customerId, day, count: 1 })
      .onConflict((oc) => oc.columns(['customer_id', 'day']).doUpdateSet({ count: sql`ip_usage.count + 1` }))
      .returning('count')
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }
  async usage(customerId: string, day: string): Promise<number> {
    const row = await this.db
      .selectFrom('ip_usage')
      .select('count')
      .where('customer_id', '=', customerId)
      .where('day', '=', day)
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }

  // Reporters
  reporterByDomain(customerId: string, domain: string) {
    return this.db
      .selectFrom('ip_reporters')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('domain', '=', domain)
      .executeTakeFirst();
  }
  reporters(customerId: string) {
    return this.db.selectFrom('ip_reporters').selectAll().where('customer_id', '=', customerId).execute();
  }
  insertReporter(row: IpTables['ip_reporters']) {
    return this.db.insertInto('ip_reporters').values(row).execute();
  }
  markReporterVerified(id: string, at: number) {
    return this.db
      .updateTable('ip_reporters')
      .set({ status: 'verified', verified_at: at })
      .where('id', '=', id)
      .execute();
  }

  // Reports
  insertReport(row: Report) {
    return this.db.insertInto('ip_reports').values(row).execute();
  }
  lastReportBy(customerId: string, ip: string) {
    return this.db
      .selectFrom('ip_reports')
      .select('reported_at')
      .where('customer_id', '=', customerId)
      .where('ip', '=', ip)
      .orderBy('reported_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }
  /** The reports that count toward an address: those after its last delisting. */
  async reportsOf(ip: string): Promise<Report[]> {
    const delisted = await this.db
      .selectFrom('ip_delisted')
      .select('delisted_at')
      .where('ip', '=', ip)
      .executeTakeFirst();
    return this.db
      .selectFrom('ip_reports')
      .selectAll()
      .where('ip', '=', ip)
      .where('reported_at', '>', delisted?.delisted_at ?? -1)
      .orderBy('reported_at', 'asc')
      .execute();
  }
  /** Addresses reported since `since`, most recently reported first (delisting not yet applied). */
  recentlyReported(since: number, limit: number) {
    return this.db
      .selectFrom('ip_reports')
      .select(['ip', (eb) => eb.fn.max('reported_at').as('last')])
      .where('reported_at', '>=', since)
      .groupBy('ip')
      .orderBy('last', 'desc')
      .limit(limit)
      .execute();
  }
  reportsInCountry(country: string, since: number) {
    return this.db
      .selectFrom('ip_reports')
      .select(['ip', 'categories', 'reported_at'])
      .where('country', '=', country)
      .where('reported_at', '>=', since)
      .execute();
  }
  reportsInAsn(asn: number, since: number) {
    return this.db
      .selectFrom('ip_reports')
      .select(['ip', 'categories', 'reported_at'])
      .where('asn', '=', asn)
      .where('reported_at', '>=', since)
      .execute();
  }
  reportedIpsSince(since: number) {
    return this.db
      .selectFrom('ip_reports')
      .select(['ip'])
      .distinct()
      .where('reported_at', '>=', since)
      .execute();
  }

  // Delisting
  insertDelist(row: IpTables['ip_delists']) {
    return this.db.insertInto('ip_delists').values(row).execute();
  }
  delist(id: string) {
    return this.db.selectFrom('ip_delists').selectAll().where('id', '=', id).executeTakeFirst();
  }
  delists(status?: string) {
    let q = this.db
      .selectFrom('ip_delists')
      .selectAll()
      .orderBy('created_at', 'desc')
      // Ids are UUIDv7: among rows of one millisecond they keep the order of creation.
      .orderBy('id', 'desc')
      .limit(500);
    if (status) q = q.where('status', '=', status as IpTables['ip_delists']['status']);
    return q.execute();
  }
  decideDelist(id: string, status: 'delisted' | 'rejected', at: number) {
    return this.db
      .updateTable('ip_delists')
      .set({ status, decided_at: at })
      .where('id', '=', id)
      .where('status', '=', 'pending_review')
      .executeTakeFirst();
  }
  async markDelisted(ip: string, at: number) {
    await this.db
      .insertInto('ip_delisted')
      .values({ ip, delisted_at: at })
      .onConflict((oc) => oc.column('ip').doUpdateSet({ delisted_at: at }))
      .execute();
  }
}
