import type { Kysely, Transaction } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { StorageKmsKeysTable, StorageTables } from './migrations.js';

type Db = Kysely<StorageTables> | Transaction<StorageTables>;

/** Every query of the SSE-KMS key service. */
export class KmsKeyRepo {
  readonly db: Kysely<StorageTables>;
  constructor(private readonly store: Store) {
    this.db = store.typed<StorageTables>();
  }

  /** Runs `fn` in a unit of work holding `locks` (see kernel/store/unit-of-work.ts). */
  transaction<T>(locks: string[], fn: (trx: Transaction<StorageTables>) => Promise<T>): Promise<T> {
    return this.store.unitOfWork({ locks }, ({ tx }) => fn(tx as Transaction<StorageTables>));
  }

  async count(customerId: string, db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom('storage_kms_keys')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('customer_id', '=', customerId)
      // The default key (made by S3 on first use) is not one of the customer's keys to count,
      // nor is a destroyed key.
      .where('is_default', '=', 0)
      .where('state', '!=', 'Deleted')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  list(customerId: string) {
    return this.db
      .selectFrom('storage_kms_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('state', '!=', 'Deleted')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  byId(customerId: string, id: string, db: Db = this.db) {
    return db
      .selectFrom('storage_kms_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  byAlias(customerId: string, alias: string, db: Db = this.db) {
    return db
      .selectFrom('storage_kms_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('alias', '=', alias)
      .executeTakeFirst();
  }

  defaultKey(customerId: string, db: Db = this.db) {
    return db
      .selectFrom('storage_kms_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('is_default', '=', 1)
      .executeTakeFirst();
  }

  insert(row: StorageKmsKeysTable, db: Db = this.db) {
    return db.insertInto('storage_kms_keys').values(row).execute();
  }

  update(id: string, changes: Partial<StorageKmsKeysTable>, db: Db = this.db) {
    return db.updateTable('storage_kms_keys').set(changes).where('id', '=', id).execute();
  }
}
