import type { Readable, Writable } from 'node:stream';
import type {
  DatabaseRef,
  DbType,
  EngineDriver,
  ServerDatabaseInfo,
  ServerDatabaseMetrics,
} from './driver.js';

/**
 * Stands in when an engine's server is neither configured nor installed. It touches no server:
 * it keeps the databases it was asked for in memory, answers `running` for them, and says it is
 * simulated in the banner and `GET /v1/databases/engines`. Credentials it hands out open nothing.
 */
export class SimulatedDriver implements EngineDriver {
  readonly kind = 'simulated' as const;
  readonly simulated = true;
  private readonly databases = new Map<string, { limit: number; body: string }>();

  constructor(
    readonly dbType: DbType,
    private readonly reason: string,
  ) {}

  get why() {
    return this.reason;
  }

  async endpoint() {
    return { host: '127.0.0.1', port: this.dbType === 'postgresql' ? 5432 : 3306 };
  }
  async version() {
    return this.dbType === 'postgresql' ? '15' : '10.11';
  }
  async create(db: DatabaseRef) {
    this.databases.set(db.name, { limit: db.connectionLimit, body: '' });
  }
  async exists(name: string) {
    return this.databases.has(name);
  }
  async drop(db: DatabaseRef) {
    this.databases.delete(db.name);
  }
  async setPassword() {}
  async setWritesBlocked() {
    // Nothing grows in a simulated database.
  }
  async setConnectionLimit(db: DatabaseRef, limit: number) {
    const d = this.databases.get(db.name);
    if (d) d.limit = limit;
  }
  async terminateSessions() {
    return 0;
  }
  async createStaging(db: DatabaseRef): Promise<DatabaseRef> {
    const staging = { ...db, name: `${db.name}_restore` };
    this.databases.set(staging.name, { limit: db.connectionLimit, body: '' });
    return staging;
  }
  async swapIn(db: DatabaseRef, staging: DatabaseRef) {
    const restored = this.databases.get(staging.name);
    if (restored) this.databases.set(db.name, restored);
    this.databases.delete(staging.name);
    return true;
  }
  async dropStaging(staging: DatabaseRef) {
    this.databases.delete(staging.name);
  }
  async recreateEmpty(db: DatabaseRef) {
    const d = this.databases.get(db.name);
    if (d) d.body = '';
  }
  async info(db: DatabaseRef): Promise<ServerDatabaseInfo> {
    const d = this.databases.get(db.name);
    if (!d)
      return { status: 'missing', sizeBytes: null, connections: null, connectionLimit: null, owner: null };
    return {
      status: 'running',
      sizeBytes: d.body.length,
      connections: 0,
      connectionLimit: d.limit,
      owner: db.user,
    };
  }
  async metrics(db: DatabaseRef): Promise<ServerDatabaseMetrics> {
    const d = this.databases.get(db.name);
    return {
      connections: 0,
      sizeBytes: d?.body.length ?? 0,
      commits: 0,
      rollbacks: 0,
      cacheHitRatio: null,
      cacheHitScope: 'database',
      rowsRead: 0,
      rowsWritten: 0,
    };
  }
  async applyFirewall() {}
  async dump(db: DatabaseRef, out: Writable) {
    const body = `-- simulated ${this.dbType} dump of ${db.name}\n${this.databases.get(db.name)?.body ?? ''}`;
    await new Promise<void>((resolve, reject) => out.end(body, () => resolve()).once('error', reject));
  }
  async restore(db: DatabaseRef, input: Readable) {
    let text = '';
    for await (const chunk of input) text += String(chunk);
    const d = this.databases.get(db.name);
    if (d) d.body = text.split('\n').slice(1).join('\n');
  }
  async dropAllCustomerDatabases() {
    const n = this.databases.size;
    this.databases.clear();
    return n;
  }
  async syncFirewall() {}

  async close() {}
}
