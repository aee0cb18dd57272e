import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AccountTables, SshKeysTable } from './migrations.js';

export class AccountRepo {
  private readonly db: Kysely<AccountTables>;
  constructor(store: Store) {
    this.db = store.typed<AccountTables>();
  }
  insertSshKey(row: SshKeysTable) {
    return this.db.insertInto('ssh_keys').values(row).execute();
  }
  listSshKeys(customerId: string) {
    return this.db
      .selectFrom('ssh_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  sshKey(customerId: string, id: string) {
    return this.db
      .selectFrom('ssh_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  async deleteSshKey(customerId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('ssh_keys')
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
