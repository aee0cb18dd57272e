import type { IdentityService } from '../../kernel/auth/identity.js';
import { type Clock, isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { DnsLookup } from '../../kernel/net/resolver.js';
import type { SecretBox } from '../../kernel/secrets.js';
import type { Store } from '../../kernel/store/store.js';
import type { DomainVerificationService } from '../domain-verification/service.js';
import type { AcmeIssuer } from './acme.js';
import { createLocalCa, issueFromLocalCa, type LocalCaMaterial, RENEW_BEFORE_DAYS } from './certificates.js';
import { appsErrors } from './errors.js';
import type { AppsDomainsTable } from './migrations.js';
import { AppsRepo } from './repo.js';
import type { AppsService } from './service.js';

const HOST = /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const DAY = 86_400_000;

/**
 * Custom domains of apps: the name is proven through domain verification (purpose
 * `custom_host`), must point at the app's host by CNAME, and then gets a certificate from the
 * local CA Fjord creates (renewed before expiry on the clock). The ingress serves it by SNI.
 */
export class AppDomains {
  private readonly repo: AppsRepo;
  private ca: LocalCaMaterial | null = null;
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly secrets: SecretBox,
    private readonly apps: AppsService,
    private readonly verification: DomainVerificationService,
    private readonly lookup: DnsLookup,
    /** Set when an ACME directory is configured; else the local CA signs. */
    readonly acme: AcmeIssuer | null,
  ) {
    this.repo = AppsRepo.of(store);
  }

  async create(customerId: string, appRef: string, rawHost: string) {
    const host = rawHost.trim().toLowerCase().replace(/\.$/, '');
    if (!HOST.test(host) || host === this.apps.domain || host.endsWith(`.${this.apps.domain}`))
      throw appsErrors.badHostName(host);
    const tier = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
    const max = this.limits.of('apps.domains_per_app', tier);
    const app = await this.apps.statusOfApp(customerId, appRef);
    const now = this.clock.nowMs();
    const row: AppsDomainsTable = {
      id: newId(),
      customer_id: customerId,
      app_id: app.id,
      host_name: host,
      status: 'pending',
      status_message: 'Not checked yet: prove the name and point its CNAME at the app, then POST …/check.',
      certificate_status: 'pending',
      certificate_error: null,
      cert_pem: null,
      key_sealed: null,
      cert_issued_at: null,
      cert_expires_at: null,
      checked_at: null,
      created_at: now,
    };
    // Host names are unique across accounts: one lock for them all.
    await this.store.unitOfWork({ locks: ['apps:domains', `apps:app:${app.id}`] }, async ({ tx }) => {
      const repo = AppsRepo.over(tx);
      if (!(await repo.appById(app.id))) throw appsErrors.notFound();
      if (await repo.domainByHost(host)) throw appsErrors.domainTaken(host);
      if (max !== null && (await repo.domains(app.id)).length >= max)
        throw appsErrors.quotaOf('custom domains on this app', max);
      await repo.insertDomain(row);
    });
    return this.view(row, app.id);
  }

  async list(customerId: string, appRef: string) {
    const app = await this.apps.statusOfApp(customerId, appRef);
    const domains = [];
    for (const d of await this.repo.domains(app.id)) domains.push(await this.view(d, app.id));
    return { domains, total: domains.length };
  }

  async get(customerId: string, appRef: string, ref: string) {
    const d = await this.find(customerId, appRef, ref);
    return this.view(d, d.app_id);
  }

  async remove(customerId: string, appRef: string, ref: string) {
    const d = await this.find(customerId, appRef, ref);
    await this.repo.deleteDomain(d.id);
    return { deleted: true as const, id: d.id };
  }

  /**
   * Looks the name up now: proven for `custom_host` (the name or a parent domain), and a CNAME to
   * the app's host. When both hold, the domain is active and gets its certificate.
   */
  async check(customerId: string, appRef: string, ref: string) {
    const d = await this.find(customerId, appRef, ref);
    const target = await this.appHost(customerId, d.app_id);
    const now = this.clock.nowMs();
    const proven = (await this.verification.verifiedDomains(customerId, 'custom_host')).some(
      (name) => d.host_name === name || d.host_name.endsWith(`.${name}`),
    );
    let cnames: string[] = [];
    let lookupError: string | null = null;
    try {
      cnames = (await this.lookup.cname(d.host_name)).map((c) => c.toLowerCase().replace(/\.$/, ''));
    } catch (err) {
      lookupError = (err as Error).message;
    }
    const pointed = cnames.includes(target);
    const problems = [
      proven
        ? null
        : `${d.host_name} is not proven yet: verify it (or a parent domain) for purpose custom_host through /v1/domain-verification.`,
      pointed
        ? null
        : lookupError
          ? `The CNAME lookup of ${d.host_name} failed (${lookupError}); try again later.`
          : `${d.host_name} has no CNAME to ${target}${cnames.length ? ` (it points at ${cnames.join(', ')})` : ''}.`,
    ].filter((p): p is string => p !== null);
    const patch: Partial<AppsDomainsTable> = { checked_at: now };
    if (problems.length) {
      patch.status = 'pending';
      patch.status_message = problems.join(' ');
    } else {
      patch.status = 'active';
      patch.status_message = `Proven and pointing at ${target}.`;
      if (d.certificate_status !== 'issued') Object.assign(patch, await this.issue(d.host_name, now));
    }
    await this.repo.updateDomain(d.id, patch);
    return this.view({ ...d, ...patch }, d.app_id);
  }

  /** Renews issued certificates that expire within `RENEW_BEFORE_DAYS` (a job on the clock). */
  async renewDue(): Promise<number> {
    const now = this.clock.nowMs();
    let n = 0;
    for (const d of await this.repo.domainsExpiringBefore(now + RENEW_BEFORE_DAYS * DAY)) {
      await this.repo.updateDomain(d.id, await this.issue(d.host_name, now));
      n++;
    }
    return n;
  }

  /** For the ingress: the app label a custom host routes to (active domains only). */
  async labelFor(hostName: string): Promise<string | null> {
    const d = await this.repo.domainByHost(hostName);
    if (!d || d.status !== 'active') return null;
    return (await this.repo.appById(d.app_id))?.host_label ?? null;
  }

  /** For the ingress: the certificate and key of a custom host, PEM. */
  async certificateFor(hostName: string): Promise<{ cert: string; key: string } | null> {
    const d = await this.repo.domainByHost(hostName);
    if (!d || d.certificate_status !== 'issued' || !d.cert_pem || !d.key_sealed) return null;
    return { cert: d.cert_pem, key: this.secrets.open(d.key_sealed) };
  }

  /** The local CA's certificate, for clients to trust. */
  async caCertificate(): Promise<string> {
    return (await this.localCa()).certPem;
  }

  private async issue(hostName: string, now: number): Promise<Partial<AppsDomainsTable>> {
    try {
      const c = this.acme
        ? await this.acme.issue(hostName)
        : await issueFromLocalCa(await this.localCa(), hostName, now);
      return {
        certificate_status: 'issued',
        certificate_error: null,
        cert_pem: c.certPem,
        key_sealed: this.secrets.seal(c.keyPem),
        cert_issued_at: now,
        cert_expires_at: c.notAfter,
      };
    } catch (err) {
      return { certificate_status: 'failed', certificate_error: (err as Error).message };
    }
  }

  /** Created once, in the store (so every process of a scaled-out install signs with the same CA). */
  private async localCa(): Promise<LocalCaMaterial> {
    if (this.ca) return this.ca;
    const ca = await this.store.unitOfWork({ locks: ['apps:local-ca'] }, async ({ tx }) => {
      const repo = AppsRepo.over(tx);
      const row = await repo.localCa();
      if (row) return { certPem: row.cert_pem, keyPem: this.secrets.open(row.key_sealed) };
      const made = await createLocalCa(this.clock.nowMs(), this.apps.domain);
      await repo.insertLocalCa(made.certPem, this.secrets.seal(made.keyPem), this.clock.nowMs());
      return made;
    });
    this.ca = ca;
    return ca;
  }

  private async appHost(customerId: string, appId: string) {
    const app = await this.apps.get(customerId, appId);
    return new URL(app.url).hostname;
  }

  private async find(customerId: string, appRef: string, ref: string) {
    const app = await this.apps.statusOfApp(customerId, appRef);
    const d = await this.repo.domain(app.id, ref.trim().toLowerCase().replace(/\.$/, ''));
    if (!d) throw appsErrors.domainNotFound();
    return d;
  }

  private async view(d: AppsDomainsTable, appId: string) {
    const app = await this.repo.appById(appId);
    const target = `${app?.host_label}.${this.apps.domain}`;
    return {
      id: d.id,
      app_id: d.app_id,
      host_name: d.host_name,
      status: d.status,
      status_message: d.status_message,
      cname_target: target,
      certificate_status: d.certificate_status,
      certificate_error: d.certificate_error,
      certificate_issuer: this.acme ? 'acme' : 'local-ca',
      certificate_pem: d.certificate_status === 'issued' ? d.cert_pem : null,
      certificate_issued_at: isoOf(d.cert_issued_at === null ? null : Number(d.cert_issued_at)),
      certificate_expires_at: isoOf(d.cert_expires_at === null ? null : Number(d.cert_expires_at)),
      checked_at: isoOf(d.checked_at === null ? null : Number(d.checked_at)),
      created_at: isoOf(Number(d.created_at))!,
    };
  }
}
