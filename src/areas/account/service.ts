import type { AuditTrail } from '../../kernel/audit/audit.js';
import {
  isKnownScope,
  normaliseService,
  SERVICE_SCOPE_AREA,
  scopesSatisfy,
} from '../../kernel/auth/catalogue.js';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { CustomerRow } from '../../kernel/auth/identity-repo.js';
import type { Credential } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { AppError, kernelErrors } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import { deepFreeze } from '../../kernel/immutable.js';
import { insertUnique } from '../../kernel/store/dialect.js';
import type { Store } from '../../kernel/store/store.js';
import type { SshKeysTable } from './migrations.js';
import { AccountRepo } from './repo.js';
import { parseSshPublicKey, SshKeyFormatError } from './ssh-public-key.js';

export const KEY_WARNING = 'Store this key now: it is shown only once and cannot be retrieved later.';

export const accountErrors = {
  customerNotFound: () => kernelErrors.notFound('Customer'),
  sshKeyNotFound: () => kernelErrors.notFound('SSH key'),
  sshKeyInvalid: (message: string) =>
    new AppError('invalid', 'invalid_ssh_key', message, { errors: [{ path: '/body/public_key', message }] }),
  sshKeyExists: () =>
    new AppError('conflict', 'ssh_key_exists', 'This public key is already on the account.'),
  scopeEscalation: (scopes: string[]) =>
    new AppError(
      'forbidden',
      'scope_not_held',
      `A PAT can only grant scopes it holds itself; missing: ${scopes.join(', ')}.`,
    ),
};

/** Counts virtual servers using an SSH key; the virtual servers area plugs the real one in. */
export type SshKeyUsageCounter = (customerId: string, fingerprints: string[]) => Promise<Map<string, number>>;

export interface SshKeyView {
  id: string;
  name: string;
  fingerprint: string;
  key_type: string;
  created_at: string;
  vm_count: number;
}

/** The account area: profile, API keys (through the kernel's identity service) and SSH keys. */
export class AccountService {
  private readonly repo: AccountRepo;

  constructor(
    store: Store,
    private readonly identity: IdentityService,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
    /** Every area that runs servers with SSH keys (`account.ssh-key-usage`); read per request. */
    private readonly usageCounters: () => readonly SshKeyUsageCounter[] = () => [],
  ) {
    this.repo = new AccountRepo(store);
  }

  profile(customerId: string): Promise<Profile> {
    // A cached customer row answers without a promise chain of its own, and its profile is built
    // once per row: the cache hands out a new row object whenever the customer may have changed.
    const cached = this.identity.getCustomerNow(customerId);
    if (cached) return Promise.resolve(profileOf(cached));
    return this.identity.getCustomer(customerId).then((c) => {
      if (!c) throw accountErrors.customerNotFound();
      return profileOf(c);
    });
  }

  listApiKeys(customerId: string) {
    return this.identity.listKeys(customerId);
  }

  async createServiceKey(customerId: string, actor: Credential, service: string, description: string | null) {
    // A PAT mints a service key only for a service it may change itself, and never one that
    // outlives it.
    let expiresAt: number | null = null;
    if (actor.kind === 'pat') {
      const name = normaliseService(service);
      const needed = name ? `${SERVICE_SCOPE_AREA[name]}:write` : null;
      if (needed && !scopesSatisfy(actor.scopes, [needed])) throw accountErrors.scopeEscalation([needed]);
      expiresAt = actor.expiresAt;
    }
    const { view, key } = await this.identity.createServiceKey(
      customerId,
      service,
      description,
      undefined,
      expiresAt,
    );
    await this.record(customerId, actor, 'api_key.created', 'api_key', view.id, {
      key_type: 'service',
      service: view.service,
      key_prefix: view.key_prefix,
    });
    return { ...view, key, warning: KEY_WARNING };
  }

  async createPat(
    customerId: string,
    actor: Credential,
    input: { scopes: string[]; description: string | null; expiresInDays: number | null },
  ) {
    // A PAT may mint PATs, but never one that can do more than itself.
    if (actor.kind === 'pat') {
      const missing = input.scopes.filter((s) => isKnownScope(s) && !scopesSatisfy(actor.scopes, [s]));
      if (missing.length > 0) throw accountErrors.scopeEscalation(missing);
    }
    const { view, key } = await this.identity.createPat(
      customerId,
      input.scopes,
      input.description,
      input.expiresInDays,
      undefined,
      actor.kind === 'pat' ? actor.expiresAt : null,
    );
    await this.record(customerId, actor, 'api_key.created', 'api_key', view.id, {
      key_type: 'account',
      scopes: view.scopes,
      key_prefix: view.key_prefix,
      expires_at: view.expires_at,
    });
    return { ...view, key, warning: KEY_WARNING };
  }

  async revokeApiKey(customerId: string, actor: Credential, keyId: string) {
    await this.identity.revokeKey(customerId, keyId);
    await this.record(customerId, actor, 'api_key.revoked', 'api_key', keyId);
    return { ok: true, revoked: keyId, success: true, message: 'API key revoked.' };
  }

  async listSshKeys(customerId: string): Promise<SshKeyView[]> {
    const rows = await this.repo.listSshKeys(customerId);
    const fingerprints = rows.map((r) => r.fingerprint);
    const counts = await Promise.all(this.usageCounters().map((count) => count(customerId, fingerprints)));
    const usage = (fp: string) => counts.reduce((sum, m) => sum + (m.get(fp) ?? 0), 0);
    return rows.map((r) => sshKeyView(r, usage(r.fingerprint)));
  }

  async addSshKey(
    customerId: string,
    actor: Credential,
    name: string,
    publicKey: string,
  ): Promise<SshKeyView> {
    let parsed: ReturnType<typeof parseSshPublicKey>;
    try {
      parsed = parseSshPublicKey(publicKey);
    } catch (err) {
      if (err instanceof SshKeyFormatError) throw accountErrors.sshKeyInvalid(err.message);
      throw err;
    }
    const row: SshKeysTable = {
      id: newId(),
      customer_id: customerId,
      name: name.trim(),
      public_key: parsed.publicKey,
      fingerprint: parsed.fingerprint,
      key_type: parsed.keyType,
      bits: parsed.bits,
      created_at: this.clock.nowMs(),
    };
    await insertUnique(() => this.repo.insertSshKey(row), accountErrors.sshKeyExists);
    await this.record(customerId, actor, 'ssh_key.created', 'ssh_key', row.id, {
      fingerprint: row.fingerprint,
      key_type: row.key_type,
    });
    return sshKeyView(row, 0);
  }

  async deleteSshKey(customerId: string, actor: Credential, id: string) {
    if (!(await this.repo.deleteSshKey(customerId, id))) throw accountErrors.sshKeyNotFound();
    await this.record(customerId, actor, 'ssh_key.deleted', 'ssh_key', id);
    return { ok: true, deleted: id, success: true, message: 'SSH key deleted; existing servers keep it.' };
  }

  private record(
    customerId: string,
    actor: Credential,
    action: string,
    resourceType: string,
    resourceId: string,
    details?: Record<string, unknown>,
  ) {
    return this.audit.record({
      customerId,
      area: 'account',
      action,
      resourceType,
      resourceId,
      actor,
      details,
    });
  }

  /**
   * The keys a new virtual server gets: the account's SSH keys plus the given public key lines
   * (each checked like an added key), one per fingerprint.
   */
  async keysForNewServer(
    customerId: string,
    lines: string[],
  ): Promise<{ public_key: string; fingerprint: string }[]> {
    const keys = new Map<string, string>();
    for (const r of await this.repo.listSshKeys(customerId)) keys.set(r.fingerprint, r.public_key);
    for (const line of lines) {
      try {
        const parsed = parseSshPublicKey(line);
        keys.set(parsed.fingerprint, parsed.publicKey);
      } catch (err) {
        if (err instanceof SshKeyFormatError) throw accountErrors.sshKeyInvalid(err.message);
        throw err;
      }
    }
    return [...keys].map(([fingerprint, public_key]) => ({ fingerprint, public_key }));
  }

  /** Public key lines of a customer's keys, for the VPS area to deploy. */
  async publicKeys(
    customerId: string,
    ids: string[],
  ): Promise<{ id: string; public_key: string; fingerprint: string }[]> {
    const rows = await this.repo.listSshKeys(customerId);
    return rows
      .filter((r) => ids.includes(r.id))
      .map((r) => ({ id: r.id, public_key: r.public_key, fingerprint: r.fingerprint }));
  }
}

function sshKeyView(r: SshKeysTable, vmCount: number): SshKeyView {
  return {
    id: r.id,
    name: r.name,
    fingerprint: r.fingerprint,
    key_type: r.key_type,
    created_at: new Date(r.created_at).toISOString(),
    vm_count: vmCount,
  };
}

interface Profile {
  customer_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  customer_type: 'private' | 'business';
  status: string;
  created_at: string;
}

const profiles = new WeakMap<CustomerRow, Profile>();
function profileOf(c: CustomerRow): Profile {
  let profile = profiles.get(c);
  if (!profile) {
    // Frozen: the same object for as long as the row is cached, so its JSON is written once too
    // (kernel/http/serializers.ts).
    profile = deepFreeze({
      customer_id: c.id,
      email: c.email,
      first_name: c.first_name,
      last_name: c.last_name,
      company: c.company,
      customer_type: c.customer_type as 'private' | 'business',
      status: c.status,
      created_at: new Date(c.created_at).toISOString(),
    });
    profiles.set(c, profile);
  }
  return profile;
}
