import type { AnyDb, UnitDb } from '../../kernel/store/unit-of-work.js';
import type { StorageBucketsTable, StorageKeysTable, StorageTables } from './migrations.js';

/** Every query of the storage control plane. Live buckets are those with `deleted_at` null. */
export class StorageRepo {
  constructor(readonly db: UnitDb<StorageTables>) {}

  /** Bound to a unit's transaction (units are opened by the services, through `unitsOf`). */
  static over(db: AnyDb): StorageRepo {
    return new StorageRepo(db);
  }

  async countBuckets(customerId: string): Promise<number> {
    const row = await this.db
      .selectFrom('storage_buckets')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('customer_id', '=', customerId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  // Buckets

  insertBucket(row: StorageBucketsTable) {
    return this.db.insertInto('storage_buckets').values(row).execute();
  }

  listBuckets(customerId: string) {
    return this.db
      .selectFrom('storage_buckets')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** A live bucket by name, of any customer (the data plane's view). */
  bucketByName(name: string) {
    return this.db
      .selectFrom('storage_buckets')
      .selectAll()
      .where('name', '=', name)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  /** A live bucket by name, only when it belongs to the customer. */
  customerBucket(customerId: string, name: string) {
    return this.db
      .selectFrom('storage_buckets')
      .selectAll()
      .where('name', '=', name)
      .where('customer_id', '=', customerId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  /** A live bucket by id: a bucket key works only while its bucket lives. */
  bucketByIdForKey(id: string) {
    return this.db
      .selectFrom('storage_buckets')
      .select(['id', 'name', 'customer_id'])
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  liveBucketsByName(customerId: string, names: string[]) {
    if (names.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('storage_buckets')
      .select(['id', 'name'])
      .where('customer_id', '=', customerId)
      .where('name', 'in', names)
      .where('deleted_at', 'is', null)
      .execute();
  }

  async updateBucket(
    id: string,
    changes: Partial<
      Pick<
        StorageBucketsTable,
        | 'is_public'
        | 'versioning'
        | 'cors'
        | 'lifecycle'
        | 'default_encryption'
        | 'object_lock_default'
        | 'acl'
        | 'object_ownership'
        | 'public_access_block'
        | 'policy'
        | 'tags'
      >
    >,
    now: number,
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('storage_buckets')
      .set({ ...changes, updated_at: now })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Marks the bucket deleted (its name stays taken) and drops its keys, in one transaction. */
  async retireBucket(id: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('storage_buckets')
      .set({ deleted_at: now, updated_at: now, cors: null, lifecycle: null })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    await this.db.deleteFrom('storage_keys').where('bucket_id', '=', id).execute();
    return true;
  }

  /** Buckets with lifecycle rules, for the lifecycle job. */
  bucketsWithLifecycle() {
    return this.db
      .selectFrom('storage_buckets')
      .selectAll()
      .where('deleted_at', 'is', null)
      .where('lifecycle', 'is not', null)
      .orderBy('id')
      .execute();
  }

  // Keys

  insertKey(row: StorageKeysTable) {
    return this.db.insertInto('storage_keys').values(row).execute();
  }

  keysOfBucket(bucketId: string) {
    return this.db
      .selectFrom('storage_keys')
      .selectAll()
      .where('bucket_id', '=', bucketId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async countKeysOfBucket(bucketId: string): Promise<number> {
    const row = await this.db
      .selectFrom('storage_keys')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('bucket_id', '=', bucketId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  keyOfBucket(bucketId: string, id: string) {
    return this.db
      .selectFrom('storage_keys')
      .selectAll()
      .where('bucket_id', '=', bucketId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  accountKeys(customerId: string) {
    return this.db
      .selectFrom('storage_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('kind', '=', 'account')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async countAccountKeys(customerId: string): Promise<number> {
    const row = await this.db
      .selectFrom('storage_keys')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('customer_id', '=', customerId)
      .where('kind', '=', 'account')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  accountKey(customerId: string, id: string) {
    return this.db
      .selectFrom('storage_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('kind', '=', 'account')
      .where('id', '=', id)
      .executeTakeFirst();
  }

  legacyKey(customerId: string) {
    return this.db
      .selectFrom('storage_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('is_legacy', '=', 1)
      .orderBy('created_at')
      .executeTakeFirst();
  }

  keyByAccessKeyId(accessKeyId: string) {
    return this.db
      .selectFrom('storage_keys')
      .selectAll()
      .where('access_key_id', '=', accessKeyId)
      .executeTakeFirst();
  }

  async updateKey(
    id: string,
    changes: Partial<Pick<StorageKeysTable, 'name' | 'description' | 'full_access' | 'actions' | 'grants'>>,
    now: number,
  ) {
    await this.db
      .updateTable('storage_keys')
      .set({ ...changes, updated_at: now })
      .where('id', '=', id)
      .execute();
  }

  async deleteKey(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('storage_keys').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async touchKey(accessKeyId: string, now: number) {
    await this.db
      .updateTable('storage_keys')
      .set({ last_used_at: now })
      .where('access_key_id', '=', accessKeyId)
      .execute();
  }
}
