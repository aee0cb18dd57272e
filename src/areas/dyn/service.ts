import type { DynPlanLimits } from '../../config/config.js';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import { isoOf } from '../../kernel/clock.js';
import { AppError } from '../../kernel/errors.js';
import { newId, randomString } from '../../kernel/ids.js';
import { isAtOrBelow, normaliseDomain } from '../../kernel/net/domain-name.js';
import { constantTimeEqual, hashToken } from '../../kernel/secrets.js';
import { insertUnique } from '../../kernel/store/dialect.js';
import type { Store } from '../../kernel/store/store.js';
import type { DynZones } from './dns-zones.js';
import { dynErrors } from './errors.js';
import type { DynCredentialsTable, DynHostnamesTable } from './migrations.js';
import { DynRepo } from './repo.js';

export type CredentialKind = DynCredentialsTable['kind'];
export { dynErrors };

export interface DynSettings {
  zone: string;
  ttl: number;
  plans: { home: DynPlanLimits; fleet: DynPlanLimits };
  updateUrl: () => string;
}

const SECRET_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** Addresses an update asks for; a family left out keeps its current address. */
export interface RequestedAddresses {
  ipv4: string | null;
  ipv6: string | null;
  offline: boolean;
}

export type UpdateResult = 'good' | 'nochg' | 'abuse' | 'badauth';

/**
 * Dynamic DNS: hostnames, their update credentials (one active at a time) and history.
 *
 * The hostname row is the truth about its addresses. Every check-then-write (quotas, the active
 * source, the hourly limit) runs in a write transaction holding the hostname's (or the
 * customer's) lock, so concurrent requests serialise; DNS is then written *from the row*, again
 * until the row's generation stops moving, so racing updates cannot leave DNS behind the row.
 */
export class DynService {
  private readonly repo: DynRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly settings: DynSettings,
    private readonly zones: DynZones,
  ) {
    this.repo = DynRepo.of(store);
  }

  async planOf(customerId: string): Promise<{ plan: 'home' | 'fleet'; limits: DynPlanLimits; type: string }> {
    const customer = await this.identity.getCustomer(customerId);
    const type = customer?.customer_type ?? 'private';
    const plan = type === 'business' ? 'fleet' : 'home';
    return { plan, limits: this.settings.plans[plan], type };
  }

  async entitlement(customerId: string) {
    const { plan, limits, type } = await this.planOf(customerId);
    return {
      plan,
      customer_type: type,
      limits: { ...limits },
      usage: { hostnames: await this.repo.countHostnames(customerId) },
      zone: this.settings.zone,
      ttl: this.settings.ttl,
      update_url: this.settings.updateUrl(),
    };
  }

  async createHostname(customerId: string, input: { hostname: string; replace_records?: boolean }) {
    const hostname = normaliseDomain(input.hostname);
    const zone = this.settings.zone;
    if (!hostname) throw dynErrors.invalidHostname(input.hostname, zone);
    let target: { id: string; kind: DynHostnamesTable['zone_kind'] } | null = null;
    if (isAtOrBelow(hostname, zone)) {
      // Names in the shared zone are one label deep: first come, first served, like DuckDNS.
      const label = hostname.slice(0, -(zone.length + 1));
      if (label === '' || label.includes('.')) throw dynErrors.invalidHostname(input.hostname, zone);
      target = { id: (await this.zones.ensurePlatformZone(zone)).id, kind: 'platform' };
    } else {
      const own = await this.zones.customerZoneContaining(customerId, hostname);
      if (own && own.status !== 'disabled') {
        await this.refuseForeignRecords(customerId, own.apex, hostname, input.replace_records === true);
        target = { id: own.id, kind: 'customer' };
      }
    }
    if (!target) throw dynErrors.invalidHostname(input.hostname, zone);
    const { plan, limits } = await this.planOf(customerId);
    const row: DynHostnamesTable = {
      id: newId(),
      customer_id: customerId,
      hostname,
      zone_id: target.id,
      zone_kind: target.kind,
      ipv4: null,
      ipv6: null,
      offline: 0,
      active_source_id: null,
      generation: 0,
      last_update_at: null,
      created_at: this.clock.nowMs(),
    };
    await this.store.unitOfWork({ locks: [`dyn:customer:${customerId}`] }, async ({ tx }) => {
      const repo = DynRepo.over(tx);
      if ((await repo.countHostnames(customerId)) >= limits.hostnames) {
        throw dynErrors.quota('hostnames', limits.hostnames, plan);
      }
      // Two customers racing for the same name: the unique index decides.
      await insertUnique(
        () => repo.insertHostname(row),
        () => dynErrors.hostnameTaken(hostname),
      );
    });
    return this.hostnameView(row);
  }

  async listHostnames(customerId: string) {
    return (await this.repo.hostnames(customerId)).map((h) => this.hostnameView(h));
  }

  async getHostname(customerId: string, id: string) {
    return this.hostnameView(await this.loadHostname(customerId, id));
  }

  async deleteHostname(customerId: string, id: string) {
    const h = await this.withHostnameLock(customerId, id, async (repo, row) => {
      await repo.deleteHostname(row.id);
      return row;
    });
    // Only records dynamic DNS wrote are removed; a zone deleted meanwhile took them already.
    if (h.last_update_at !== null) await this.clearAddresses(h);
    return { success: true, message: `${h.hostname} deleted; its address records are gone.` };
  }

  async createCredential(
    customerId: string,
    hostnameId: string,
    kind: CredentialKind,
    description: string | null,
  ) {
    const { plan, limits } = await this.planOf(customerId);
    const password = randomString(32, SECRET_ALPHABET);
    const row: DynCredentialsTable = {
      id: newId(),
      hostname_id: hostnameId,
      customer_id: customerId,
      kind,
      username: `${kind === 'router_token' ? 'rt' : 'up'}-${randomString(16, 'abcdefghijklmnopqrstuvwxyz0123456789')}`,
      secret_hash: hashToken(password),
      description,
      created_at: this.clock.nowMs(),
      last_used_at: null,
    };
    const active = await this.withHostnameLock(customerId, hostnameId, async (repo) => {
      if ((await repo.countCredentials(hostnameId)) >= limits.sources) {
        throw dynErrors.quota('update sources per hostname', limits.sources, plan);
      }
      await repo.insertCredential(row);
      // A hostname's first credential becomes its source; any later switch is an explicit call.
      return repo.claimSourceIfNone(hostnameId, row.id);
    });
    return { ...this.credentialView(row, active), password };
  }

  async listCredentials(customerId: string, hostnameId: string, kind: CredentialKind) {
    const h = await this.loadHostname(customerId, hostnameId);
    return (await this.repo.credentials(h.id, kind)).map((c) =>
      this.credentialView(c, c.id === h.active_source_id),
    );
  }

  async deleteCredential(customerId: string, hostnameId: string, kind: CredentialKind, id: string) {
    await this.withHostnameLock(customerId, hostnameId, async (repo) => {
      const c = await repo.credential(hostnameId, id);
      if (!c || c.kind !== kind) throw dynErrors.credentialNotFound();
      await repo.deleteCredential(hostnameId, id);
    });
    return { success: true, message: 'Credential deleted; it can no longer update the hostname.' };
  }

  /**
   * Switches the hostname's one active update source. It waits for any update holding the
   * hostname's lock, so once it answers, every later request of the old source is `badauth`.
   */
  async setActiveSource(customerId: string, hostnameId: string, sourceId: string) {
    const row = await this.withHostnameLock(customerId, hostnameId, async (repo, h) => {
      const c = await repo.credential(hostnameId, sourceId);
      if (!c) {
        throw new AppError('invalid', 'unknown_source', 'source_id must be a credential of this hostname.', {
          errors: [{ path: '/body/source_id', message: 'not a credential of this hostname' }],
        });
      }
      await repo.updateHostname(hostnameId, { active_source_id: c.id });
      return { ...h, active_source_id: c.id };
    });
    return this.hostnameView(row);
  }

  async updates(customerId: string, hostnameId: string, page: number, pageSize: number) {
    const h = await this.loadHostname(customerId, hostnameId);
    const [rows, total] = await Promise.all([
      this.repo.updates(h.id, pageSize, (page - 1) * pageSize),
      this.repo.countUpdates(h.id),
    ]);
    return {
      updates: rows.map((u) => ({
        id: u.id,
        source_id: u.credential_id,
        result: u.result,
        ipv4: u.ipv4,
        ipv6: u.ipv6,
        offline: u.offline === 1,
        client_ip: u.client_ip,
        user_agent: u.user_agent,
        created_at: isoOf(u.created_at) as string,
      })),
      total,
      page,
      page_size: pageSize,
    };
  }

  /** The credential behind DynDNS2 Basic auth, or null (unknown user or wrong password). */
  async authenticateSource(username: string, password: string): Promise<DynCredentialsTable | null> {
    const credential = await this.repo.credentialByUsername(username);
    if (!credential || !constantTimeEqual(credential.secret_hash, hashToken(password))) return null;
    // A suspended customer's router tokens stop working, as its API keys do.
    if (!(await this.identity.isActive(credential.customer_id))) return null;
    // At most one write a minute per credential, like API keys: routers update in loops.
    const now = this.clock.nowMs();
    if (credential.last_used_at === null || now - credential.last_used_at >= 60_000) {
      await this.repo.touchCredential(credential.id, now);
    }
    return credential;
  }

  /** The hostname a credential updates, or null when it is not the hostname's active source. */
  async hostnameOfSource(credential: DynCredentialsTable): Promise<DynHostnamesTable | null> {
    const h = await this.repo.hostnameById(credential.hostname_id);
    return h && h.active_source_id === credential.id ? h : null;
  }

  /**
   * One DynDNS2 host update: checked and recorded under the hostname's lock (active source,
   * hourly limit, history), then written to DNS from the row. Answers once DNS serves the result.
   */
  async update(
    credential: DynCredentialsTable,
    requested: RequestedAddresses,
    meta: { clientIp: string; userAgent: string | null },
  ): Promise<UpdateResult> {
    const { limits } = await this.planOf(credential.customer_id);
    const now = this.clock.nowMs();
    const result = await this.store.unitOfWork(
      { locks: [`dyn:hostname:${credential.hostname_id}`] },
      async ({ tx }) => {
        const repo = DynRepo.over(tx);
        const h = await repo.hostnameById(credential.hostname_id);
        if (!h || h.active_source_id !== credential.id) return 'badauth' as const;
        const next = {
          ipv4: requested.ipv4 ?? h.ipv4,
          ipv6: requested.ipv6 ?? h.ipv6,
          offline: requested.offline ? 1 : 0,
        };
        let outcome: UpdateResult;
        if ((await repo.countAppliedSince(h.id, now - 3_600_000)) >= limits.updates_per_hour)
          outcome = 'abuse';
        else if (next.ipv4 === h.ipv4 && next.ipv6 === h.ipv6 && next.offline === h.offline)
          outcome = 'nochg';
        else {
          outcome = 'good';
          await repo.updateHostname(h.id, { ...next, generation: h.generation + 1, last_update_at: now });
        }
        await repo.insertUpdate({
          id: newId(),
          hostname_id: h.id,
          credential_id: credential.id,
          result: outcome,
          ipv4: requested.ipv4,
          ipv6: requested.ipv6,
          offline: requested.offline ? 1 : 0,
          client_ip: meta.clientIp,
          user_agent: meta.userAgent?.slice(0, 200) ?? null,
          created_at: now,
        });
        return outcome;
      },
    );
    // `nochg` syncs too: it repairs DNS if someone edited the records behind our back.
    if (result === 'good' || result === 'nochg') await this.syncDns(credential.hostname_id);
    return result;
  }

  /** Writes the row's addresses to DNS until the row did not change meanwhile. */
  private async syncDns(hostnameId: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const h = await this.repo.hostnameById(hostnameId);
      if (!h) return;
      const ttl = this.settings.ttl;
      const live = h.offline === 0;
      await this.zones.setAddresses(h.zone_id, h.hostname, 'A', live && h.ipv4 ? [h.ipv4] : [], ttl);
      await this.zones.setAddresses(h.zone_id, h.hostname, 'AAAA', live && h.ipv6 ? [h.ipv6] : [], ttl);
      const after = await this.repo.hostnameById(hostnameId);
      if (!after) return this.clearAddresses(h);
      if (after.generation === h.generation) return;
    }
  }

  private async clearAddresses(h: DynHostnamesTable): Promise<void> {
    try {
      await this.zones.setAddresses(h.zone_id, h.hostname, 'A', [], this.settings.ttl);
      await this.zones.setAddresses(h.zone_id, h.hostname, 'AAAA', [], this.settings.ttl);
    } catch (err) {
      if (!(err instanceof AppError && err.kind === 'not_found')) throw err;
    }
  }

  /** A customer's zone may already hold records at the name: never silently take them over. */
  private async refuseForeignRecords(customerId: string, apex: string, hostname: string, replace: boolean) {
    const types = await this.zones.recordTypesAt(customerId, apex, hostname);
    if (types.some((t) => t !== 'A' && t !== 'AAAA' && t !== 'TXT' && t !== 'MX' && t !== 'CAA')) {
      throw dynErrors.nameInUse(hostname, `it holds ${[...new Set(types)].join(', ')} records`);
    }
    if (!replace && types.some((t) => t === 'A' || t === 'AAAA')) {
      throw dynErrors.nameInUse(
        hostname,
        'it has address records; send "replace_records": true to hand them to dynamic DNS',
      );
    }
  }

  private async loadHostname(customerId: string, id: string) {
    const h = await this.repo.hostname(customerId, id);
    if (!h) throw dynErrors.hostnameNotFound();
    return h;
  }

  /** Runs `fn` in a write transaction holding the hostname's lock, with the customer's row. */
  private withHostnameLock<T>(
    customerId: string,
    hostnameId: string,
    fn: (repo: DynRepo, h: DynHostnamesTable) => Promise<T>,
  ): Promise<T> {
    return this.store.unitOfWork({ locks: [`dyn:hostname:${hostnameId}`] }, async ({ tx }) => {
      const repo = DynRepo.over(tx);
      const h = await repo.hostname(customerId, hostnameId);
      if (!h) throw dynErrors.hostnameNotFound();
      return fn(repo, h);
    });
  }

  private hostnameView(h: DynHostnamesTable) {
    return {
      id: h.id,
      hostname: h.hostname,
      zone_id: h.zone_id,
      zone_kind: h.zone_kind,
      ipv4: h.ipv4,
      ipv6: h.ipv6,
      offline: h.offline === 1,
      ttl: this.settings.ttl,
      active_source_id: h.active_source_id,
      last_update_at: isoOf(h.last_update_at),
      created_at: isoOf(h.created_at) as string,
    };
  }

  private credentialView(c: DynCredentialsTable, active: boolean) {
    return {
      id: c.id,
      hostname_id: c.hostname_id,
      kind: c.kind,
      username: c.username,
      description: c.description,
      active,
      created_at: isoOf(c.created_at) as string,
      last_used_at: isoOf(c.last_used_at),
    };
  }
}
