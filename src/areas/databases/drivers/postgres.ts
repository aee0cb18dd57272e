import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { randomString } from '../../../kernel/ids.js';
import { pgModule } from '../../../kernel/lazy.js';
import { type AdminTarget, parseAdminUrl } from './admin-url.js';
import {
  type DatabaseRef,
  type EngineDriver,
  FirewallUnmanaged,
  quoteIdent,
  type ServerDatabaseInfo,
  type ServerDatabaseMetrics,
} from './driver.js';
import { scramVerifier } from './scram.js';

const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * PostgreSQL over an admin connection. Each customer database is owned by its own login role
 * of the same name; `CONNECT` is revoked from PUBLIC, and the managed pg_hba.conf (when Fjord
 * has one) admits a role only to the database of its own name (`sameuser`) and only from the
 * firewall's addresses.
 */
/** The group of the throwaway roles restores log in as. */
const RESTORE_GROUP = 'fjord_restore';

export class PostgresDriver implements EngineDriver {
  readonly dbType = 'postgresql' as const;
  readonly simulated = false;
  private readonly pool: pg.Pool;
  private readonly target: AdminTarget;

  constructor(
    adminUrl: string,
    readonly kind: 'embedded' | 'external',
    private readonly hbaFile: string | null,
  ) {
    this.target = parseAdminUrl(adminUrl, 5432);
    this.pool = new (pgModule().Pool)({
      connectionString: adminUrl,
      max: 4,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 10_000,
    });
    this.pool.on('error', () => {}); // a dropped idle admin connection is retried on next use
  }

  async endpoint() {
    return { host: this.target.host, port: this.target.port };
  }

  private async q<T extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values: unknown[] = [],
  ) {
    return (await this.pool.query<T>(text, values)).rows;
  }

  async version() {
    const [row] = await this.q<{ server_version: string }>('SHOW server_version');
    return (row?.server_version ?? '').split(' ')[0] ?? '';
  }

  async create(db: DatabaseRef, password: string) {
    const name = quoteIdent(db.name);
    const user = quoteIdent(db.user);
    await this.q(
      `CREATE ROLE ${user} LOGIN PASSWORD ${lit(scramVerifier(password))} CONNECTION LIMIT ${db.connectionLimit}`,
    );
    try {
      await this.q(`CREATE DATABASE ${name} OWNER ${user} CONNECTION LIMIT ${db.connectionLimit}`);
      await this.q(`REVOKE ALL ON DATABASE ${name} FROM PUBLIC`);
    } catch (err) {
      await this.q(`DROP DATABASE IF EXISTS ${name}`).catch(() => {});
      await this.q(`DROP ROLE IF EXISTS ${user}`).catch(() => {});
      throw err;
    }
  }

  async exists(name: string) {
    return (await this.q('SELECT 1 FROM pg_database WHERE datname = $1', [name])).length > 0;
  }

  async drop(db: DatabaseRef) {
    await this.q(`DROP DATABASE IF EXISTS ${quoteIdent(db.name)} WITH (FORCE)`);
    await this.q(`DROP ROLE IF EXISTS ${quoteIdent(db.user)}`);
  }

  async setPassword(db: DatabaseRef, password: string) {
    await this.q(`ALTER ROLE ${quoteIdent(db.user)} PASSWORD ${lit(scramVerifier(password))}`);
  }

  async setConnectionLimit(db: DatabaseRef, limit: number) {
    await this.q(`ALTER DATABASE ${quoteIdent(db.name)} CONNECTION LIMIT ${Math.trunc(limit)}`);
    await this.q(`ALTER ROLE ${quoteIdent(db.user)} CONNECTION LIMIT ${Math.trunc(limit)}`);
  }

  /**
   * PostgreSQL: new sessions start read-only (`default_transaction_read_only`). The role owns its
   * database, so a session may switch it off for itself (to delete rows, for instance): on
   * PostgreSQL the block is a strong signal that the review re-applies, not a wall.
   */
  async setWritesBlocked(db: DatabaseRef, blocked: boolean) {
    const name = quoteIdent(db.name);
    await this.q(
      blocked
        ? `ALTER DATABASE ${name} SET default_transaction_read_only = on`
        : `ALTER DATABASE ${name} RESET default_transaction_read_only`,
    );
    if (blocked) await this.terminateSessions(db);
  }

  async createStaging(db: DatabaseRef): Promise<DatabaseRef> {
    const staging = { ...db, name: stagingName(db.name) };
    const name = quoteIdent(staging.name);
    await this.q(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await this.q(
      `CREATE DATABASE ${name} OWNER ${quoteIdent(db.user)} CONNECTION LIMIT ${db.connectionLimit}`,
    );
    await this.q(`REVOKE ALL ON DATABASE ${name} FROM PUBLIC`);
    return staging;
  }

  /** Two renames and a drop: clients are away from the database only between the renames. */
  async swapIn(db: DatabaseRef, staging: DatabaseRef) {
    const old = quoteIdent(`${stagingName(db.name)}_old`);
    await this.q(`DROP DATABASE IF EXISTS ${old} WITH (FORCE)`);
    await this.terminateSessions(db);
    await this.q(`ALTER DATABASE ${quoteIdent(db.name)} RENAME TO ${old}`);
    await this.q(`ALTER DATABASE ${quoteIdent(staging.name)} RENAME TO ${quoteIdent(db.name)}`);
    await this.q(`DROP DATABASE ${old} WITH (FORCE)`);
    return true;
  }

  async dropStaging(staging: DatabaseRef) {
    await this.q(`DROP DATABASE IF EXISTS ${quoteIdent(staging.name)} WITH (FORCE)`);
  }

  async recreateEmpty(db: DatabaseRef) {
    const name = quoteIdent(db.name);
    await this.q(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await this.q(
      `CREATE DATABASE ${name} OWNER ${quoteIdent(db.user)} CONNECTION LIMIT ${db.connectionLimit}`,
    );
    await this.q(`REVOKE ALL ON DATABASE ${name} FROM PUBLIC`);
  }

  async terminateSessions(db: DatabaseRef) {
    const rows = await this.q<{ ok: boolean }>(
      'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [db.name],
    );
    return rows.filter((r) => r.ok).length;
  }

  async info(db: DatabaseRef): Promise<ServerDatabaseInfo> {
    const [row] = await this.q<{ size: string; connlimit: number; owner: string; connections: string }>(
      `SELECT pg_database_size(d.oid)::text AS size, d.datconnlimit AS connlimit, pg_get_userbyid(d.datdba) AS owner,
              (SELECT count(*) FROM pg_stat_activity a WHERE a.datname = d.datname)::text AS connections
         FROM pg_database d WHERE d.datname = $1`,
      [db.name],
    );
    if (!row)
      return { status: 'missing', sizeBytes: null, connections: null, connectionLimit: null, owner: null };
    return {
      status: 'running',
      sizeBytes: Number(row.size),
      connections: Number(row.connections),
      connectionLimit: row.connlimit < 0 ? null : row.connlimit,
      owner: row.owner,
    };
  }

  async metrics(db: DatabaseRef): Promise<ServerDatabaseMetrics> {
    const [row] = await this.q<Record<string, string | null>>(
      `SELECT numbackends::text AS connections, pg_database_size(datname)::text AS size,
              xact_commit::text AS commits, xact_rollback::text AS rollbacks,
              blks_hit::text AS hits, blks_read::text AS reads,
              tup_returned::text AS rows_read, (tup_inserted + tup_updated + tup_deleted)::text AS rows_written
         FROM pg_stat_database WHERE datname = $1`,
      [db.name],
    );
    if (!row) throw new Error(`database ${db.name} is not on the server`);
    const hits = Number(row['hits']);
    const reads = Number(row['reads']);
    return {
      connections: Number(row['connections']),
      sizeBytes: Number(row['size']),
      commits: Number(row['commits']),
      rollbacks: Number(row['rollbacks']),
      cacheHitRatio: hits + reads > 0 ? hits / (hits + reads) : null,
      cacheHitScope: 'database',
      rowsRead: Number(row['rows_read']),
      rowsWritten: Number(row['rows_written']),
    };
  }

  async dropAllCustomerDatabases() {
    const dbs = await this.q<{ n: string }>(
      `SELECT datname AS n FROM pg_database WHERE datname LIKE 'cust\\_%'`,
    );
    for (const d of dbs) await this.q(`DROP DATABASE IF EXISTS ${quoteIdent(d.n)} WITH (FORCE)`);
    const roles = await this.q<{ n: string }>(
      `SELECT rolname AS n FROM pg_roles WHERE rolname LIKE 'cust\\_%' OR rolname LIKE 'fjord\\_restore\\_%'`,
    );
    for (const r of roles) await this.q(`DROP ROLE IF EXISTS ${quoteIdent(r.n)}`);
    return dbs.length;
  }

  async syncFirewall(all: () => Promise<Map<string, string[]>>) {
    if (!this.hbaFile) return;
    await writeFile(this.hbaFile, renderHba(this.target.user, await all()));
    await this.q('SELECT pg_reload_conf()');
  }

  async applyFirewall(db: DatabaseRef, cidrs: string[], all: () => Promise<Map<string, string[]>>) {
    if (!this.hbaFile) throw new FirewallUnmanaged('no managed pg_hba.conf for this PostgreSQL server');
    const rules = await all();
    rules.set(db.name, cidrs);
    await writeFile(this.hbaFile, renderHba(this.target.user, rules));
    await this.q('SELECT pg_reload_conf()');
    // The postmaster rereads pg_hba.conf on SIGHUP; give it a moment before answering "applied".
    await new Promise((r) => setTimeout(r, 150));
    if (cidrs.length > 0) {
      // Sessions from addresses the rules no longer admit end now, not at their next login.
      await this.q(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = $1 AND client_addr IS NOT NULL AND NOT (client_addr <<= ANY($2::inet[]))`,
        [db.name, cidrs],
      );
    }
  }

  private libpqEnv(database: string, as?: { user: string; password: string }) {
    const t = this.target;
    const password = as ? as.password : t.password;
    return {
      ...process.env,
      PGHOST: t.socket ?? t.host,
      PGPORT: String(t.port),
      PGUSER: as ? as.user : t.user,
      PGDATABASE: database,
      ...(password ? { PGPASSWORD: password } : {}),
    };
  }

  async dump(db: DatabaseRef, out: Writable) {
    const child = spawn('pg_dump', ['--no-owner', '--no-privileges', '--format=plain', quoteIdent(db.name)], {
      env: this.libpqEnv(db.name),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await runTool(child, 'pg_dump', (stdout) => pipeline(stdout, out));
  }

  /**
   * Replays a dump as the customer, never as the superuser: the dump's own code runs during
   * the load (CHECK constraints, defaults, triggers calling functions), and a function can
   * `RESET ROLE`, which under the admin's session would hand it superuser rights. psql logs
   * in as a throwaway role that can only become the database's role (and is a member of
   * `fjord_restore`, which the managed pg_hba.conf admits over the local socket); it is
   * dropped afterwards, with anything it came to own handed to the database's role.
   */
  async restore(db: DatabaseRef, input: Readable) {
    const helper = { user: `fjord_restore_${randomString(12).toLowerCase()}`, password: randomString(32) };
    await this.q(`CREATE ROLE ${RESTORE_GROUP} NOLOGIN`).catch((err) => {
      if ((err as { code?: string }).code !== '42710') throw err; // duplicate_object: already there
    });
    await this.q(
      `CREATE ROLE ${quoteIdent(helper.user)} LOGIN PASSWORD ${lit(scramVerifier(helper.password, 1024))} IN ROLE ${RESTORE_GROUP}, ${quoteIdent(db.user)}`,
    );
    try {
      const child = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', quoteIdent(db.name)], {
        env: this.libpqEnv(db.name, helper),
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      // Everything restored belongs to the database's own role, as if the customer had run it.
      const prelude = Readable.from([`SET ROLE ${quoteIdent(db.user)};\n`]);
      await runTool(child, 'psql', async () => {
        if (!child.stdin) return;
        await pipeline(prelude, child.stdin, { end: false });
        await pipeline(input, child.stdin);
      });
    } finally {
      await this.dropHelper(db, helper.user);
    }
  }

  private async dropHelper(db: DatabaseRef, helper: string) {
    const sql = `REASSIGN OWNED BY ${quoteIdent(helper)} TO ${quoteIdent(db.user)}; DROP OWNED BY ${quoteIdent(helper)};`;
    const child = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', quoteIdent(db.name), '-c', sql], {
      env: this.libpqEnv(db.name),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await runTool(child, 'psql', async () => {}).catch(() => {});
    await this.q(`DROP ROLE IF EXISTS ${quoteIdent(helper)}`);
  }

  async close() {
    await this.pool.end().catch(() => {});
  }
}

/**
 * The whole pg_hba.conf Fjord manages: the admin over the local socket; each firewalled
 * database's addresses, then a reject for everyone else; and every role only into the
 * database of its own name (`sameuser`) with a SCRAM password.
 */
export function renderHba(adminUser: string, rules: Map<string, string[]>): string {
  const lines = [
    '# Managed by Fjord: rewritten whenever a database firewall rule changes. Do not edit.',
    `local all ${adminUser} trust`,
    // Restores log in over the socket as a throwaway member of this group (see restore()).
    `local all +${RESTORE_GROUP} scram-sha-256`,
  ];
  for (const [name, cidrs] of [...rules.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    if (cidrs.length === 0) continue;
    for (const cidr of cidrs) lines.push(`host ${name} ${name} ${cidr} scram-sha-256`);
    lines.push(`host ${name} all 0.0.0.0/0 reject`, `host ${name} all ::/0 reject`);
  }
  lines.push('host sameuser all 0.0.0.0/0 scram-sha-256', 'host sameuser all ::/0 scram-sha-256', '');
  return lines.join('\n');
}

async function runTool(
  child: ReturnType<typeof spawn>,
  name: string,
  io: (stdout: NodeJS.ReadableStream) => Promise<unknown>,
): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code ?? -1));
  });
  try {
    await io(child.stdout as NodeJS.ReadableStream);
  } catch (err) {
    child.kill('SIGKILL');
    await exited.catch(() => {});
    throw new Error(`${name} failed: ${stderr.trim() || (err as Error).message}`);
  }
  const code = await exited;
  if (code !== 0) throw new Error(`${name} exited ${code}: ${stderr.trim()}`);
}

export { runTool };

/** The staging database of a restore into `name` (names stay within PostgreSQL's 63 bytes). */
const stagingName = (name: string) => `${name.slice(0, 50)}_restore`;
