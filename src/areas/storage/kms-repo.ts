import type { AnyDb, UnitDb } from '../../kernel/store/unit-of-work.js';
import type { StorageKmsKeysTable, StorageTables } from './migrations.js';

/** Every query of the SSE-KMS key service. */
export class KmsKeyRepo {
  constructor(readonly db: UnitDb<StorageTables>) {}

  /** Bound to a unit's transaction (units are opened by the services, through `unitsOf`). */
  static over(db: AnyDb): KmsKeyRepo {
    return new KmsKeyRepo(db);
  }

  async count(customerId: string): Promise<number> {
    const row = await this.db
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

  byId(customerId: string, id: string) {
    return this.db
      .selectFrom('storage_kms_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  byAlias(customerId: string, alias: string) {
    return this.db
      .selectFrom('storage_kms_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('alias', '=', alias)
      .executeTakeFirst();
  }

  defaultKey(customerId: string) {
    return this.db
      .selectFrom('storage_kms_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('is_default', '=', 1)
      .executeTakeFirst();
  }

  insert(row: StorageKmsKeysTable) {
    return this.db.insertInto('storage_kms_keys').values(row).execute();
  }

  update(id: string, changes: Partial<StorageKmsKeysTable>) {
    return this.db.updateTable('storage_kms_keys').set(changes).where('id', '=', id).execute();
  }
}
