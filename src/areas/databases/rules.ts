import { AppError, kernelErrors } from '../../kernel/errors.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { DbType } from './drivers/driver.js';

/** Engine marker in technical names: `cust_<short id>_<marker>_<name>`. */
export const ENGINE_MARKER: Record<DbType, string> = { postgresql: 'pg', mariadb: 'mdb' };

export const technicalName = (shortId: string, dbType: DbType, name: string) =>
  `cust_${shortId}_${ENGINE_MARKER[dbType]}_${name}`;

/** Form B's suffix when `requested_name` is left out: one default database per customer and engine. */
export const DEFAULT_REQUESTED_NAME = 'main';

/** Bounds of `connection_limit` a customer may set (validation, not a quota). */
export const LIMITS = {
  connectionLimitMin: 10,
  connectionLimitMax: 1000,
};

export interface PlanQuota {
  databases: number;
  sizeMb: number;
  snapshotsPerDatabase: number;
  firewallRules: number;
  connectionsPerDatabase: number;
}

/**
 * The databases rows of the limits table (`databases.*`, docs/limits.md) for a plan. "Unlimited"
 * (an operator's override) is the largest safe integer here: every count is below it.
 */
export class DatabaseQuotas {
  constructor(private readonly limits: Limits) {}

  of(plan: string): PlanQuota {
    const v = (name: Parameters<Limits['of']>[0]) => this.limits.of(name, plan) ?? Number.MAX_SAFE_INTEGER;
    return {
      databases: v('databases.count'),
      sizeMb: v('databases.size_mb'),
      snapshotsPerDatabase: v('databases.snapshots_per_database'),
      firewallRules: v('databases.firewall_rules'),
      connectionsPerDatabase: v('databases.connections'),
    };
  }
}

export const TIERS = [
  {
    tier: 'standard',
    name: 'Standard',
    description: 'A database with its own user on a shared server; snapshots are compressed.',
    is_encrypted: false,
  },
  {
    tier: 'encrypted',
    name: 'Encrypted',
    description:
      'Runs only on a server whose storage is encrypted at rest (the embedded MariaDB: InnoDB data-at-rest encryption); its snapshots are also encrypted with AES-256-GCM under a per-snapshot key sealed by the data key.',
    is_encrypted: true,
  },
] as const;

export const dbErrors = {
  notFound: () => kernelErrors.notFound('Database'),
  ruleNotFound: () => kernelErrors.notFound('Firewall rule'),
  snapshotNotFound: () => kernelErrors.notFound('Snapshot'),
  exists: (name: string) =>
    new AppError('conflict', 'database_exists', `A database named ${name} already exists for this engine.`),
  quota: (used: number, limit: number, plan: string) =>
    new AppError(
      'forbidden',
      'database_quota_exceeded',
      `The account has ${used} of its ${limit} databases (plan ${plan}). Delete one or change plan.`,
    ),
  bothNames: () =>
    kernelErrors.invalid('Give either db_name (form A) or requested_name (form B), not both.', [
      { path: '/body/requested_name', message: 'not allowed together with db_name' },
    ]),
  badName: (field: string, rule: string) =>
    kernelErrors.invalid(`${field} must be ${rule}.`, [{ path: `/body/${field}`, message: rule }]),
  tierUnavailable: (dbType: DbType) =>
    new AppError(
      'conflict',
      'tier_unavailable',
      `The encrypted tier needs a ${dbType} server with encrypted storage, and this deployment's ${dbType} server has none (docs/databases.md).`,
    ),
  usernameMismatch: () =>
    new AppError('bad_request', 'username_mismatch', 'username is not the user of this database.'),
  badIp: (value: string) =>
    kernelErrors.invalid(`ip_address ${JSON.stringify(value)} is not an IPv4 address or IPv4 CIDR block.`, [
      { path: '/body/ip_address', message: 'expected IPv4 address or CIDR' },
    ]),
  ruleExists: (ip: string) =>
    new AppError(
      'conflict',
      'firewall_rule_exists',
      `A firewall rule for ${ip} already exists on this database.`,
    ),
  tooManyRules: (max: number) =>
    new AppError(
      'conflict',
      'firewall_rule_limit',
      `A database has at most ${max} firewall rules; delete one first.`,
    ),
  firewallUnmanaged: (why: string) =>
    new AppError(
      'conflict',
      'firewall_unmanaged',
      `Firewall rules cannot be enforced on this server (${why}); the operator must set FJORD_POSTGRES_HBA_FILE.`,
    ),
  engineFailed: (err: unknown) =>
    new AppError(
      'bad_gateway',
      'database_server_error',
      `The database server refused: ${serverMessage(err)}`,
      {
        cause: err,
      },
    ),
  engineUnavailable: (err: unknown) =>
    new AppError(
      'unavailable',
      'database_server_unavailable',
      `The database server is not reachable: ${(err as Error).message}`,
      {
        cause: err,
      },
    ),
  snapshotLimit: (limit: number, plan: string) =>
    new AppError(
      'conflict',
      'snapshot_quota_exceeded',
      `This database already has ${limit} snapshots, the most plan ${plan} allows; delete one first.`,
    ),
  snapshotUnreadable: (err: unknown) =>
    new AppError(
      'conflict',
      'snapshot_unreadable',
      `The snapshot cannot be read back (${(err as Error).message}); the database was left as it was.`,
    ),
  snapshotStoreFailed: (err: unknown) =>
    new AppError(
      'unavailable',
      'snapshot_storage_unavailable',
      'Object storage did not take the snapshot, so none was kept; try again later.',
      { cause: err },
    ),
  snapshotNotReady: () =>
    new AppError('conflict', 'snapshot_not_available', 'The snapshot is not available.'),
  retentionTooHigh: (limit: number) =>
    kernelErrors.invalid(`retention_count can be at most ${limit} on this plan.`, [
      { path: '/body/retention_count', message: `at most ${limit}` },
    ]),
};

/** Megabytes with two decimals, as size_mb is shown. */
export const toMb = (bytes: number | null): number | null =>
  bytes === null ? null : Math.round((bytes / 1048576) * 100) / 100;

/** The server's own words (MariaDB's `text` has no SQL in it), never the statement that failed. */
function serverMessage(err: unknown): string {
  const e = err as { text?: string; message?: string };
  return (e.text ?? e.message ?? String(err)).split('\n')[0]!.replace(/^\(conn:[^)]*\)\s*/, '');
}
