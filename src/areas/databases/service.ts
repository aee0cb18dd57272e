import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Principal } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { isAppError } from '../../kernel/errors.js';
import { newId, randomString } from '../../kernel/ids.js';
import { isUniqueViolation } from '../../kernel/store/dialect.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import { type DatabaseRef, type DbType, type EngineDriver, FirewallUnmanaged } from './drivers/driver.js';
import type { DatabaseEngines } from './engines/engines.js';
import type { DatabasesTable } from './migrations.js';
import type { DatabasesRepo } from './repo.js';
import { type DatabaseQuotas, DEFAULT_REQUESTED_NAME, dbErrors, technicalName, toMb } from './rules.js';

/** A create's answer: `password` is null when form B found the database already there. */
export interface CreatedDatabase {
  created: boolean;
  row: DatabasesTable;
  password: string | null;
  host: string;
  port: number;
  connection_string: string;
}

const iso = (ms: number) => new Date(ms).toISOString();
/** 32 characters from 62: about 190 bits, and nothing a shell or a URL needs quoted. */
export const newDatabasePassword = () => randomString(32);

export interface CreateRequest {
  form: 'A' | 'B';
  dbType: DbType;
  name: string | null;
  description: string | null;
  tier: 'standard' | 'encrypted';
  customerId: string | null;
}

/**
 * Customer databases: the control-plane record (store) and the real database and user on the
 * engine's server, kept in step. Record first, server second: the row is what takes the name
 * and the quota place, and a failed server create removes it. A crash between the two leaves
 * a row whose server database is missing (`status: "missing"` in its info), which delete clears.
 */
export class DatabasesService {
  private readonly repo: DatabasesRepo;
  constructor(
    /** The repo for reads (`read`), and units with it bound to their transaction. */
    private readonly data: Units<DatabasesRepo>,
    readonly engines: DatabaseEngines,
    private readonly identity: IdentityService,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
    private readonly internalCustomers: readonly string[],
    /** The plan quotas, from the limits table (the snapshot, firewall and report parts read them here). */
    readonly quotas: DatabaseQuotas,
    /** The store's cross-process lock by name (Store.exclusive). */
    private readonly serialise: <T>(key: string, work: () => Promise<T>) => Promise<T>,
  ) {
    this.repo = data.read;
  }

  /** The customer's plan (its quotas are `quotas.of(plan)`). */
  async planOf(customerId: string): Promise<string> {
    return (await this.identity.getCustomer(customerId))?.plan ?? 'free';
  }

  /** Set by the area: removes what other parts keep of a database (its snapshot files). */
  beforeDelete: ((row: DatabasesTable) => Promise<void>) | null = null;

  private readonly synced = new Map<EngineDriver, Promise<void>>();

  /**
   * Server-side steps that must not interleave (per database id, or per engine's shared file), in
   * this process or any other process of the store.
   */
  exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
    return this.serialise(`databases:${key}`, work);
  }

  async driver(dbType: DbType): Promise<EngineDriver> {
    let d: EngineDriver;
    try {
      d = await this.engines.driver(dbType);
    } catch (err) {
      throw dbErrors.engineUnavailable(err);
    }
    // The first use of a server writes its access rules from the store (an embedded server's
    // pg_hba.conf starts as initdb left it; an external one may have drifted while we were down).
    let sync = this.synced.get(d);
    if (!sync) {
      sync = d.syncFirewall(() => this.repo.rulesOfEngine(dbType));
      this.synced.set(d, sync);
      sync.catch(() => this.synced.delete(d));
    }
    try {
      await sync;
    } catch (err) {
      throw dbErrors.engineUnavailable(err);
    }
    return d;
  }

  /**
   * After an emulator reset (every record gone): empties the servers Fjord owns — embedded and
   * simulated ones — so they match. External servers are the operator's and are left alone.
   */
  async afterReset(): Promise<void> {
    this.synced.clear();
    for (const dbType of ['postgresql', 'mariadb'] as const) {
      if (this.engines.plans[dbType].kind === 'external') continue;
      const started = this.engines.started(dbType);
      if (!started) continue;
      const d = await started;
      await d.dropAllCustomerDatabases();
      await d.syncFirewall(async () => new Map());
    }
  }

  /** Runs a server operation; server errors become a clear 502, unreachable servers a 503. */
  async onServer<T>(dbType: DbType, op: (d: EngineDriver) => Promise<T>): Promise<T> {
    const d = await this.driver(dbType);
    try {
      return await op(d);
    } catch (err) {
      if (isAppError(err) || err instanceof FirewallUnmanaged) throw err;
      const code = (err as { code?: string }).code ?? '';
      if (/ECONNREFUSED|ETIMEDOUT|ENOENT|ER_GET_CONNECTION_TIMEOUT|EHOSTUNREACH/.test(code))
        throw dbErrors.engineUnavailable(err);
      throw dbErrors.engineFailed(err);
    }
  }

  /** `customer_id` is honoured for internal service keys only (doc 1); everyone else acts for themselves. */
  actingCustomer(principal: Principal, requested: string | null | undefined): string {
    if (
      requested &&
      principal.credential.kind === 'service_key' &&
      this.internalCustomers.includes(principal.customerId)
    ) {
      return requested;
    }
    return principal.customerId;
  }

  ref(row: DatabasesTable): DatabaseRef {
    return { name: row.technical_name, user: row.username, connectionLimit: row.connection_limit };
  }

  async get(customerId: string, dbType: DbType, name: string): Promise<DatabasesTable> {
    const row = await this.repo.find(customerId, dbType, name);
    if (!row) throw dbErrors.notFound();
    return row;
  }

  connectionString(
    dbType: DbType,
    user: string,
    password: string | null,
    host: string,
    port: number,
    db: string,
  ) {
    const scheme = dbType === 'postgresql' ? 'postgresql' : 'mysql';
    const auth = password ? `${user}:${password}` : user;
    return `${scheme}://${auth}@${host}:${port}/${db}`;
  }

  async create(principal: Principal, req: CreateRequest): Promise<CreatedDatabase> {
    const customerId = this.actingCustomer(principal, req.customerId);
    const customer = await this.identity.getCustomer(customerId);
    if (!customer) throw dbErrors.notFound();
    const friendly = req.name ?? DEFAULT_REQUESTED_NAME;
    const technical = technicalName(customer.short_id, req.dbType, friendly);
    const existing = await this.repo.byTechnicalName(req.dbType, technical);
    if (existing) {
      if (req.form === 'A') throw dbErrors.exists(technical);
      const { host, port } = await (await this.driver(req.dbType)).endpoint();
      return {
        created: false,
        row: existing,
        password: null,
        host,
        port,
        connection_string: this.connectionString(req.dbType, existing.username, null, host, port, technical),
      };
    }
    const quota = this.quotas.of(customer.plan);
    const limit = quota.databases;
    const driver = await this.driver(req.dbType);
    if (req.tier === 'encrypted' && !this.engines.encryptedAtRest(req.dbType))
      throw dbErrors.tierUnavailable(req.dbType);

    const now = this.clock.nowMs();
    const row: DatabasesTable = {
      id: newId(),
      customer_id: customerId,
      db_type: req.dbType,
      friendly_name: friendly,
      technical_name: technical,
      username: technical,
      description: req.description,
      tier: req.tier,
      connection_limit: quota.connectionsPerDatabase,
      password_changed_at: now,
      created_at: now,
    };
    // The row first, the server's database second: the row is what makes a name and a quota
    // place ours, so a request racing this one gets 409 (or, in form B, this database) instead of
    // both creating on the server and one dropping what the other made. Counted and inserted in
    // one unit under the customer's lock, so requests at once cannot pass the quota together.
    try {
      await this.data.run([`databases:${customerId}`], async (repo) => {
        const used = await repo.count(customerId);
        if (used >= limit) throw dbErrors.quota(used, limit, customer.plan);
        await repo.insert(row);
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      if (req.form === 'A') throw dbErrors.exists(technical);
      return this.create(principal, req); // form B: answers with the one that won
    }
    const password = newDatabasePassword();
    try {
      await this.onServer(req.dbType, (d) => d.create(this.ref(row), password));
    } catch (err) {
      await this.repo.delete(row.id);
      throw err;
    }
    await this.record(principal, row, 'database.created', { tier: row.tier, form: req.form });
    const { host, port } = await driver.endpoint();
    return {
      created: true,
      row,
      password,
      host,
      port,
      connection_string: this.connectionString(req.dbType, row.username, password, host, port, technical),
    };
  }

  async list(customerId: string, dbType?: DbType) {
    return this.repo.list(customerId, dbType);
  }

  async endpointOf(dbType: DbType) {
    return (await this.driver(dbType)).endpoint();
  }

  /** What the server says about the database; `unknown` when it does not answer. */
  async serverInfo(row: DatabasesTable) {
    try {
      const d = await this.engines.driver(row.db_type as DbType);
      const info = await d.info(this.ref(row));
      // Over its plan's size, the database takes reads and deletes only (size-quota.ts).
      return row.writes_blocked_at && info.status === 'running' ? { ...info, status: 'read_only' } : info;
    } catch {
      return { status: 'unknown', sizeBytes: null, connections: null, connectionLimit: null, owner: null };
    }
  }

  async detail(customerId: string, dbType: DbType, name: string) {
    const row = await this.get(customerId, dbType, name);
    const info = await this.serverInfo(row);
    const { host, port } = await this.endpointOf(dbType);
    return {
      db_name: row.technical_name,
      friendly_name: row.friendly_name,
      technical_name: row.technical_name,
      db_type: dbType,
      host,
      port,
      status: info.status,
      size_mb: toMb(info.sizeBytes),
      created_at: iso(row.created_at),
      description: row.description,
      tier: row.tier,
      connection_limit: row.connection_limit,
    };
  }

  async info(customerId: string, dbType: DbType, name: string) {
    const row = await this.get(customerId, dbType, name);
    const info = await this.serverInfo(row);
    return {
      db_name: row.technical_name,
      db_type: dbType,
      size_mb: toMb(info.sizeBytes),
      connection_count: info.connections,
      connection_limit: info.connectionLimit ?? (info.status === 'running' ? row.connection_limit : null),
      created_at: iso(row.created_at),
      owner: info.owner,
      status: info.status,
    };
  }

  async delete(principal: Principal, dbType: DbType, name: string, username?: string | null) {
    const row = await this.get(principal.customerId, dbType, name);
    if (username && username !== row.username) throw dbErrors.usernameMismatch();
    const hadRules = (await this.repo.rules(row.id)).length > 0;
    await this.onServer(dbType, (d) => d.drop(this.ref(row)));
    await this.beforeDelete?.(row);
    await this.repo.delete(row.id);
    if (hadRules) {
      // Take its lines out of the managed pg_hba.conf too.
      await this.onServer(dbType, (d) =>
        d.applyFirewall(this.ref(row), [], () => this.repo.rulesOfEngine(dbType)),
      ).catch(() => {});
    }
    await this.record(principal, row, 'database.deleted', {});
    return row;
  }

  async update(
    principal: Principal,
    dbType: DbType,
    name: string,
    patch: { connection_limit?: number; description?: string },
  ) {
    const row = await this.get(principal.customerId, dbType, name);
    if (patch.connection_limit !== undefined) {
      await this.onServer(dbType, (d) => d.setConnectionLimit(this.ref(row), patch.connection_limit!));
    }
    const changes: Partial<DatabasesTable> = {};
    if (patch.connection_limit !== undefined) changes.connection_limit = patch.connection_limit;
    if (patch.description !== undefined) changes.description = patch.description;
    if (Object.keys(changes).length > 0) await this.repo.update(row.id, changes);
    await this.record(principal, row, 'database.updated', { ...changes });
    return row;
  }

  async restart(principal: Principal, dbType: DbType, name: string) {
    const row = await this.get(principal.customerId, dbType, name);
    const ended = await this.onServer(dbType, (d) => d.terminateSessions(this.ref(row)));
    await this.record(principal, row, 'database.restarted', { sessions_ended: ended });
    return { row, ended };
  }

  async credentials(customerId: string, dbType: DbType, name: string) {
    const row = await this.get(customerId, dbType, name);
    const { host, port } = await this.endpointOf(dbType);
    return {
      host,
      port,
      database: row.technical_name,
      username: row.username,
      connection_string: this.connectionString(dbType, row.username, null, host, port, row.technical_name),
    };
  }

  async rotate(principal: Principal, dbType: DbType, name: string) {
    const row = await this.get(principal.customerId, dbType, name);
    const password = newDatabasePassword();
    // One at a time per database: two rotations at once must not each answer with a password
    // the other one replaced (MariaDB sets it account by account, one per firewall rule).
    await this.exclusive(row.id, () => this.onServer(dbType, (d) => d.setPassword(this.ref(row), password)));
    const now = this.clock.nowMs();
    await this.repo.update(row.id, { password_changed_at: now });
    await this.record(principal, row, 'database.credentials_rotated', {});
    const { host, port } = await this.endpointOf(dbType);
    return {
      success: true,
      db_name: row.technical_name,
      username: row.username,
      password,
      host,
      port,
      connection_string: this.connectionString(
        dbType,
        row.username,
        password,
        host,
        port,
        row.technical_name,
      ),
      created_at: iso(now),
    };
  }

  async record(
    principal: Principal | null,
    row: DatabasesTable,
    action: string,
    details: Record<string, unknown>,
  ) {
    await this.audit.record({
      customerId: row.customer_id,
      area: 'databases',
      action,
      resourceType: 'database',
      resourceId: row.technical_name,
      actor: principal
        ? { kind: principal.credential.kind, id: principal.credential.id }
        : { kind: 'system', id: null },
      details: { db_type: row.db_type, ...details },
    });
  }
}
