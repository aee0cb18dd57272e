import type { Clock } from '../../kernel/clock.js';
import { isoOf } from '../../kernel/clock.js';
import { AppError, kernelErrors } from '../../kernel/errors.js';
import { newId, randomString } from '../../kernel/ids.js';
import { normaliseDomain } from '../../kernel/net/domain-name.js';
import { type DnsLookup, ResolverError } from '../../kernel/net/resolver.js';
import { insertUnique } from '../../kernel/store/dialect.js';
import type { Store } from '../../kernel/store/store.js';
import type { DomainVerificationsTable } from './migrations.js';
import { type DomainFilter, DomainVerificationRepo } from './repo.js';
import { DomainVerificationViews } from './views.js';

export const PURPOSES = [
  'email',
  'custom_host',
  'webhook',
  'link_branding',
  'verify_channel',
  'other',
] as const;
export const STATUSES = ['pending', 'verified', 'failed', 'revoked'] as const;
export type Method = 'DNS_TXT' | 'DNS_CNAME' | 'INTERNAL_DNS_AUTHORITY';

/** A pending domain whose record never appears fails after this long (docs/domain-verification.md). */
export const PENDING_EXPIRY_DAYS = 7;
/** A verified domain fails when this many daily re-checks in a row miss its record. */
export const RECHECK_MISSES_BEFORE_FAILED = 3;
const DAY_MS = 86_400_000;
const TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export const domainVerificationErrors = {
  notFound: () => new AppError('not_found', 'not_found', 'Domain verification not found.'),
  invalidDomain: (domain: string) =>
    kernelErrors.invalid(`"${domain}" is not a domain name.`, [
      { path: '/body/domain', message: 'must be a domain name such as example.com' },
    ]),
  duplicate: (domain: string, purpose: string) =>
    new AppError(
      'conflict',
      'domain_already_registered',
      `${domain} is already registered for purpose ${purpose}; verify or delete that record.`,
    ),
  badTransition: (from: string, to: string) =>
    new AppError(
      'invalid',
      'invalid_status_transition',
      `Status can only be set to revoked, and only from verified (is ${from}, asked ${to}).`,
      { errors: [{ path: '/body/status', message: 'only "revoked", from "verified"' }] },
    ),
  revoked: () =>
    new AppError(
      'conflict',
      'domain_revoked',
      'This verification was revoked; create a new one to verify again.',
    ),
};

/** The customer's own Fjord DNS zones (the DNS area provides the real one). */
export interface InternalDnsAuthority {
  /** The customer's active zone whose apex is `domain` or a parent of it. */
  activeZoneCovering(customerId: string, domain: string): Promise<{ id: string; apex: string } | null>;
}

export const noInternalDns: InternalDnsAuthority = { activeZoneCovering: async () => null };

export interface DomainVerificationSettings {
  /** `_fjord` → the TXT record sits at `_fjord.<domain>`. */
  label: string;
  cnameTarget: string;
}

interface CheckResult {
  found: boolean;
  values: string[];
  message: string;
  /** The resolver gave no answer: nothing is known about the record. */
  lookupFailed?: boolean;
}

/** Domain verification: TXT/CNAME challenges, checks through a resolver, history and re-checks. */
export class DomainVerificationService {
  private readonly repo: DomainVerificationRepo;
  private readonly views: DomainVerificationViews;

  constructor(
    store: Store,
    private readonly clock: Clock,
    private readonly lookup: DnsLookup,
    readonly settings: DomainVerificationSettings,
    private readonly internalDns: InternalDnsAuthority = noInternalDns,
  ) {
    this.repo = new DomainVerificationRepo(store);
    this.views = new DomainVerificationViews(settings);
  }

  async create(
    customerId: string,
    input: {
      domain: string;
      purpose: string;
      verification_method?: 'DNS_TXT' | 'DNS_CNAME';
      metadata?: object;
    },
  ) {
    const domain = normaliseDomain(input.domain);
    if (!domain) throw domainVerificationErrors.invalidDomain(input.domain);
    if (await this.repo.findLiveByDomain(customerId, domain, input.purpose)) {
      throw domainVerificationErrors.duplicate(domain, input.purpose);
    }
    const now = this.clock.nowMs();
    const zone = await this.internalDns.activeZoneCovering(customerId, domain);
    const row: DomainVerificationsTable = {
      id: newId(),
      customer_id: customerId,
      domain,
      purpose: input.purpose,
      status: zone ? 'verified' : 'pending',
      method: zone ? 'INTERNAL_DNS_AUTHORITY' : (input.verification_method ?? 'DNS_TXT'),
      token: zone ? null : randomString(32, TOKEN_ALPHABET),
      internal_zone_id: zone?.id ?? null,
      attempts: 0,
      missed_rechecks: 0,
      verified_at: zone ? now : null,
      last_checked_at: zone ? now : null,
      failed_reason: null,
      metadata: JSON.stringify(input.metadata ?? {}),
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await insertUnique(
      () => this.repo.insert(row),
      () => domainVerificationErrors.duplicate(domain, input.purpose),
    );
    if (zone) {
      await this.addHistory(
        row.id,
        'auto_verified',
        null,
        'verified',
        { found: true, values: [zone.apex] },
        'api',
      );
    }
    return this.views.view(row);
  }

  async list(customerId: string, filter: DomainFilter, page: number, pageSize: number) {
    const [rows, total] = await Promise.all([
      this.repo.list(customerId, filter, pageSize, (page - 1) * pageSize),
      this.repo.count(customerId, filter),
    ]);
    return { domains: rows.map((r) => this.views.view(r)), total, page, page_size: pageSize };
  }

  async get(customerId: string, id: string) {
    return this.views.view(await this.load(customerId, id));
  }

  async update(customerId: string, id: string, input: { status?: string; metadata?: object }) {
    const row = await this.load(customerId, id);
    const changes: Partial<DomainVerificationsTable> = { updated_at: this.clock.nowMs() };
    if (input.status !== undefined) {
      if (input.status !== 'revoked' || row.status !== 'verified') {
        throw domainVerificationErrors.badTransition(row.status, input.status);
      }
      changes.status = 'revoked';
    }
    if (input.metadata !== undefined) changes.metadata = JSON.stringify(input.metadata);
    await this.repo.update(id, changes);
    if (changes.status) await this.addHistory(id, 'revoked', row.status, 'revoked', null, 'api');
    return this.views.view({ ...row, ...changes });
  }

  async remove(customerId: string, id: string) {
    const row = await this.load(customerId, id);
    const now = this.clock.nowMs();
    await this.repo.update(id, { deleted_at: now, updated_at: now });
    await this.addHistory(id, 'deleted', row.status, row.status, null, 'api');
    return { success: true, message: `Domain verification for ${row.domain} deleted.` };
  }

  async history(customerId: string, id: string) {
    await this.load(customerId, id);
    const rows = await this.repo.history(id);
    return rows.map((h) => ({
      id: h.id,
      event_type: h.event_type,
      previous_status: h.previous_status,
      new_status: h.new_status,
      dns_response: {
        records_found: h.records_found === 1,
        actual_values: JSON.parse(h.actual_values) as string[],
      },
      performed_by: h.performed_by,
      created_at: isoOf(h.created_at) as string,
    }));
  }

  /** Domains the customer holds verified for a purpose (e.g. `email` sender domains), oldest first. */
  async verifiedDomains(customerId: string, purpose: (typeof PURPOSES)[number]): Promise<string[]> {
    return (await this.repo.verifiedDomains(customerId, purpose)).map((r) => r.domain);
  }

  /** POST …/verify: looks the record up now. */
  async verify(customerId: string, id: string) {
    const row = await this.load(customerId, id);
    if (row.status === 'revoked') throw domainVerificationErrors.revoked();
    const result = await this.check(row);
    const now = this.clock.nowMs();
    const changes: Partial<DomainVerificationsTable> = {
      attempts: row.attempts + 1,
      last_checked_at: now,
      updated_at: now,
    };
    if (result.found) {
      changes.missed_rechecks = 0;
      if (row.status !== 'verified') {
        Object.assign(changes, { status: 'verified', verified_at: now, failed_reason: null });
      }
    }
    await this.repo.update(id, changes);
    const status = changes.status ?? row.status;
    await this.addHistory(id, 'check_completed', row.status, status, result, 'api');
    return {
      id,
      domain: row.domain,
      status,
      verified: status === 'verified',
      message: verifyMessage(row.status, result),
      dns_records_found: result.values,
      checked_at: isoOf(now) as string,
    };
  }

  /**
   * The daily job: pending domains older than the expiry fail; verified domains are checked
   * again and fail after several misses in a row (a removed record, or a zone given up). A lookup
   * that gets no answer is not a miss. Each write is conditional on the status it read, so a
   * verify or a revocation racing the job wins.
   */
  async dailyMaintenance(batch = 500): Promise<{ expired: number; rechecked: number; failed: number }> {
    const now = this.clock.nowMs();
    let expired = 0;
    for (;;) {
      const rows = await this.repo.stalePending(now - PENDING_EXPIRY_DAYS * DAY_MS, batch);
      for (const row of rows) {
        const reason = `No verification record was found within ${PENDING_EXPIRY_DAYS} days.`;
        if (
          await this.repo.updateIfStatus(row.id, 'pending', {
            status: 'failed',
            failed_reason: reason,
            updated_at: now,
          })
        ) {
          await this.addHistory(row.id, 'expired', 'pending', 'failed', null, 'system');
          expired++;
        }
      }
      if (rows.length < batch) break;
    }
    let rechecked = 0;
    let failed = 0;
    for (;;) {
      const rows = await this.repo.dueForRecheck(now - DAY_MS + 3_600_000, batch);
      for (const row of rows) {
        const result = await this.check(row);
        const misses = result.found ? 0 : result.lookupFailed ? row.missed_rechecks : row.missed_rechecks + 1;
        const changes: Partial<DomainVerificationsTable> = {
          missed_rechecks: misses,
          last_checked_at: now,
          updated_at: now,
        };
        if (misses >= RECHECK_MISSES_BEFORE_FAILED) {
          changes.status = 'failed';
          changes.failed_reason = `The verification record was missing on ${misses} daily checks in a row.`;
        }
        if (!(await this.repo.updateIfStatus(row.id, 'verified', changes))) continue;
        if (changes.status) failed++;
        await this.addHistory(
          row.id,
          'recheck_completed',
          'verified',
          changes.status ?? 'verified',
          result,
          'system',
        );
        rechecked++;
      }
      if (rows.length < batch) break;
    }
    return { expired, rechecked, failed };
  }

  private async check(row: DomainVerificationsTable): Promise<CheckResult> {
    if (row.method === 'INTERNAL_DNS_AUTHORITY') {
      const zone = await this.internalDns.activeZoneCovering(row.customer_id, row.domain);
      return zone
        ? { found: true, values: [zone.apex], message: `Hosted in your Fjord DNS zone ${zone.apex}.` }
        : {
            found: false,
            values: [],
            message: 'The domain is no longer in an active Fjord DNS zone of yours.',
          };
    }
    const expected = this.views.expectedRecord(row);
    let values: string[];
    try {
      values =
        row.method === 'DNS_CNAME'
          ? await this.lookup.cname(expected.name)
          : // A TXT value longer than 255 bytes arrives as several strings: they form one value.
            (await this.lookup.txt(expected.name)).map((chunks) => chunks.join(''));
    } catch (err) {
      if (!(err instanceof ResolverError)) throw err;
      return {
        found: false,
        values: [],
        message: `DNS lookup failed (${err.code}); try again later.`,
        lookupFailed: true,
      };
    }
    const found = values.includes(expected.value);
    const seen = values.length === 0 ? 'none' : values.map((v) => JSON.stringify(v)).join(', ');
    return {
      found,
      values,
      message: found
        ? 'The verification record is in place.'
        : `No ${expected.type} record ${JSON.stringify(expected.value)} at ${expected.name} (found: ${seen}). ` +
          'DNS changes can take a while to propagate; try again later.',
    };
  }

  private async load(customerId: string, id: string) {
    const row = await this.repo.find(customerId, id);
    if (!row) throw domainVerificationErrors.notFound();
    return row;
  }

  private addHistory(
    verificationId: string,
    eventType: string,
    previous: string | null,
    next: string,
    result: Pick<CheckResult, 'found' | 'values'> | null,
    performedBy: 'api' | 'system',
  ) {
    return this.repo.insertHistory({
      id: newId(),
      verification_id: verificationId,
      event_type: eventType,
      previous_status: previous,
      new_status: next,
      records_found: result?.found ? 1 : 0,
      actual_values: JSON.stringify(result?.values ?? []),
      performed_by: performedBy,
      created_at: this.clock.nowMs(),
    });
  }
}

function verifyMessage(before: string, result: CheckResult): string {
  if (result.found)
    return before === 'verified' ? 'Still verified: the record is in place.' : 'Domain verified.';
  if (before === 'verified') {
    return `Still verified, but the record was not found now: ${result.message} The domain fails after ${RECHECK_MISSES_BEFORE_FAILED} daily checks in a row miss it.`;
  }
  return result.message;
}
