import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { claimOwnership, OwnedByAnother } from '../../../kernel/supervision/ownership.js';
import type { DbType, EngineDriver } from '../drivers/driver.js';
import { MariadbDriver } from '../drivers/mariadb.js';
import { PostgresDriver } from '../drivers/postgres.js';
import { SimulatedDriver } from '../drivers/simulated.js';
import { EmbeddedMariadb, hasMariadbBinaries } from './embedded-mariadb.js';
import { EmbeddedPostgres, findPostgresBinDir } from './embedded-postgres.js';

export type EngineMode = 'auto' | 'embedded' | 'external' | 'simulated';

export interface EnginesConfig {
  mode: EngineMode;
  postgresAdminUrl: string | null;
  mariadbAdminUrl: string | null;
  postgresHbaFile: string | null;
  /** Engines whose external server the operator declares encrypted at rest. */
  encryptedEngines: readonly string[];
  dataDir: string;
  host: string;
}

interface Plan {
  kind: 'embedded' | 'external' | 'simulated';
  detail: string;
}

/**
 * Which server each engine runs on, decided once from the configuration: an external server
 * (admin URL given), Fjord's own embedded server (binaries installed, nothing configured), or
 * the simulated driver. Embedded servers start on first use or when the api role starts, and
 * stop with Fjord.
 */
export class DatabaseEngines {
  private readonly drivers = new Map<DbType, Promise<EngineDriver>>();
  private startingAll: Promise<void> | null = null;
  private readonly embedded: { stop(): Promise<void> }[] = [];
  /** Releases of the engine directories this process owns. */
  private readonly releases: (() => void)[] = [];
  readonly plans: Record<DbType, Plan>;

  constructor(
    private readonly config: EnginesConfig,
    private readonly log: Logger,
  ) {
    this.plans = { postgresql: this.plan('postgresql'), mariadb: this.plan('mariadb') };
  }

  private plan(dbType: DbType): Plan {
    const { mode } = this.config;
    const url = dbType === 'postgresql' ? this.config.postgresAdminUrl : this.config.mariadbAdminUrl;
    const variable = dbType === 'postgresql' ? 'FJORD_POSTGRES_ADMIN_URL' : 'FJORD_MARIADB_ADMIN_URL';
    if (mode === 'simulated') return { kind: 'simulated', detail: 'FJORD_DATABASE_ENGINES=simulated' };
    if (url && mode !== 'embedded') return { kind: 'external', detail: `external server ${redact(url)}` };
    if (mode === 'external')
      return { kind: 'simulated', detail: `FJORD_DATABASE_ENGINES=external but ${variable} is unset` };
    const installed = dbType === 'postgresql' ? findPostgresBinDir() !== null : hasMariadbBinaries();
    if (!installed) {
      const pkg = dbType === 'postgresql' ? 'postgresql' : 'mariadb-server';
      return {
        kind: 'simulated',
        detail: `server binaries not installed (Debian package ${pkg}) and ${variable} unset`,
      };
    }
    return {
      kind: 'embedded',
      detail: `embedded server in ${join(this.config.dataDir, 'databases', dbType)}`,
    };
  }

  /**
   * Whether the engine's server keeps data encrypted at rest, which the `encrypted` tier needs:
   * the embedded MariaDB runs InnoDB encryption; an external server counts when the operator
   * declares it (FJORD_DATABASE_ENCRYPTED_ENGINES); the embedded PostgreSQL has no such feature.
   */
  encryptedAtRest(dbType: DbType): boolean {
    const kind = this.plans[dbType].kind;
    if (kind === 'embedded') return dbType === 'mariadb';
    return kind === 'external' && this.config.encryptedEngines.includes(dbType);
  }

  /** The driver if the engine was already asked for (never starts a server). */
  started(dbType: DbType): Promise<EngineDriver> | null {
    return this.drivers.get(dbType) ?? null;
  }

  /** The engine's driver; starts the embedded server on first call. */
  driver(dbType: DbType): Promise<EngineDriver> {
    let p = this.drivers.get(dbType);
    if (!p) {
      p = this.build(dbType);
      this.drivers.set(dbType, p);
      // A server that failed to start is tried again on the next request.
      p.catch(() => this.drivers.delete(dbType));
    }
    return p;
  }

  private async build(dbType: DbType): Promise<EngineDriver> {
    const plan = this.plans[dbType];
    const c = this.config;
    if (plan.kind === 'simulated') return new SimulatedDriver(dbType, plan.detail);
    if (plan.kind === 'external') {
      return dbType === 'postgresql'
        ? new PostgresDriver(c.postgresAdminUrl!, 'external', c.postgresHbaFile)
        : new MariadbDriver(c.mariadbAdminUrl!, 'external');
    }
    const dir = join(c.dataDir, 'databases', dbType);
    const log = (msg: string) => this.log.info({ engine: dbType }, msg);
    this.releases.push(ownEngineDir(dir, dbType));
    if (dbType === 'postgresql') {
      const server = new EmbeddedPostgres(findPostgresBinDir()!, { dir, host: c.host, log });
      const ep = await server.start();
      this.embedded.push(server);
      return new PostgresDriver(ep.adminUrl, 'embedded', ep.hbaFile);
    }
    const server = new EmbeddedMariadb({ dir, host: c.host, log });
    const ep = await server.start();
    this.embedded.push(server);
    return new MariadbDriver(ep.adminUrl, 'embedded');
  }

  /**
   * Whether an embedded server of this data dir may still be running (left by a Fjord that was
   * killed): it must then be replaced before the process reports up.
   */
  mayHaveOrphans(): boolean {
    const dir = (t: DbType) => join(this.config.dataDir, 'databases', t);
    return (
      (this.plans.postgresql.kind === 'embedded' && EmbeddedPostgres.mayBeRunning(dir('postgresql'))) ||
      (this.plans.mariadb.kind === 'embedded' && EmbeddedMariadb.mayBeRunning(dir('mariadb')))
    );
  }

  /**
   * Starts the embedded servers now (the api role does, so the first request does not wait).
   * Called twice (at the role's start and once the process is up), it starts them once.
   */
  startAll(): Promise<void> {
    this.startingAll ??= this.startEach();
    return this.startingAll;
  }

  private async startEach(): Promise<void> {
    await Promise.all(
      (['postgresql', 'mariadb'] as const).map((t) =>
        this.driver(t).catch((err) => this.log.error({ err, engine: t }, 'database engine failed to start')),
      ),
    );
  }

  async stop(): Promise<void> {
    this.startingAll = null;
    const drivers = [...this.drivers.values()];
    this.drivers.clear();
    for (const d of drivers) await (await d.catch(() => null))?.close();
    for (const s of this.embedded.splice(0)) await s.stop().catch(() => {});
    for (const release of this.releases.splice(0)) release();
  }
}

const redact = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

/**
 * One process runs the embedded engines of a data dir. A second Fjord on the same data dir would
 * otherwise take the first one's running server for an orphan and stop it.
 */
function ownEngineDir(dir: string, dbType: DbType): () => void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    return claimOwnership(join(dir, 'owner.pid'));
  } catch (err) {
    if (!(err instanceof OwnedByAnother)) throw err;
    throw new Error(
      `the embedded ${dbType} engine in ${dir} is run by Fjord process ${err.pid}: one process runs the embedded engines; start the others with FJORD_DATABASE_ENGINES=external and the admin URLs (docs/operations.md)`,
    );
  }
}
