import type { Readable, Writable } from 'node:stream';

export type DbType = 'postgresql' | 'mariadb';
export const DB_TYPES: readonly DbType[] = ['postgresql', 'mariadb'];

export interface ServerDatabaseInfo {
  /** As the server reports it (`running`), `missing` when the server answers without it. */
  status: string;
  sizeBytes: number | null;
  connections: number | null;
  connectionLimit: number | null;
  owner: string | null;
}

export interface ServerDatabaseMetrics {
  connections: number;
  sizeBytes: number;
  commits: number | null;
  rollbacks: number | null;
  /** Buffer cache hits / (hits + reads), 0..1; null before any read. */
  cacheHitRatio: number | null;
  /** Whether the ratio is this database's own (`database`) or the whole server's (`server`). */
  cacheHitScope: 'database' | 'server';
  rowsRead: number | null;
  rowsWritten: number | null;
}

/** One database's account on the server: the database name, its user, and its firewall. */
export interface DatabaseRef {
  name: string;
  user: string;
  connectionLimit: number;
}

/**
 * One engine behind an admin connection. Every method acts on the real server at once; an
 * error from the server surfaces as a thrown Error (the service maps it to `bad_gateway`).
 */
export interface EngineDriver {
  readonly dbType: DbType;
  /** `embedded`, `external` or `simulated`. */
  readonly kind: 'embedded' | 'external' | 'simulated';
  readonly simulated: boolean;
  /** Address customers connect to. */
  endpoint(): Promise<{ host: string; port: number }>;
  version(): Promise<string>;
  create(db: DatabaseRef, password: string): Promise<void>;
  exists(name: string): Promise<boolean>;
  drop(db: DatabaseRef): Promise<void>;
  setPassword(db: DatabaseRef, password: string): Promise<void>;
  setConnectionLimit(db: DatabaseRef, limit: number): Promise<void>;
  /**
   * Stops (or allows again) writes that make the database grow, for a database over its plan's
   * size. Reads, deletes and drops keep working, so its owner can get back under the quota.
   * Sessions open at the time are ended, so every new one has the new rule.
   */
  setWritesBlocked(db: DatabaseRef, blocked: boolean): Promise<void>;
  /** Ends every session connected to this database (and only those); returns how many. */
  terminateSessions(db: DatabaseRef): Promise<number>;
  info(db: DatabaseRef): Promise<ServerDatabaseInfo>;
  metrics(db: DatabaseRef): Promise<ServerDatabaseMetrics>;
  /**
   * Makes the server admit this database's user only from these IPv4 CIDR blocks (empty: from
   * anywhere). Throws `FirewallUnmanaged` when this server's access rules are not Fjord's to write.
   */
  applyFirewall(db: DatabaseRef, cidrs: string[], all: () => Promise<Map<string, string[]>>): Promise<void>;
  /**
   * Brings the server's access rules in line with the store once, when Fjord first uses it (the
   * managed pg_hba.conf; nothing for MariaDB, whose rules live in its own user table).
   */
  syncFirewall(all: () => Promise<Map<string, string[]>>): Promise<void>;
  /** Drops every customer database and user (`cust_…`) on the server: an emulator reset of a server Fjord owns. */
  dropAllCustomerDatabases(): Promise<number>;
  /** Streams a logical dump of the database (plain SQL) into `out`. */
  dump(db: DatabaseRef, out: Writable): Promise<void>;
  /** Drops and recreates the database empty, same owner, grants and limit (before a restore). */
  recreateEmpty(db: DatabaseRef): Promise<void>;
  /** Replaces the database's contents with a dump read from `input`. */
  restore(db: DatabaseRef, input: Readable): Promise<void>;
  /**
   * A new, empty database beside `db` (same owner and limit) to restore into first, so that a
   * replay failing halfway never touches `db` itself.
   */
  createStaging(db: DatabaseRef): Promise<DatabaseRef>;
  /**
   * Puts a fully restored staging database in `db`'s place and drops the old contents. False
   * when the engine cannot (MariaDB has no database rename): the caller then drops the staging
   * copy and replays the same dump, which has just gone through, into `db`.
   */
  swapIn(db: DatabaseRef, staging: DatabaseRef): Promise<boolean>;
  dropStaging(staging: DatabaseRef): Promise<void>;
  close(): Promise<void>;
}

export class FirewallUnmanaged extends Error {}

export const quoteIdent = (name: string): string => {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unsafe identifier ${name}`);
  return name;
};

/** `a.b.c.d` or `a.b.c.d/n` → `a.b.c.d/n` with the host bits cleared. */
export function normaliseCidr(input: string): string | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(input.trim());
  if (!m) return null;
  const octets = m.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255) || m.slice(1, 5).some((o) => o.length > 1 && o.startsWith('0')))
    return null;
  const bits = m[5] === undefined ? 32 : Number(m[5]);
  if (bits > 32) return null;
  const value = octets.reduce((acc, o) => acc * 256 + o, 0);
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  const net = (value & mask) >>> 0;
  const dotted = [24, 16, 8, 0].map((s) => (net >>> s) & 255).join('.');
  return `${dotted}/${bits}`;
}

export function cidrMask(bits: number): string {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return [24, 16, 8, 0].map((s) => (mask >>> s) & 255).join('.');
}
