import type { DnsRepo } from './repo.js';
import type { QueryStatsSink } from './server-contract.js';

/** Days of per-day query counts kept. */
export const STATS_RETENTION_DAYS = 400;

/**
 * Query counts the DNS servers report, summed per zone, UTC day and type in `dns_query_stats`
 * (one upsert per group), and the statistics view computed from them.
 */
export class QueryStatistics implements QueryStatsSink {
  constructor(
    private readonly repo: DnsRepo,
    /** Told which customers' counts were just stored (the monthly query quota checks them). */
    private readonly afterCounted: (customerIds: string[]) => Promise<void> = async () => {},
  ) {}

  async recordQueries(batch: Parameters<QueryStatsSink['recordQueries']>[0]): Promise<void> {
    const sums = new Map<
      string,
      { zone_id: string; day: string; qtype: string; count: number; total_micros: number }
    >();
    for (const b of batch) {
      const day = new Date(b.at).toISOString().slice(0, 10);
      const qtype = b.qtype.toUpperCase();
      const k = `${b.zoneId} ${day} ${qtype}`;
      const s = sums.get(k) ?? { zone_id: b.zoneId, day, qtype, count: 0, total_micros: 0 };
      s.count += b.count;
      s.total_micros += Math.round(b.totalMicros);
      sums.set(k, s);
    }
    // Counts for a zone deleted meanwhile are dropped rather than left orphaned.
    const owners = await this.repo.zoneOwners([...new Set(batch.map((b) => b.zoneId))]);
    const rows = [...sums.values()].filter((r) => owners.has(r.zone_id) && r.count > 0);
    for (let i = 0; i < rows.length; i += 100) await this.repo.addStats(rows.slice(i, i + 100));
    await this.afterCounted([...new Set(rows.map((r) => owners.get(r.zone_id)!))]);
  }

  /** Drops days older than the retention (the API shows this month; the rest is history kept a while). */
  purge(nowMs: number, keepDays = STATS_RETENTION_DAYS): Promise<number> {
    return this.repo.purgeStatsBefore(new Date(nowMs - keepDays * 86400_000).toISOString().slice(0, 10));
  }

  async forZone(zoneId: string, nowMs: number) {
    const today = new Date(nowMs).toISOString().slice(0, 10);
    const rows = await this.repo.statsSince(zoneId, `${today.slice(0, 7)}-01`);
    let month = 0;
    let day = 0;
    let micros = 0;
    const byType = new Map<string, number>();
    for (const r of rows) {
      month += Number(r.count);
      micros += Number(r.total_micros);
      if (r.day === today) day += Number(r.count);
      byType.set(r.qtype, (byType.get(r.qtype) ?? 0) + Number(r.count));
    }
    const top = [...byType.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 10);
    return {
      queries_today: day,
      queries_this_month: month,
      top_record_types: Object.fromEntries(top),
      response_time_ms_avg: month > 0 ? Math.round(micros / month) / 1000 : 0,
    };
  }
}
