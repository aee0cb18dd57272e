import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { DnsLookup } from '../../kernel/net/resolver.js';
import type { Store } from '../../kernel/store/store.js';
import type { DomainVerificationService } from '../domain-verification/service.js';
import { type ParsedIp, parseIp } from './address.js';
import { categoryOf } from './categories.js';
import type { AsnTable } from './data/asn.js';
import type { GeoData } from './data/geo.js';
import { ipErrors } from './errors.js';
import type { IpTables } from './migrations.js';
import { IpRepo } from './repo.js';
import { levelOf, reportFlags, scoreOf } from './threat.js';

/** Reports older than this no longer count (their weight has decayed below 0.02%). */
export const REPORT_HORIZON_MS = 365 * 86_400_000;
/** One report per address and customer in this window. */
const REPORT_INTERVAL_MS = 15 * 60_000;

/** The parsed address, or the API's invalid-address error. */
export function requireIp(text: string): ParsedIp {
  const ip = parseIp(text);
  if (!ip) throw ipErrors.invalidIp(text);
  return ip;
}

/** An address's score and what its live reports say about it. */
export async function threatOf(repo: IpRepo, now: number, ip: ParsedIp) {
  const reports = ip.special ? [] : await repo.reportsOf(ip.ip);
  const live = reports.filter((r) => now - r.reported_at < REPORT_HORIZON_MS);
  const categoryIds = new Set(live.flatMap((r) => JSON.parse(r.categories) as number[]));
  const score = scoreOf(
    live.map((r) => ({
      categories: JSON.parse(r.categories) as number[],
      verified: r.verified === 1,
      reportedAt: r.reported_at,
    })),
    now,
  );
  return {
    score,
    level: levelOf(score),
    is_clean: live.length === 0,
    total_reports: live.length,
    categories: live.length ? [...categoryIds].sort((a, b) => a - b).map((c) => categoryOf(c)!.slug) : null,
    first_seen: live.length ? new Date(live[0]!.reported_at).toISOString() : null,
    last_seen: live.length ? new Date(live[live.length - 1]!.reported_at).toISOString() : null,
    reportFlags: reportFlags(categoryIds),
  };
}

/** Abuse reports, the reporters whose domains are verified, and delisting by an address's owner. */
export class IpReports {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly repo: IpRepo,
    private readonly geo: GeoData,
    private readonly asns: AsnTable,
    private readonly resolver: DnsLookup,
    private readonly domains: DomainVerificationService,
  ) {}

  // --- reports ----------------------------------------------------------------------------------

  async report(
    customerId: string,
    input: { ip: string; categories: (number | string)[]; comment?: string; timestamp?: string },
  ) {
    const ip = requireIp(input.ip);
    if (ip.special) throw ipErrors.notReportable(ip.ip, ip.special);
    const categories = [...new Set(input.categories.map((c) => categoryOf(c)?.id ?? Number.NaN))];
    const unknown = input.categories.find((c) => !categoryOf(c));
    if (unknown !== undefined) throw ipErrors.unknownCategory(unknown);
    const now = this.clock.nowMs();
    const at = input.timestamp ? Math.min(now, Date.parse(input.timestamp)) : now;
    const verified = (await this.repo.reporters(customerId)).find((r) => r.status === 'verified') ?? null;
    const [geo, asn] = await Promise.all([
      this.geo.lookup(ip.ip, ip.version),
      this.asns.lookup(ip.ip, ip.version),
    ]);
    await this.store.unitOfWork({ locks: [`ip:report:${customerId}:${ip.ip}`] }, async ({ tx }) => {
      const repo = new IpRepo(tx);
      const last = await repo.lastReportBy(customerId, ip.ip);
      if (last && now - Number(last.reported_at) < REPORT_INTERVAL_MS && Number(last.reported_at) <= now)
        throw ipErrors.duplicateReport(ip.ip);
      await repo.insertReport({
        id: newId(),
        ip: ip.ip,
        customer_id: customerId,
        reporter_id: verified?.id ?? null,
        verified: verified ? 1 : 0,
        categories: JSON.stringify(categories),
        comment: input.comment ? stripPersonalData(input.comment) : null,
        country: geo?.country ?? null,
        asn: asn?.asn ?? null,
        // A back-dated report still counts against the 15 minutes from when it was made.
        reported_at: at === now ? now : Math.max(at, now - REPORT_HORIZON_MS),
      });
    });
    const t = await threatOf(this.repo, now, ip);
    return {
      ip: ip.ip,
      verified_reporter: verified !== null,
      score: t.score,
      level: t.level,
      total_reports: t.total_reports,
    };
  }

  // --- reporters --------------------------------------------------------------------------------

  async registerReporter(customerId: string, input: { domain: string; contact_email: string }) {
    const domain = input.domain.trim().toLowerCase().replace(/\.$/, '');
    if (await this.repo.reporterByDomain(customerId, domain)) throw ipErrors.reporterExists(domain);
    const v = await this.domains.create(customerId, {
      domain,
      purpose: 'other',
      verification_method: 'DNS_TXT',
      metadata: { ip_reporter: true },
    });
    const now = this.clock.nowMs();
    const row: IpTables['ip_reporters'] = {
      id: newId(),
      customer_id: customerId,
      domain: v.domain,
      contact_email: input.contact_email,
      verification_id: v.id,
      status: v.status === 'verified' ? 'verified' : 'pending',
      created_at: now,
      verified_at: v.status === 'verified' ? now : null,
    };
    await this.repo.insertReporter(row);
    return this.reporterView(row, v.dns_instructions);
  }

  async verifyReporter(customerId: string, domainText: string) {
    const domain = domainText.trim().toLowerCase().replace(/\.$/, '');
    const row = await this.repo.reporterByDomain(customerId, domain);
    if (!row) throw ipErrors.reporterNotFound(domain);
    if (row.status !== 'verified') {
      const result = await this.domains.verify(customerId, row.verification_id);
      if (result.verified) {
        row.status = 'verified';
        row.verified_at = this.clock.nowMs();
        await this.repo.markReporterVerified(row.id, row.verified_at);
      }
    }
    return this.reporterView(row, null);
  }

  private reporterView(
    row: IpTables['ip_reporters'],
    dns: { record_type: string; host: string; value: string } | null,
  ) {
    return {
      reporter_id: row.id,
      domain: row.domain,
      contact_email: row.contact_email,
      status: row.status,
      verified: row.status === 'verified',
      verified_at: row.verified_at === null ? null : new Date(row.verified_at).toISOString(),
      dns_record: dns,
    };
  }

  // --- delisting --------------------------------------------------------------------------------

  /**
   * An address's owner asks for its reports to stop counting. Proven at once when one of the
   * customer's verified reporter domains points at the address (A/AAAA) or the address's reverse
   * name lies in it; otherwise it waits for the operator's review.
   */
  async delist(customerId: string, input: { ip: string; reason: string }) {
    const ip = requireIp(input.ip);
    if (ip.special) throw ipErrors.notReportable(ip.ip, ip.special);
    const now = this.clock.nowMs();
    const proof = await this.ownershipProof(customerId, ip);
    const row: IpTables['ip_delists'] = {
      id: newId(),
      customer_id: customerId,
      ip: ip.ip,
      reason: input.reason,
      status: proof ? 'delisted' : 'pending_review',
      proof,
      created_at: now,
      decided_at: proof ? now : null,
    };
    await this.repo.insertDelist(row);
    if (proof) await this.repo.markDelisted(ip.ip, now);
    return this.delistView(row);
  }

  private async ownershipProof(customerId: string, ip: ParsedIp): Promise<string | null> {
    const domains = (await this.repo.reporters(customerId))
      .filter((r) => r.status === 'verified')
      .map((r) => r.domain);
    if (domains.length === 0) return null;
    const names = await this.resolver.ptr(ip.ip).catch(() => [] as string[]);
    for (const d of domains) {
      const ptr = names.find((n) => n === d || n.endsWith(`.${d}`));
      if (ptr) return `PTR ${ptr}`;
      const addresses = await (ip.version === 4 ? this.resolver.a(d) : this.resolver.aaaa(d)).catch(() => []);
      if (addresses.some((a) => parseIp(a)?.ip === ip.ip)) return `${ip.version === 4 ? 'A' : 'AAAA'} ${d}`;
    }
    return null;
  }

  async decideDelist(id: string, decision: 'approve' | 'reject') {
    const row = await this.repo.delist(id);
    if (!row) throw ipErrors.delistNotFound();
    const now = this.clock.nowMs();
    const status = decision === 'approve' ? 'delisted' : 'rejected';
    const changed = await this.repo.decideDelist(id, status, now);
    if (Number(changed.numUpdatedRows) === 0) throw ipErrors.delistDecided();
    if (status === 'delisted') await this.repo.markDelisted(row.ip, now);
    return this.delistView({ ...row, status, decided_at: now });
  }

  async delists(status?: string) {
    return { delists: (await this.repo.delists(status)).map((r) => this.delistView(r)) };
  }

  private delistView(r: IpTables['ip_delists']) {
    return {
      delist_id: r.id,
      ip: r.ip,
      status: r.status,
      reason: r.reason,
      proof: r.proof,
      created_at: new Date(r.created_at).toISOString(),
      decided_at: r.decided_at === null ? null : new Date(r.decided_at).toISOString(),
    };
  }
}

/** Comments lose e-mail addresses and phone numbers before they are stored, as AbuseIPDB strips them. */
export function stripPersonalData(comment: string): string {
  return comment
    .replace(/[^\s@<>()[\]]+@[^\s@<>()[\]]+\.[a-z]{2,}/gi, '[email removed]')
    .replace(/\+?\d[\d\s().-]{7,}\d/g, '[phone removed]')
    .slice(0, 1024);
}
