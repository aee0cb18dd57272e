import type { DynPlanLimits } from '../../config/config.js';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import { isoOf } from '../../kernel/clock.js';
import { AppError, kernelErrors } from '../../kernel/errors.js';
import { newId, randomString } from '../../kernel/ids.js';
import { isAtOrBelow, normaliseDomain } from '../../kernel/net/domain-name.js';
import { hashToken } from '../../kernel/secrets.js';
import type { Store } from '../../kernel/store/store.js';
import type { DynCredentialsTable, DynHostnamesTable } from './migrations.js';
import { DynRepo } from './repo.js';

export type CredentialKind = DynCredentialsTable['kind'];

/** What dynamic DNS needs from Fjord's DNS (the DNS area's service provides it). */
export interface DynZones {
  /** The platform's dynamic zone, created on first use and owned by the platform. */
  ensurePlatformZone(apex: string): Promise<{ id: string }>;
  /** The customer's own Fjord zone containing `name` (apex included), if any. */
  customerZoneContaining(customerId: string, name: string): Promise<{ id: string; apex: string } | null>;
  /** Replaces the A or AAAA records at `name` (an empty list removes them). */
  setAddresses(
    zoneId: string,
    name: string,
    type: 'A' | 'AAAA',
    addresses: string[],
    ttl: number,
  ): Promise<void>;
}

export interface DynSettings {
  zone: string;
  ttl: number;
  plans: { home: DynPlanLimits; fleet: DynPlanLimits };
  updateUrl: () => string;
}

export const dynErrors = {
  hostnameNotFound: () => kernelErrors.notFound('Hostname'),
  credentialNotFound: () => kernelErrors.notFound('Credential'),
  invalidHostname: (hostname: string, zone: string) =>
    kernelErrors.invalid(
      `"${hostname}" must be one label under ${zone} (e.g. myhome.${zone}) or a name inside one of your Fjord DNS zones.`,
      [{ path: '/body/hostname', message: 'not a hostname this account can use' }],
    ),
  hostnameTaken: (hostname: string) =>
    new AppError('conflict', 'hostname_taken', `${hostname} is already in use.`),
  quota: (what: string, limit: number, plan: string) =>
    new AppError('forbidden', 'quota_exceeded', `The ${plan} plan allows ${limit} ${what}.`),
};

const SECRET_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** Dynamic DNS: hostnames, their update credentials (one active at a time) and history. */
export class DynService {
  readonly repo: DynRepo;

  constructor(
    store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly settings: DynSettings,
    private readonly zones: DynZones,
  ) {
    this.repo = new DynRepo(store);
  }

  get ttl(): number {
    return this.settings.ttl;
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

  async createHostname(customerId: string, input: { hostname: string }) {
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
      if (own) target = { id: own.id, kind: 'customer' };
    }
    if (!target) throw dynErrors.invalidHostname(input.hostname, zone);
    const { plan, limits } = await this.planOf(customerId);
    if ((await this.repo.countHostnames(customerId)) >= limits.hostnames) {
      throw dynErrors.quota('hostnames', limits.hostnames, plan);
    }
    if (await this.repo.hostnameByName(hostname)) throw dynErrors.hostnameTaken(hostname);
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
      last_update_at: null,
      created_at: this.clock.nowMs(),
    };
    try {
      await this.repo.insertHostname(row);
    } catch (err) {
      // Two customers racing for the same name: the unique index decides.
      if (await this.repo.hostnameByName(hostname)) throw dynErrors.hostnameTaken(hostname);
      throw err;
    }
    return this.hostnameView(row);
  }

  async listHostnames(customerId: string) {
    return (await this.repo.hostnames(customerId)).map((h) => this.hostnameView(h));
  }

  async getHostname(customerId: string, id: string) {
    return this.hostnameView(await this.loadHostname(customerId, id));
  }

  async deleteHostname(customerId: string, id: string) {
    const h = await this.loadHostname(customerId, id);
    await this.zones.setAddresses(h.zone_id, h.hostname, 'A', [], this.settings.ttl);
    await this.zones.setAddresses(h.zone_id, h.hostname, 'AAAA', [], this.settings.ttl);
    await this.repo.deleteHostname(id);
    return { success: true, message: `${h.hostname} deleted; its address records are gone.` };
  }

  async createCredential(
    customerId: string,
    hostnameId: string,
    kind: CredentialKind,
    description: string | null,
  ) {
    const h = await this.loadHostname(customerId, hostnameId);
    const { plan, limits } = await this.planOf(customerId);
    if ((await this.repo.countCredentials(h.id)) >= limits.sources) {
      throw dynErrors.quota('update sources per hostname', limits.sources, plan);
    }
    const password = randomString(32, SECRET_ALPHABET);
    const row: DynCredentialsTable = {
      id: newId(),
      hostname_id: h.id,
      customer_id: customerId,
      kind,
      username: `${kind === 'router_token' ? 'rt' : 'up'}-${randomString(16, 'abcdefghijklmnopqrstuvwxyz0123456789')}`,
      secret_hash: hashToken(password),
      description,
      created_at: this.clock.nowMs(),
      last_used_at: null,
    };
    await this.repo.insertCredential(row);
    // A hostname's first credential becomes its source; any later switch is an explicit call.
    let active = false;
    if (!h.active_source_id) {
      await this.repo.updateHostname(h.id, { active_source_id: row.id });
      active = true;
    }
    return { ...this.credentialView(row, active), password };
  }

  async listCredentials(customerId: string, hostnameId: string, kind: CredentialKind) {
    const h = await this.loadHostname(customerId, hostnameId);
    return (await this.repo.credentials(h.id, kind)).map((c) =>
      this.credentialView(c, c.id === h.active_source_id),
    );
  }

  async deleteCredential(customerId: string, hostnameId: string, kind: CredentialKind, id: string) {
    const h = await this.loadHostname(customerId, hostnameId);
    const c = await this.repo.credential(h.id, id);
    if (!c || c.kind !== kind) throw dynErrors.credentialNotFound();
    await this.repo.deleteCredential(h.id, id);
    return { success: true, message: 'Credential deleted; it can no longer update the hostname.' };
  }

  /** Switches the hostname's one active update source in a single write. */
  async setActiveSource(customerId: string, hostnameId: string, sourceId: string) {
    const h = await this.loadHostname(customerId, hostnameId);
    const c = await this.repo.credential(h.id, sourceId);
    if (!c) {
      throw new AppError('invalid', 'unknown_source', 'source_id must be a credential of this hostname.', {
        errors: [{ path: '/body/source_id', message: 'not a credential of this hostname' }],
      });
    }
    await this.repo.updateHostname(h.id, { active_source_id: c.id });
    return this.hostnameView({ ...h, active_source_id: c.id });
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

  /** Writes new addresses to DNS (the caller has authorised the update and checked limits). */
  async applyAddresses(
    h: DynHostnamesTable,
    next: { ipv4: string | null; ipv6: string | null; offline: boolean },
  ) {
    const ttl = this.settings.ttl;
    const v4 = next.offline || !next.ipv4 ? [] : [next.ipv4];
    const v6 = next.offline || !next.ipv6 ? [] : [next.ipv6];
    if (next.offline || next.ipv4 !== h.ipv4 || h.offline === 1) {
      await this.zones.setAddresses(h.zone_id, h.hostname, 'A', v4, ttl);
    }
    if (next.offline || next.ipv6 !== h.ipv6 || h.offline === 1) {
      await this.zones.setAddresses(h.zone_id, h.hostname, 'AAAA', v6, ttl);
    }
    await this.repo.updateHostname(h.id, {
      ipv4: next.ipv4,
      ipv6: next.ipv6,
      offline: next.offline ? 1 : 0,
      last_update_at: this.clock.nowMs(),
    });
  }

  private async loadHostname(customerId: string, id: string) {
    const h = await this.repo.hostname(customerId, id);
    if (!h) throw dynErrors.hostnameNotFound();
    return h;
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
