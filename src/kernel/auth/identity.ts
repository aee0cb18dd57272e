import type { Clock } from '../clock.js';
import { AppError, kernelErrors } from '../errors.js';
import { newId, newShortId } from '../ids.js';
import type { Plan } from '../limits/quotas.js';
import { hashToken } from '../secrets.js';
import { fromJson, insertUnique, toJson } from '../store/dialect.js';
import type { Store } from '../store/store.js';
import { ALL_SCOPES, isKnownScope, normaliseService, SERVICES, type ServiceName } from './catalogue.js';
import { CredentialCache } from './credential-cache.js';
import { type ApiKeyRow, type ApiKeyWithCustomer, type CustomerRow, IdentityRepo } from './identity-repo.js';
import type { Credential } from './principal.js';
import { newApiToken } from './tokens.js';

export type CustomerType = 'private' | 'business';

export interface NewCustomer {
  /** Only for restoring a known customer (the development customer after a reset). */
  id?: string;
  shortId?: string;
  email: string;
  customerType?: CustomerType;
  firstName?: string | null;
  lastName?: string | null;
  company?: string | null;
  plan?: string;
}

export interface ApiKeyView {
  id: string;
  key_prefix: string;
  key_type: 'service' | 'account';
  service: string | null;
  scopes: string[];
  description: string | null;
  is_active: boolean;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
}

/** A stored last-use time is refreshed at most this often, so authentication stays read-only. */
const LAST_USED_RESOLUTION_MS = 60_000;

const identityErrors = {
  emailTaken: () => new AppError('conflict', 'email_taken', 'A customer with this e-mail already exists.'),
  unknownService: (name: string) =>
    new AppError(
      'invalid',
      'unknown_service',
      `Unknown service "${name}". Services: ${SERVICES.join(', ')}.`,
      {
        errors: [{ path: '/body/service', message: 'unknown service' }],
      },
    ),
  unknownScopes: (scopes: string[], all: string[]) =>
    new AppError(
      'invalid',
      'unknown_scope',
      `Unknown scope(s): ${scopes.join(', ')}. See GET /openapi.json.`,
      {
        errors: scopes.map((s) => ({
          path: `/body/scopes/${all.indexOf(s)}`,
          message: `unknown scope ${s}`,
        })),
      },
    ),
  keyNotFound: () => kernelErrors.notFound('API key'),
};

const STATUS_CHANNEL = 'fjord_customer_status';

/**
 * Customers and their credentials: creation, listing, revocation and authentication of API keys.
 * Secrets are returned once and stored only as SHA-256 hashes.
 */
export class IdentityService {
  private readonly repo: IdentityRepo;
  private readonly cache: CredentialCache;
  private readonly statusListeners: ((customerId: string) => void)[] = [];
  private unsubscribe: (() => void) | null = null;
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.repo = new IdentityRepo(store);
    this.cache = new CredentialCache(store.externalChanges);
  }

  /**
   * Calls `listener` with a customer's id when it is suspended or reactivated, in every process
   * of the store ('' when notices may have been lost: treat every customer as changed). Areas that
   * cache credentials outside the request path (the S3 data plane's key cache, brokers holding
   * device sessions) drop them here, so suspension acts from the next request.
   */
  onCustomerStatusChanged(listener: (customerId: string) => void): () => void {
    this.statusListeners.push(listener);
    this.unsubscribe ??= this.store.subscribe(STATUS_CHANNEL, (payload) => {
      this.cache.clear();
      for (const l of this.statusListeners) l(payload);
    });
    return () => {
      const i = this.statusListeners.indexOf(listener);
      if (i >= 0) this.statusListeners.splice(i, 1);
    };
  }

  /** After writes that bypass this service (an emulator reset). */
  forgetCachedCredentials(): void {
    this.cache.clear();
  }

  async createCustomer(input: NewCustomer): Promise<CustomerRow> {
    const row: CustomerRow = {
      id: input.id ?? newId(),
      short_id: input.shortId ?? newShortId(),
      email: input.email.trim().toLowerCase(),
      first_name: input.firstName ?? null,
      last_name: input.lastName ?? null,
      company: input.company ?? null,
      customer_type: input.customerType ?? 'private',
      status: 'active',
      plan: input.plan ?? 'free',
      created_at: this.clock.nowMs(),
    };
    await insertUnique(() => this.repo.insertCustomer(row), identityErrors.emailTaken);
    return row;
  }

  async getCustomer(id: string): Promise<CustomerRow | undefined> {
    const generation = this.cache.check();
    const cached = this.cache.customer(id);
    if (cached) return cached;
    const row = await this.repo.customerById(id);
    if (row) this.cache.putCustomer(row, generation);
    return row;
  }
  /** `getCustomer` answered from the cache, without a promise; undefined when only the store can say. */
  getCustomerNow(id: string): CustomerRow | undefined {
    if (!this.cache.enabled) return undefined;
    this.cache.check();
    return this.cache.customer(id);
  }

  /**
   * The rule every credential kind follows, the API's and the areas' own (S3 keys, router tokens,
   * device and worker credentials): it works only while its customer is active. Exact from the
   * next request on in this process; in other processes on the same SQLite file, within
   * STORE_CHECK_MS of the commit (see CredentialCache).
   */
  async isActive(customerId: string): Promise<boolean> {
    return (await this.getCustomer(customerId))?.status === 'active';
  }

  findCustomerByEmail(email: string) {
    return this.repo.customerByEmail(email.trim().toLowerCase());
  }
  listCustomers(limit = 50, offset = 0) {
    return this.repo.listCustomers(limit, offset);
  }
  countCustomers() {
    return this.repo.countCustomers();
  }
  /** The customer's plan: its quotas apply to the next create; nothing that exists is removed. */
  async setCustomerPlan(id: string, plan: Plan) {
    await this.repo.updateCustomer(id, { plan });
    this.cache.clear();
  }
  async setCustomerStatus(id: string, status: 'active' | 'suspended') {
    await this.repo.updateCustomer(id, { status });
    this.cache.clear();
    await this.store.publish(STATUS_CHANNEL, id);
  }

  /** `token` is for seeding only: a known secret a test suite can hard-code. */
  async createServiceKey(
    customerId: string,
    service: string,
    description: string | null,
    token?: string,
    expiresAt: number | null = null,
  ) {
    const name = normaliseService(service);
    if (!name) throw identityErrors.unknownService(service);
    return this.insertKey(customerId, {
      keyType: 'service',
      service: name,
      scopes: [],
      description,
      token,
      expiresAt,
    });
  }

  async createPat(
    customerId: string,
    scopes: string[],
    description: string | null,
    expiresInDays?: number | null,
    token?: string,
    expiresNoLaterThan: number | null = null,
  ) {
    const unknown = scopes.filter((s) => !isKnownScope(s));
    if (unknown.length > 0) throw identityErrors.unknownScopes(unknown, scopes);
    // One reading of the clock, so that expiry is exactly the stated days after creation.
    const now = this.clock.nowMs();
    return this.insertKey(customerId, {
      keyType: 'account',
      service: null,
      scopes: [...new Set(scopes)],
      description,
      createdAt: now,
      expiresAt: earliest(expiresInDays ? now + expiresInDays * 86_400_000 : null, expiresNoLaterThan),
      token,
    });
  }

  /** A PAT holding every scope: what the operator CLI and the development customer get. */
  createFullPat(customerId: string, description: string, token?: string) {
    return this.insertKey(customerId, {
      keyType: 'account',
      service: null,
      scopes: [...ALL_SCOPES],
      description,
      token,
    });
  }

  /** Whether a key with this secret exists, live or revoked (seeding is idempotent by secret). */
  async keyExists(token: string): Promise<boolean> {
    return (await this.repo.apiKeyByHash(hashToken(token))) !== undefined;
  }

  async listKeys(customerId: string): Promise<ApiKeyView[]> {
    const now = this.clock.nowMs();
    return (await this.repo.listApiKeys(customerId)).map((row) => viewOf(row, now));
  }

  async revokeKey(customerId: string, keyId: string): Promise<void> {
    const revoked = await this.repo.revokeApiKey(customerId, keyId, this.clock.nowMs());
    this.cache.clear();
    if (!revoked) throw identityErrors.keyNotFound();
  }

  /** Resolves an API key (service key or PAT). Returns null for anything that is not a live key. */
  async authenticateKey(token: string): Promise<{ customerId: string; credential: Credential } | null> {
    const generation = this.cache.check();
    const known = this.cache.keyByToken(token);
    if (known) return this.acceptKey(known);
    const hash = hashToken(token);
    let row = this.cache.key(hash);
    if (!row) {
      row = await this.repo.apiKeyByHash(hash);
      if (row) this.cache.putKey(hash, row, generation);
    }
    if (row) this.cache.putToken(token, row, generation);
    return row ? this.acceptKey(row) : null;
  }

  /**
   * `authenticateKey` by the key's lookup hash: a console session keeps the hash of the PAT it
   * was exchanged for (never the PAT), and lives only while that key is live.
   */
  async authenticateKeyHash(hash: string): Promise<{ customerId: string; credential: Credential } | null> {
    const generation = this.cache.check();
    let row = this.cache.key(hash);
    if (!row) {
      row = await this.repo.apiKeyByHash(hash);
      if (row) this.cache.putKey(hash, row, generation);
    }
    return row ? this.acceptKey(row) : null;
  }

  /**
   * `authenticateKey` answered from the cache, without a promise; undefined when the key is not
   * cached (or nothing is), so only the store can say.
   */
  authenticateKeyNow(token: string): { customerId: string; credential: Credential } | null | undefined {
    if (!this.cache.enabled) return undefined;
    const generation = this.cache.check();
    let row = this.cache.keyByToken(token);
    if (!row) {
      row = this.cache.key(hashToken(token));
      if (!row) return undefined;
      this.cache.putToken(token, row, generation);
    }
    return this.acceptKey(row);
  }

  /** The key's principal if it is active, unexpired and its customer active; records its use. */
  private acceptKey(row: ApiKeyWithCustomer): { customerId: string; credential: Credential } | null {
    if (row.is_active !== 1 || row.customer_status !== 'active') return null;
    const now = this.clock.nowMs();
    if (row.expires_at !== null && row.expires_at <= now) return null;
    if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_RESOLUTION_MS) {
      row.last_used_at = now; // the cached row too, so the next request does not write again
      this.repo.touchApiKey(row.id, now).catch(this.onError);
    }
    return { customerId: row.customer_id, credential: credentialOf(row) };
  }

  async customerForOidc(issuer: string, subject: string, email: string | null): Promise<string | null> {
    // A suspended customer's identities stop working at once, as its API keys do.
    const linked = await this.repo.oidcIdentity(issuer, subject);
    if (linked) {
      const customer = await this.repo.customerById(linked.customer_id);
      return customer?.status === 'active' ? customer.id : null;
    }
    if (!email) return null;
    const customer = await this.findCustomerByEmail(email);
    if (!customer || customer.status !== 'active') return null;
    await this.repo.linkOidcIdentity(issuer, subject, customer.id, this.clock.nowMs());
    return customer.id;
  }

  private async insertKey(
    customerId: string,
    k: {
      keyType: 'service' | 'account';
      service: ServiceName | null;
      scopes: string[];
      description: string | null;
      createdAt?: number;
      expiresAt?: number | null;
      token?: string;
    },
  ): Promise<{ view: ApiKeyView; key: string }> {
    const fresh = newApiToken(k.keyType);
    const token = k.token ?? fresh.token;
    const row: ApiKeyRow = {
      id: newId(),
      customer_id: customerId,
      key_type: k.keyType,
      service: k.service,
      scopes: toJson(k.scopes),
      description: k.description,
      key_prefix: k.token ? token.slice(0, fresh.keyPrefix.length) : fresh.keyPrefix,
      key_hash: hashToken(token),
      is_active: 1,
      created_at: k.createdAt ?? this.clock.nowMs(),
      last_used_at: null,
      expires_at: k.expiresAt ?? null,
      revoked_at: null,
    };
    await this.repo.insertApiKey(row);
    return { view: viewOf(row, row.created_at), key: token };
  }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The earlier of two optional expiry times (null: never). */
const earliest = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);

/** Cached rows keep their parsed credential, so a PAT's scopes are parsed once, not per request. */
const parsedCredentials = new WeakMap<ApiKeyRow, Credential>();
function credentialOf(row: ApiKeyRow): Credential {
  let credential = parsedCredentials.get(row);
  if (!credential) {
    credential =
      row.key_type === 'service'
        ? { kind: 'service_key', id: row.id, service: row.service as ServiceName }
        : { kind: 'pat', id: row.id, scopes: fromJson<string[]>(row.scopes, []), expiresAt: row.expires_at };
    parsedCredentials.set(row, credential);
  }
  return credential;
}

/** `is_active` is false once a key is revoked or past its expiry. */
function viewOf(row: ApiKeyRow, now: number): ApiKeyView {
  return {
    id: row.id,
    key_prefix: row.key_prefix,
    key_type: row.key_type,
    service: row.service,
    scopes: fromJson<string[]>(row.scopes, []),
    description: row.description,
    is_active: row.is_active === 1 && (row.expires_at === null || row.expires_at > now),
    created_at: iso(row.created_at)!,
    last_used_at: iso(row.last_used_at),
    expires_at: iso(row.expires_at),
  };
}
