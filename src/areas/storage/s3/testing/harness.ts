import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino, { type Logger } from 'pino';
import { loadConfig } from '../../../../config/config.js';
import { AdjustableClock } from '../../../../kernel/clock.js';
import type { Kernel } from '../../../../kernel/kernel.js';
import { Limits } from '../../../../kernel/limits/quotas.js';
import { ProtocolMetrics } from '../../../../kernel/observe/protocol-metrics.js';
import { Registry } from '../../../../kernel/registry.js';
import { SecretBox } from '../../../../kernel/secrets.js';
import { openStore, type Store } from '../../../../kernel/store/store.js';
import type {
  AccessKeyRecord,
  BucketAccessChange,
  BucketDirectory,
  BucketRecord,
  CorsRule,
  LifecycleRule,
  ObjectLockDefault,
} from '../../data-plane-contract.js';
import { type BuiltDataPlane, createDataPlane, objectMigrations } from '../index.js';

/**
 * A data plane on its own store with an in-memory directory: for the data plane's unit tests,
 * which must not depend on the control plane's tables. `test/e2e/s3-*.test.ts` use the whole Fjord.
 */
export class MemoryDirectory implements BucketDirectory {
  readonly keys = new Map<string, AccessKeyRecord>();
  readonly buckets = new Map<string, BucketRecord>();
  private readonly bucketListeners: ((name: string) => void)[] = [];
  private readonly keyListeners: ((id: string) => void)[] = [];

  async findAccessKey(id: string) {
    return this.keys.get(id) ?? null;
  }
  async findBucket(name: string) {
    return this.buckets.get(name) ?? null;
  }
  async listBuckets(customerId: string) {
    return [...this.buckets.values()].filter((b) => b.customerId === customerId);
  }
  async createBucketViaS3(
    customerId: string,
    name: string,
    region: string,
    _key?: string,
    objectLockEnabled = false,
  ) {
    return this.addBucket({
      name,
      customerId,
      region,
      objectLockEnabled,
      versioning: objectLockEnabled ? 'Enabled' : 'Unversioned',
    });
  }
  async putDefaultEncryption(
    name: string,
    algorithm: 'AES256' | 'aws:kms' | null,
    kmsKeyId: string | null = null,
  ) {
    this.update(name, { defaultEncryption: algorithm, defaultKmsKeyId: kmsKeyId });
  }
  async putBucketAccess(name: string, change: BucketAccessChange) {
    this.update(name, Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)));
  }
  async putObjectLockDefault(name: string, rule: ObjectLockDefault | null, enable = false) {
    this.update(name, { objectLockDefault: rule, ...(enable ? { objectLockEnabled: true } : {}) });
  }
  async deleteBucketViaS3(_customerId: string, name: string) {
    this.buckets.delete(name);
    this.bucketChanged(name);
  }
  async putCors(name: string, rules: CorsRule[]) {
    this.update(name, { cors: rules });
  }
  async deleteCors(name: string) {
    this.update(name, { cors: null });
  }
  async putVersioning(name: string, state: 'Enabled' | 'Suspended') {
    this.update(name, { versioning: state });
  }
  async putLifecycle(name: string, rules: LifecycleRule[] | null) {
    this.update(name, { lifecycle: rules });
  }
  async putBucketTags(name: string, tags: Record<string, string> | null) {
    this.update(name, { tags });
  }
  onBucketChanged(l: (name: string) => void) {
    this.bucketListeners.push(l);
  }
  onAccessKeyChanged(l: (id: string) => void) {
    this.keyListeners.push(l);
  }

  addBucket(b: Partial<BucketRecord> & { name: string; customerId: string }): BucketRecord {
    const record: BucketRecord = {
      id: `b-${b.name}`,
      region: 'no',
      tier: 'standard',
      isPublic: false,
      versioning: 'Unversioned',
      objectLockEnabled: false,
      objectLockDefault: null,
      defaultEncryption: null,
      cors: null,
      lifecycle: null,
      acl: [],
      objectOwnership: 'BucketOwnerEnforced',
      publicAccessBlock: null,
      policy: null,
      createdAt: Date.now(),
      ...b,
    };
    this.buckets.set(record.name, record);
    this.bucketChanged(record.name);
    return record;
  }

  addKey(k: Partial<AccessKeyRecord> & { accessKeyId: string; customerId: string }): AccessKeyRecord {
    const record: AccessKeyRecord = {
      secretKey: `secret-${k.accessKeyId}`,
      customerDisplayName: `Customer ${k.customerId}`,
      kind: 'bucket',
      grants: [],
      mayCreateBuckets: false,
      ...k,
    };
    this.keys.set(record.accessKeyId, record);
    for (const l of this.keyListeners) l(record.accessKeyId);
    return record;
  }

  revokeKey(id: string) {
    this.keys.delete(id);
    for (const l of this.keyListeners) l(id);
  }

  update(name: string, patch: Partial<BucketRecord>) {
    const b = this.buckets.get(name);
    if (!b) throw new Error(`no bucket ${name}`);
    this.buckets.set(name, { ...b, ...patch });
    this.bucketChanged(name);
  }

  private bucketChanged(name: string) {
    for (const l of this.bucketListeners) l(name);
  }
}

export interface Harness {
  plane: BuiltDataPlane;
  directory: MemoryDirectory;
  clock: AdjustableClock;
  store: Store;
  endpoint: string;
  dataDir: string;
  close(): Promise<void>;
}

/** `log`: where the data plane's log lines go (silent unless FJORD_TEST_LOG is set). */
export async function startHarness(
  env: Record<string, string> = {},
  options: { log?: Logger } = {},
): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fjord-s3-'));
  const pgUrl =
    process.env['FJORD_TEST_STORE'] === 'postgres' ? process.env['FJORD_TEST_DATABASE_URL'] : undefined;
  let dropDb = async () => {};
  let databaseUrl: string | undefined;
  if (pgUrl) {
    const { default: pg } = await import('pg');
    const name = `fjord_s3_${Math.random().toString(36).slice(2, 12)}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(pgUrl);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    dropDb = async () => {
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
  }
  const config = loadConfig({
    FJORD_DATA_DIR: dataDir,
    FJORD_S3_PORT: '0',
    ...(databaseUrl ? { FJORD_DATABASE_URL: databaseUrl } : {}),
    ...env,
  });
  const store = await openStore(config);
  await store.migrate(objectMigrations);
  // The control plane's bucket table, reduced to the columns the data plane's writes lock and
  // read (buckets of the in-memory directory have no row: writes to them are never refused).
  await sql`CREATE TABLE storage_buckets (id text PRIMARY KEY, updated_at bigint, deleted_at bigint, versioning text)`.execute(
    store.db,
  );
  const clock = new AdjustableClock();
  const log = options.log ?? pino({ level: process.env['FJORD_TEST_LOG'] ? 'debug' : 'silent' });
  const kernel = {
    config,
    clock,
    store,
    log,
    registry: new Registry(),
    limits: new Limits(config.limitOverrides),
    metrics: new ProtocolMetrics(),
    secrets: new SecretBox(randomBytes(32)),
    // The in-memory directory's customers have no account: the free plan's quotas apply.
    identity: { getCustomer: async () => undefined },
  } as unknown as Kernel;
  const directory = new MemoryDirectory();
  const plane = createDataPlane(kernel, directory);
  for (const s of plane.servers) await s.start();
  return {
    plane,
    directory,
    clock,
    store,
    dataDir,
    endpoint: `http://127.0.0.1:${plane.boundPort()}`,
    async close() {
      for (const s of plane.servers) await s.stop();
      await store.close();
      await dropDb();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
