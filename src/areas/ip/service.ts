import type { Clock } from '../../kernel/clock.js';
import { kernelErrors } from '../../kernel/errors.js';
import type { LimitName, Limits } from '../../kernel/limits/quotas.js';
import type { RateLimiter } from '../../kernel/limits/rate-limiter.js';
import type { DnsLookup } from '../../kernel/net/resolver.js';
import type { Store } from '../../kernel/store/store.js';
import type { DomainVerificationService } from '../domain-verification/service.js';
import { type ParsedIp, parseIp } from './address.js';
import { categoryOf } from './categories.js';
import { connectionTypeOf, isDatacenter } from './classify.js';
import type { AsnTable } from './data/asn.js';
import type { GeoData } from './data/geo.js';
import type { OperatorLists } from './data/lists.js';
import { ipErrors } from './errors.js';
import type { IpTables } from './migrations.js';
import { IpRepo } from './repo.js';
import { IpReports, REPORT_HORIZON_MS, requireIp, threatOf } from './reports.js';
import { levelOf, type reportFlags } from './threat.js';

export const TIERS = ['free', 'professional', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];
/** Each tier's row of the limits table: its requests per UTC day. */
const DAILY_LIMIT_ROW = {
  free: 'ip.free_requests_per_day',
  professional: 'ip.professional_requests_per_day',
  enterprise: 'ip.enterprise_requests_per_day',
} as const satisfies Record<Tier, LimitName>;
/** The tier a customer gets on first use (docs/ip-intelligence.md: why). */
export const FIRST_USE_TIER: Tier = 'free';
/** The live feed shows addresses scoring at least this. */
export const LIVE_THRESHOLD = 25;
const HOSTNAME_TTL_MS = 3600_000;

const countryNames = new Intl.DisplayNames(['en'], { type: 'region' });
const countryNameCache = new Map<string, string | null>();
/** English name of a region code (Intl's lookup is slow enough to be worth remembering: ~10 µs). */
export const countryName = (code: string | null) => {
  if (!code) return null;
  let name = countryNameCache.get(code);
  if (name === undefined) {
    name = countryNames.of(code) ?? null;
    if (countryNameCache.size < 1000) countryNameCache.set(code, name);
  }
  return name;
};

/** IP intelligence: lookups from offline data, reports and scores, subscriptions and quotas. */
export class IpService {
  readonly repo: IpRepo;
  /** Abuse reports, verified reporters and delisting. */
  readonly reports: IpReports;
  private readonly hostnames = new Map<string, { name: string | null; until: number }>();
  private countryAddresses: Promise<Map<string, number>> | null = null;

  constructor(
    store: Store,
    private readonly clock: Clock,
    private readonly limits: Limits,
    private readonly limiter: RateLimiter,
    private readonly geo: GeoData,
    private readonly asns: AsnTable,
    private readonly lists: OperatorLists,
    private readonly resolver: DnsLookup,
    domains: DomainVerificationService,
    private readonly customerExists: (id: string) => Promise<boolean>,
  ) {
    this.repo = new IpRepo(store.typed<IpTables>());
    this.reports = new IpReports(store, clock, this.repo, geo, asns, resolver, domains);
  }

  // --- subscription and quotas ------------------------------------------------------------------

  /** The tier in force (the free tier is made on first use), or null for none. */
  async tierOf(customerId: string): Promise<Tier | null> {
    // A read on every request; the write only on the first one.
    const sub =
      (await this.repo.subscription(customerId)) ??
      (await this.repo.ensureSubscription(customerId, FIRST_USE_TIER, this.clock.nowMs()));
    return (TIERS as readonly string[]).includes(sub.tier) ? (sub.tier as Tier) : null;
  }

  dailyLimit(tier: Tier): number | null {
    return this.limits.of(DAILY_LIMIT_ROW[tier]);
  }

  /**
   * Admits one request: 403 without a subscription, 429 over the minute's burst or the day's
   * quota (UTC days). Counted atomically in the store, so it holds across processes. Returns what
   * the rate-limit headers show: the day's quota.
   */
  async admit(
    customerId: string,
  ): Promise<{ limit: number | null; remaining: number | null; reset: number }> {
    const tier = await this.tierOf(customerId);
    if (!tier) throw ipErrors.noSubscription();
    const now = this.clock.nowMs();
    const burst = await this.limiter.consume([`ip.burst.${tier}`], customerId);
    if (!burst.allowed) throw ipErrors.quota(burst.limit, 'minute', burst.reset * 1000, now);
    const reset = nextUtcDay(now);
    const limit = this.dailyLimit(tier);
    const used = await this.repo.countRequest(customerId, dayOf(now));
    if (limit !== null && used > limit) throw ipErrors.quota(limit, 'day', reset, now);
    return { limit, remaining: limit === null ? null : limit - used, reset };
  }

  async subscription(customerId: string) {
    const tier = await this.tierOf(customerId);
    const now = this.clock.nowMs();
    const limit = tier ? this.dailyLimit(tier) : null;
    const used = await this.repo.usage(customerId, dayOf(now));
    return {
      tier,
      active: tier !== null,
      requests_per_day: limit,
      requests_today: used,
      remaining_today: limit === null ? null : Math.max(0, limit - used),
      burst_per_minute: tier ? (this.limiter.rowOf(`ip.burst.${tier}`)?.points ?? null) : null,
      resets_at: new Date(nextUtcDay(now)).toISOString(),
    };
  }

  async setTier(customerId: string, tier: Tier | 'none') {
    if (!(await this.customerExists(customerId))) throw kernelErrors.notFound('Customer');
    await this.repo.setTier(customerId, tier, this.clock.nowMs());
    return this.subscription(customerId);
  }

  // --- lookups ----------------------------------------------------------------------------------

  parse(text: string): ParsedIp {
    return requireIp(text);
  }

  private async network(ip: ParsedIp) {
    if (ip.special) return { asn: null, isp: null, org: null, connection_type: 'unknown' as const };
    const a = await this.asns.lookup(ip.ip, ip.version);
    return {
      asn: a?.asn ?? null,
      isp: a?.name ?? null,
      org: a?.name ?? null,
      connection_type: connectionTypeOf(a?.asn ?? null, a?.name ?? null),
    };
  }

  private async geoOf(ip: ParsedIp) {
    const g = ip.special ? null : await this.geo.lookup(ip.ip, ip.version);
    return {
      country: g?.country ?? null,
      country_name: countryName(g?.country ?? null),
      city: g?.city ?? null,
      region: g?.region ?? null,
      latitude: g?.latitude ?? null,
      longitude: g?.longitude ?? null,
      timezone: g?.timezone ?? null,
    };
  }

  /** Reverse DNS with a short timeout, cached an hour (answers and absences alike). */
  async hostname(ip: ParsedIp): Promise<string | null> {
    if (ip.special === 'loopback') return 'localhost';
    if (ip.special) return null;
    const now = Date.now();
    const hit = this.hostnames.get(ip.ip);
    if (hit && hit.until > now) return hit.name;
    const name = (await this.resolver.ptr(ip.ip).catch(() => []))[0] ?? null;
    if (this.hostnames.size > 50_000) this.hostnames.clear();
    this.hostnames.set(ip.ip, { name, until: now + HOSTNAME_TTL_MS });
    return name;
  }

  private threat(ip: ParsedIp) {
    return threatOf(this.repo, this.clock.nowMs(), ip);
  }

  private async flags(
    ip: ParsedIp,
    connectionType: ReturnType<typeof connectionTypeOf>,
    reported: ReturnType<typeof reportFlags>,
  ) {
    const listed = await this.lists.flagsOf(ip);
    return {
      vpn: reported.vpn || listed.vpn,
      proxy: reported.proxy || listed.proxy,
      tor: listed.tor,
      datacenter: isDatacenter(connectionType),
      botnet: reported.botnet || listed.botnet,
    };
  }

  async summary(text: string) {
    const ip = this.parse(text);
    const [hostname, geo, network, threat] = await Promise.all([
      this.hostname(ip),
      this.geoOf(ip),
      this.network(ip),
      this.threat(ip),
    ]);
    return {
      ip: ip.ip,
      ip_version: ip.version,
      hostname,
      geo,
      network,
      threat: { score: threat.score, level: threat.level, is_clean: threat.is_clean },
      flags: await this.flags(ip, network.connection_type, threat.reportFlags),
    };
  }

  /**
   * For other areas (verification's `ip_risk`): what Fjord knows against an address — its
   * reports' score, its country and the flags of the operator's lists — without the reverse-DNS
   * lookup or the customer's daily quota of the public lookups.
   */
  async reputation(text: string) {
    const ip = this.parse(text);
    const [geo, network, threat] = await Promise.all([this.geoOf(ip), this.network(ip), this.threat(ip)]);
    return {
      ip: ip.ip,
      special: ip.special,
      country: geo.country,
      score: threat.score,
      total_reports: threat.total_reports,
      flags: await this.flags(ip, network.connection_type, threat.reportFlags),
    };
  }

  async geoView(text: string) {
    const ip = this.parse(text);
    const [hostname, geo, network] = await Promise.all([this.hostname(ip), this.geoOf(ip), this.network(ip)]);
    return { ip: ip.ip, ip_version: ip.version, hostname, ...geo, ...network };
  }

  async threatView(text: string) {
    const ip = this.parse(text);
    const [network, t] = await Promise.all([this.network(ip), this.threat(ip)]);
    const { tor, vpn, proxy, datacenter } = await this.flags(ip, network.connection_type, t.reportFlags);
    const { reportFlags: _, ...view } = t;
    return { ip: ip.ip, ...view, flags: { vpn, proxy, tor, datacenter } };
  }

  async live(limit: number) {
    const now = this.clock.nowMs();
    const out = [];
    for (const { ip } of await this.repo.recentlyReported(now - 30 * 86_400_000, 1000)) {
      if (out.length >= limit) break;
      const parsed = parseIp(ip)!;
      const t = await this.threat(parsed);
      if (t.score < LIVE_THRESHOLD) continue;
      out.push({
        ip,
        score: t.score,
        level: t.level,
        categories: t.categories,
        country: (await this.geoOf(parsed)).country,
        last_seen: t.last_seen,
      });
    }
    return { updated_at: new Date(now).toISOString(), count: out.length, threats: out };
  }

  async country(code: string) {
    if (!/^[A-Za-z]{2}$/.test(code)) throw ipErrors.invalidCountry(code);
    const cc = code.toUpperCase();
    const name = countryName(cc);
    // Unassigned codes come back as themselves or as "Unknown Region".
    if (!name || name === cc || name === 'Unknown Region') throw ipErrors.notFound(`country ${cc}`);
    const now = this.clock.nowMs();
    const threatened = new Set<string>();
    const categoryCounts = new Map<number, number>();
    const reports = await this.repo.reportsInCountry(cc, now - REPORT_HORIZON_MS);
    for (const ip of new Set(reports.map((r) => r.ip))) {
      if ((await this.threat(parseIp(ip)!)).score > 0) threatened.add(ip);
    }
    for (const r of reports)
      if (threatened.has(r.ip))
        for (const c of JSON.parse(r.categories) as number[])
          categoryCounts.set(c, (categoryCounts.get(c) ?? 0) + 1);
    const addresses = (await this.addressesByCountry()).get(cc) ?? 0;
    return {
      country: cc,
      country_name: name,
      total_threats: threatened.size,
      threat_density: addresses > 0 ? Math.round((threatened.size / addresses) * 1e6 * 1000) / 1000 : 0,
      top_categories: [...categoryCounts.entries()]
        .sort((a, b) => b[1] - a[1] || a[0] - b[0])
        .slice(0, 5)
        .map(([c]) => categoryOf(c)!.slug),
    };
  }

  /** IPv4 addresses per country: each announced range counted where its first address is located. */
  private addressesByCountry() {
    this.countryAddresses ??= (async () => {
      const counts = new Map<string, number>();
      const ranges = await this.asns.ipv4Ranges();
      for (let i = 0; i < ranges.starts.length; i++) {
        const start = ranges.starts[i]!;
        const ip = [start >>> 24, (start >>> 16) & 255, (start >>> 8) & 255, start & 255].join('.');
        const cc = (await this.geo.lookup(ip, 4))?.country;
        if (cc) counts.set(cc, (counts.get(cc) ?? 0) + ranges.ends[i]! - start + 1);
      }
      return counts;
    })();
    return this.countryAddresses;
  }

  async asnView(text: string) {
    const asn = Number(text);
    if (!/^\d{1,10}$/.test(text) || !Number.isInteger(asn) || asn < 1 || asn > 4294967295)
      throw ipErrors.invalidAsn(text);
    const info = await this.asns.info(asn);
    if (!info) throw ipErrors.notFound(`AS${asn}`);
    const now = this.clock.nowMs();
    const reports = await this.repo.reportsInAsn(asn, now - REPORT_HORIZON_MS);
    let threatened = 0;
    let highest = 0;
    for (const ip of new Set(reports.map((r) => r.ip))) {
      const s = (await this.threat(parseIp(ip)!)).score;
      if (s > 0) threatened++;
      highest = Math.max(highest, s);
    }
    const ranges = await this.asns.ipv4Ranges();
    const first = ranges.asns.indexOf(asn);
    const firstIp =
      first >= 0
        ? [
            ranges.starts[first]! >>> 24,
            (ranges.starts[first]! >>> 16) & 255,
            (ranges.starts[first]! >>> 8) & 255,
            ranges.starts[first]! & 255,
          ].join('.')
        : null;
    const country = firstIp ? ((await this.geo.lookup(firstIp, 4))?.country ?? null) : null;
    return {
      asn,
      name: info.name,
      country,
      country_name: countryName(country),
      prefixes: info.prefixes,
      ipv4_prefixes: info.prefixes - info.ipv6_prefixes,
      ipv6_prefixes: info.ipv6_prefixes,
      num_ips: info.ipv4_addresses,
      connection_type: connectionTypeOf(asn, info.name),
      threat: {
        reported_addresses: threatened,
        total_reports: reports.length,
        highest_score: highest,
        level: levelOf(highest),
      },
    };
  }
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const nextUtcDay = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
};
