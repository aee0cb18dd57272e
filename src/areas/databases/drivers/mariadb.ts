import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Pool } from 'mariadb';
import { lazyPackage } from '../../../kernel/lazy.js';

/** Loaded with the first MariaDB server, not at start. */
const mariadb = lazyPackage<typeof import('mariadb')>('mariadb');

import { type AdminTarget, parseAdminUrl } from './admin-url.js';
import {
  cidrMask,
  type DatabaseRef,
  type EngineDriver,
  quoteIdent,
  type ServerDatabaseInfo,
  type ServerDatabaseMetrics,
} from './driver.js';
import { runTool } from './postgres.js';

/** `a.b.c.d/n` → the host part of a MariaDB account (`a.b.c.d` or `a.b.c.d/mask`). */
export function hostPattern(cidr: string): string {
  const [ip, bits] = cidr.split('/');
  return bits === '32' ? ip! : `${ip}/${cidrMask(Number(bits))}`;
}

/**
 * MariaDB over an admin connection. Each database has one user name with one account per
 * allowed source: `'user'@'%'` when the database has no firewall rules, else one
 * `'user'@'<address or net/mask>'` per rule, all with the same password hash and grants
 * only on that database. The server itself refuses other sources.
 */
export class MariadbDriver implements EngineDriver {
  readonly dbType = 'mariadb' as const;
  readonly simulated = false;
  private readonly pool: Pool;
  private readonly target: AdminTarget;

  constructor(
    adminUrl: string,
    readonly kind: 'embedded' | 'external',
  ) {
    this.target = parseAdminUrl(adminUrl, 3306);
    const t = this.target;
    this.pool = mariadb().createPool({
      ...(t.socket ? { socketPath: t.socket } : { host: t.host, port: t.port }),
      user: t.user,
      password: t.password ?? undefined,
      connectionLimit: 4,
      connectTimeout: 5000,
      acquireTimeout: 8000,
      // Never echo statement parameters (passwords) into error messages or logs.
      logParam: false,
      bigIntAsNumber: true,
      decimalAsNumber: true,
    });
  }

  async endpoint() {
    return { host: this.target.host, port: this.target.port };
  }

  private async q<T = Record<string, unknown>>(sql: string, values: unknown[] = []): Promise<T[]> {
    const rows = await this.pool.query(sql, values);
    return Array.isArray(rows) ? (rows as T[]) : [];
  }

  async version() {
    const [row] = await this.q<{ v: string }>('SELECT VERSION() AS v');
    return (row?.v ?? '').split('-')[0] ?? '';
  }

  private async hosts(user: string): Promise<string[]> {
    return (await this.q<{ Host: string }>('SELECT Host FROM mysql.user WHERE User = ?', [user])).map(
      (r) => r.Host,
    );
  }

  async create(db: DatabaseRef, password: string) {
    const name = quoteIdent(db.name);
    await this.q(`CREATE DATABASE \`${name}\``);
    try {
      await this.q(`CREATE USER ?@'%' IDENTIFIED BY ? WITH MAX_USER_CONNECTIONS ${db.connectionLimit}`, [
        db.user,
        password,
      ]);
      await this.q(`GRANT ALL PRIVILEGES ON \`${name}\`.* TO ?@'%'`, [db.user]);
    } catch (err) {
      await this.drop(db).catch(() => {});
      throw err;
    }
  }

  async exists(name: string) {
    return (
      (await this.q('SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name])).length > 0
    );
  }

  async drop(db: DatabaseRef) {
    await this.terminateSessions(db).catch(() => 0);
    await this.q(`DROP DATABASE IF EXISTS \`${quoteIdent(db.name)}\``);
    for (const host of await this.hosts(db.user)) await this.q('DROP USER IF EXISTS ?@?', [db.user, host]);
  }

  async setPassword(db: DatabaseRef, password: string) {
    // Every account of the user (one per firewall rule) in one statement: none keeps the old one.
    const hosts = await this.hosts(db.user);
    if (hosts.length > 0)
      await this.q(
        `ALTER USER ${hosts.map(() => '?@? IDENTIFIED BY ?').join(', ')}`,
        hosts.flatMap((host) => [db.user, host, password]),
      );
  }

  /**
   * MariaDB limits connections per account (user@host), and a database has one account per
   * firewall rule: the limit is split across them so that together they admit exactly `limit`
   * (with at least one each: MAX_USER_CONNECTIONS 0 would mean no limit at all).
   */
  async setConnectionLimit(db: DatabaseRef, limit: number) {
    const hosts = await this.hosts(db.user);
    const shares = splitLimit(Math.trunc(limit), hosts.length);
    for (const [i, host] of hosts.entries())
      await this.q(`ALTER USER ?@? WITH MAX_USER_CONNECTIONS ${shares[i]}`, [db.user, host]);
  }

  /**
   * MariaDB: the user keeps SELECT, DELETE, DROP and the like on its database and loses what
   * adds data (INSERT, UPDATE, CREATE …) on every account. A database-level privilege applies to
   * a session from its next `USE`, so open sessions are ended.
   */
  async setWritesBlocked(db: DatabaseRef, blocked: boolean) {
    const on = `\`${quoteIdent(db.name)}\`.*`;
    for (const host of await this.hosts(db.user)) {
      if (blocked) await this.q(`REVOKE ${GROWING_PRIVILEGES} ON ${on} FROM ?@?`, [db.user, host]);
      else await this.q(`GRANT ALL PRIVILEGES ON ${on} TO ?@?`, [db.user, host]);
    }
    if (blocked) await this.terminateSessions(db);
  }

  async terminateSessions(db: DatabaseRef) {
    const rows = await this.q<{ ID: number }>(
      'SELECT ID FROM information_schema.PROCESSLIST WHERE (DB = ? OR USER = ?) AND ID <> CONNECTION_ID()',
      [db.name, db.user],
    );
    let n = 0;
    for (const r of rows) {
      try {
        await this.q(`KILL CONNECTION ${Number(r.ID)}`);
        n++;
      } catch {
        // already gone
      }
    }
    return n;
  }

  async info(db: DatabaseRef): Promise<ServerDatabaseInfo> {
    if (!(await this.exists(db.name))) {
      return { status: 'missing', sizeBytes: null, connections: null, connectionLimit: null, owner: null };
    }
    const [size] = await this.q<{ b: number | null }>(
      'SELECT SUM(DATA_LENGTH + INDEX_LENGTH) AS b FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
      [db.name],
    );
    const [conns] = await this.q<{ n: number }>(
      'SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? OR USER = ?',
      [db.name, db.user],
    );
    const [limit] = await this.q<{ l: number }>(
      'SELECT SUM(max_user_connections) AS l FROM mysql.user WHERE User = ?',
      [db.user],
    );
    return {
      status: 'running',
      sizeBytes: Number(size?.b ?? 0),
      connections: Number(conns?.n ?? 0),
      connectionLimit: limit?.l ? Number(limit.l) : null,
      owner: db.user,
    };
  }

  async metrics(db: DatabaseRef): Promise<ServerDatabaseMetrics> {
    const info = await this.info(db);
    if (info.status !== 'running') throw new Error(`database ${db.name} is not on the server`);
    // USER_STATISTICS needs userstat=ON (the embedded server has it); one user per database
    // makes the user's counters the database's.
    const [stats] = await this.q<Record<string, number>>(
      'SELECT COMMIT_TRANSACTIONS AS commits, ROLLBACK_TRANSACTIONS AS rollbacks, ROWS_READ AS rows_read, ROWS_INSERTED + ROWS_UPDATED + ROWS_DELETED AS rows_written FROM information_schema.USER_STATISTICS WHERE USER = ?',
      [db.user],
    ).catch(() => [] as Record<string, number>[]);
    const status = await this.q<{ Variable_name: string; Value: string }>(
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_read_requests', 'Innodb_buffer_pool_reads')",
    );
    const v = Object.fromEntries(status.map((r) => [r.Variable_name, Number(r.Value)]));
    const requests = v['Innodb_buffer_pool_read_requests'] ?? 0;
    const misses = v['Innodb_buffer_pool_reads'] ?? 0;
    return {
      connections: info.connections ?? 0,
      sizeBytes: info.sizeBytes ?? 0,
      commits: stats ? Number(stats['commits']) : 0,
      rollbacks: stats ? Number(stats['rollbacks']) : 0,
      cacheHitRatio: requests > 0 ? Math.max(0, (requests - misses) / requests) : null,
      cacheHitScope: 'server',
      rowsRead: stats ? Number(stats['rows_read']) : 0,
      rowsWritten: stats ? Number(stats['rows_written']) : 0,
    };
  }

  async applyFirewall(db: DatabaseRef, cidrs: string[]) {
    const wanted = cidrs.length === 0 ? ['%'] : cidrs.map(hostPattern);
    const current = await this.hosts(db.user);
    const [auth] = await this.q<{ a: string }>(
      'SELECT authentication_string AS a FROM mysql.user WHERE User = ? LIMIT 1',
      [db.user],
    );
    if (!auth) throw new Error(`user ${db.user} is not on the server`);
    // New accounts copy the existing password hash: Fjord never stores the password itself.
    for (const host of wanted.filter((h) => !current.includes(h))) {
      await this.q(
        `CREATE USER ?@? IDENTIFIED BY PASSWORD ? WITH MAX_USER_CONNECTIONS ${db.connectionLimit}`,
        [db.user, host, auth.a],
      );
      await this.q(`GRANT ALL PRIVILEGES ON \`${quoteIdent(db.name)}\`.* TO ?@?`, [db.user, host]);
    }
    const removed = current.filter((h) => !wanted.includes(h));
    for (const host of removed) await this.q('DROP USER IF EXISTS ?@?', [db.user, host]);
    // The database's limit, shared again across the accounts it now has.
    await this.setConnectionLimit(db, db.connectionLimit);
    if (removed.length > 0) {
      // Sessions that came in through an account now gone end at once.
      const sessions = await this.q<{ ID: number; HOST: string }>(
        'SELECT ID, HOST FROM information_schema.PROCESSLIST WHERE USER = ?',
        [db.user],
      );
      for (const s of sessions) {
        const ip = s.HOST.replace(/:\d+$/, '');
        if (cidrs.length > 0 && !cidrs.some((c) => inCidr(ip, c))) {
          await this.q(`KILL CONNECTION ${Number(s.ID)}`).catch(() => {});
        }
      }
    }
  }

  private toolArgs(): { args: string[]; env: NodeJS.ProcessEnv } {
    const t = this.target;
    const args = ['--no-defaults', `--user=${t.user}`];
    if (t.socket) args.push(`--socket=${t.socket}`);
    else args.push(`--host=${t.host}`, `--port=${t.port}`, '--protocol=tcp');
    return { args, env: { ...process.env, ...(t.password ? { MYSQL_PWD: t.password } : {}) } };
  }

  async dump(db: DatabaseRef, out: Writable) {
    const { args, env } = this.toolArgs();
    const child = spawn(
      'mariadb-dump',
      [
        ...args,
        '--single-transaction',
        '--routines',
        '--triggers',
        '--skip-lock-tables',
        quoteIdent(db.name),
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    await runTool(child, 'mariadb-dump', (stdout) => pipeline(stdout, out));
  }

  async restore(db: DatabaseRef, input: Readable) {
    const { args, env } = this.toolArgs();
    const child = spawn('mariadb', [...args, quoteIdent(db.name)], {
      env,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    await runTool(child, 'mariadb', async () => {
      if (child.stdin) await pipeline(input, child.stdin);
    });
  }

  async createStaging(db: DatabaseRef): Promise<DatabaseRef> {
    const staging = { ...db, name: `${db.name.slice(0, 50)}_restore` };
    await this.q(`DROP DATABASE IF EXISTS \`${quoteIdent(staging.name)}\``);
    await this.q(`CREATE DATABASE \`${quoteIdent(staging.name)}\``);
    return staging;
  }

  /** MariaDB cannot rename a database (and views cannot move between databases): replay instead. */
  async swapIn() {
    return false;
  }

  async dropStaging(staging: DatabaseRef) {
    await this.q(`DROP DATABASE IF EXISTS \`${quoteIdent(staging.name)}\``);
  }

  async recreateEmpty(db: DatabaseRef) {
    await this.terminateSessions(db);
    await this.q(`DROP DATABASE IF EXISTS \`${quoteIdent(db.name)}\``);
    await this.q(`CREATE DATABASE \`${quoteIdent(db.name)}\``);
  }

  async dropAllCustomerDatabases() {
    const dbs = await this.q<{ n: string }>(
      `SELECT SCHEMA_NAME AS n FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'cust\\_%'`,
    );
    for (const d of dbs) await this.q(`DROP DATABASE IF EXISTS \`${quoteIdent(d.n)}\``);
    const users = await this.q<{ u: string; h: string }>(
      `SELECT User AS u, Host AS h FROM mysql.user WHERE User LIKE 'cust\\_%'`,
    );
    for (const x of users) await this.q('DROP USER IF EXISTS ?@?', [x.u, x.h]);
    return dbs.length;
  }

  async syncFirewall() {}

  async close() {
    await this.pool.end().catch(() => {});
  }
}

export function inCidr(ip: string, cidr: string): boolean {
  const [net, bitsText] = cidr.split('/');
  const toInt = (a: string) => a.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip)) return false;
  const bits = Number(bitsText);
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (toInt(ip) & mask) >>> 0 === (toInt(net!) & mask) >>> 0;
}

/** `limit` split into `n` shares that add up to it (each at least 1). */
export function splitLimit(limit: number, n: number): number[] {
  if (n <= 0) return [];
  const base = Math.floor(limit / n);
  return Array.from({ length: n }, (_, i) => Math.max(1, base + (i < limit % n ? 1 : 0)));
}

/** What a database over its size quota loses on MariaDB: every privilege that adds data or objects. */
const GROWING_PRIVILEGES =
  'INSERT, UPDATE, CREATE, ALTER, INDEX, CREATE VIEW, TRIGGER, CREATE ROUTINE, ALTER ROUTINE, CREATE TEMPORARY TABLES, EVENT';
