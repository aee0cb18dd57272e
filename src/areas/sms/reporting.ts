import type { Clock } from '../../kernel/clock.js';
import { isoOf } from '../../kernel/clock.js';
import { smsErrors } from './errors.js';
import { money, PRICE_PER_UNIT } from './pricing.js';
import type { CountRow, SmsRepo } from './repo.js';
import type { SenderProfileRepo } from './sender-profile-repo.js';

const DAY_MS = 86400_000;
/** Outbound states that mean the network took the message. */
const SENT_STATES = new Set(['SENT', 'DELIVERED', 'FAILED']);

/** Whether the customer may send, from the kernel's key list (a service key for `sms`). */
export type SmsKeyProbe = (customerId: string) => Promise<boolean>;

function summarise(rows: CountRow[]) {
  let sent = 0;
  let received = 0;
  let units = 0;
  let delivered = 0;
  let failed = 0;
  for (const r of rows) {
    if (r.direction === 'INBOUND') {
      received += r.n;
      continue;
    }
    if (!SENT_STATES.has(r.status)) continue;
    sent += r.n;
    units += r.units;
    if (r.status === 'DELIVERED') delivered += r.n;
    if (r.status === 'FAILED') failed += r.n;
  }
  const settled = delivered + failed;
  return {
    messages_sent: sent,
    messages_received: received,
    units_used: units,
    // Percent of the settled messages (delivered or failed) that were delivered; 0 when none settled.
    delivery_rate: settled === 0 ? 0 : Math.round((delivered / settled) * 1000) / 10,
  };
}

/** Start of the UTC day, ISO week (Monday) and month of `ms`. */
function startsOf(ms: number) {
  const d = new Date(ms);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  const week = day - ((d.getUTCDay() + 6) % 7) * DAY_MS;
  const month = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return { day, week, month };
}

/** `status`, `usage` and `stats`, computed from the messages themselves (all periods in UTC). */
export class SmsReporting {
  constructor(
    private readonly repo: SmsRepo,
    private readonly profiles: SenderProfileRepo,
    private readonly clock: Clock,
    private readonly currency: string,
    private readonly hasSmsKey: SmsKeyProbe,
  ) {}

  async status(customerId: string) {
    const now = this.clock.nowMs();
    const { day, month } = startsOf(now);
    const [profiles, hasKey, today, thisMonth, last30] = await Promise.all([
      this.profiles.listProfiles(customerId),
      this.hasSmsKey(customerId),
      this.repo.counts(customerId, day, null),
      this.repo.counts(customerId, month, null),
      this.repo.counts(customerId, now - 30 * DAY_MS, null),
    ]);
    const def = profiles.find((p) => p.is_default === 1) ?? null;
    const outbound = (rows: CountRow[]) =>
      rows.filter((r) => r.direction === 'OUTBOUND' && r.status !== 'CANCELLED').reduce((n, r) => n + r.n, 0);
    const s30 = summarise(last30);
    return {
      // Active: the account can send now — it has an approved sender profile.
      active: profiles.some((p) => p.approval_status === 'approved'),
      has_sender_profiles: profiles.length > 0,
      has_api_key: hasKey,
      default_sender: def ? def.sender_id : null,
      messages_today: outbound(today),
      messages_this_month: outbound(thisMonth),
      messages_sent_30d: s30.messages_sent,
      messages_received_30d: s30.messages_received,
    };
  }

  /** Billing for a month (`YYYY-MM`, default the current one): units handed to the network. */
  async usage(customerId: string, period: string | undefined) {
    const now = new Date(this.clock.nowMs());
    const label = period ?? `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(label);
    if (!m) throw smsErrors.badPeriod();
    const start = Date.UTC(Number(m[1]), Number(m[2]) - 1, 1);
    const end = Date.UTC(Number(m[1]), Number(m[2]), 1);
    const [billed, rows] = await Promise.all([
      this.repo.billedUnits(customerId, start, end),
      this.repo.counts(customerId, start, end),
    ]);
    const price = PRICE_PER_UNIT[this.currency] ?? 0;
    const outboundCost = money(billed.units * price);
    const inboundCost = 0; // receiving is free
    return {
      period: label,
      period_start: isoOf(start)!,
      period_end: isoOf(end - 1)!,
      messages_sent: billed.n,
      messages_received: rows.filter((r) => r.direction === 'INBOUND').reduce((n, r) => n + r.n, 0),
      messages_failed: rows
        .filter((r) => r.direction === 'OUTBOUND' && r.status === 'FAILED')
        .reduce((n, r) => n + r.n, 0),
      units_used: billed.units,
      cost: money(outboundCost + inboundCost),
      currency: this.currency,
      price_per_unit: price,
      outbound_cost: outboundCost,
      inbound_cost: inboundCost,
    };
  }

  async stats(customerId: string) {
    const now = this.clock.nowMs();
    const { day, week, month } = startsOf(now);
    const [today, thisWeek, thisMonth, last30, all] = await Promise.all([
      this.repo.counts(customerId, day, null),
      this.repo.counts(customerId, week, null),
      this.repo.counts(customerId, month, null),
      this.repo.counts(customerId, now - 30 * DAY_MS, null),
      this.repo.counts(customerId, null, null),
    ]);
    const breakdown: Record<string, number> = {};
    for (const r of all) breakdown[r.status] = (breakdown[r.status] ?? 0) + r.n;
    return {
      today: summarise(today),
      this_week: summarise(thisWeek),
      this_month: summarise(thisMonth),
      last_30_days: summarise(last30),
      status_breakdown: breakdown,
    };
  }
}
