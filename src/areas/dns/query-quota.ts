import type { Logger } from 'pino';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { DnsRepo } from './repo.js';

/** UTC month of a time, `YYYY-MM`. */
export const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);

/** The first instant of the UTC month after the one holding `ms`. */
export const nextMonthStart = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};

/**
 * The plan's DNS queries per month. The servers count queries in memory and flush them every few
 * seconds; after each flush, a customer whose queries this month reached the plan's quota is
 * paused: its zones are not served (queries for them get REFUSED, as for any name Fjord is not
 * authoritative for) until the 1st of the next month, 00:00 UTC, or until the plan allows more.
 * A review on the clock lifts pauses at the month's turn and after a plan change. The pause is a
 * row in the store and each zone change is announced, so every DNS process follows it.
 */
export class QueryQuota {
  constructor(
    private readonly repo: DnsRepo,
    private readonly deps: {
      clock: Clock;
      limits: Limits;
      identity: IdentityService;
      log: Logger;
      /** Tells every DNS server that a zone must be reloaded (served again or dropped). */
      announce: (apex: string) => Promise<void>;
    },
  ) {}

  /** After counts of these customers' zones were stored: pauses whoever reached the quota. */
  async afterCounted(customerIds: string[]): Promise<void> {
    const now = this.deps.clock.nowMs();
    const month = monthOf(now);
    const used = await this.repo.queriesByCustomer(customerIds, `${month}-01`);
    for (const customerId of customerIds) {
      const limit = await this.limitOf(customerId);
      const queries = used.get(customerId) ?? 0;
      if (limit === null || queries < limit) continue;
      const paused = await this.repo.pauseQueries({
        customer_id: customerId,
        month,
        paused_at: now,
        queries,
        query_limit: limit,
      });
      if (!paused) continue;
      this.deps.log.info(
        { customerId, month, queries, limit },
        'dns: monthly query quota reached; zones paused',
      );
      await this.announceZonesOf(customerId);
    }
  }

  /** Lifts pauses of past months and of customers whose plan now allows more; returns how many. */
  async review(): Promise<number> {
    const now = this.deps.clock.nowMs();
    const month = monthOf(now);
    let lifted = 0;
    for (const pause of await this.repo.queryPauses()) {
      if (pause.month === month) {
        const limit = await this.limitOf(pause.customer_id);
        const used = (await this.repo.queriesByCustomer([pause.customer_id], `${month}-01`)).get(
          pause.customer_id,
        );
        if (limit !== null && (used ?? 0) >= limit) continue;
      }
      if (!(await this.repo.resumeQueries(pause.customer_id, pause.month))) continue;
      lifted++;
      this.deps.log.info({ customerId: pause.customer_id, month: pause.month }, 'dns: query pause lifted');
      await this.announceZonesOf(pause.customer_id);
    }
    return lifted;
  }

  /** What `GET /v1/dns/usage` shows of the month's queries. */
  async usage(customerId: string) {
    const now = this.deps.clock.nowMs();
    const month = monthOf(now);
    const used = (await this.repo.queriesByCustomer([customerId], `${month}-01`)).get(customerId) ?? 0;
    const limit = await this.limitOf(customerId);
    const pause = await this.repo.queryPause(customerId);
    const paused = pause?.month === month;
    return {
      month,
      used,
      limit,
      remaining: limit === null ? null : Math.max(0, limit - used),
      paused,
      paused_at: paused ? new Date(pause.paused_at).toISOString() : null,
      resets_at: new Date(nextMonthStart(now)).toISOString(),
    };
  }

  private async limitOf(customerId: string) {
    const plan = (await this.deps.identity.getCustomer(customerId))?.plan;
    return this.deps.limits.of('dns.queries_per_month', plan);
  }

  private async announceZonesOf(customerId: string) {
    for (const zone of await this.repo.zonesOf(customerId)) await this.deps.announce(zone.name);
  }
}
