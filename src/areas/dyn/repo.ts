import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type { DynCredentialsTable, DynHostnamesTable, DynTables, DynUpdatesTable } from './migrations.js';

/** Results that count as an applied update (for the plan's updates-per-hour limit). */
const COUNTED_RESULTS = ['good', 'nochg'];

export class DynRepo {
  constructor(private readonly db: Kysely<DynTables>) {}

  /** A repo over a transaction of `store` (a unit of work's `tx`). */
  static over(tx: AnyDb): DynRepo {
    return new DynRepo(tx);
  }

  static of(store: Store): DynRepo {
    return new DynRepo(store.typed<DynTables>());
  }

  insertHostname(row: DynHostnamesTable) {
    return this.db.insertInto('dyn_hostnames').values(row).execute();
  }
  hostname(customerId: string, id: string) {
    return this.db
      .selectFrom('dyn_hostnames')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  hostnameById(id: string) {
    return this.db.selectFrom('dyn_hostnames').selectAll().where('id', '=', id).executeTakeFirst();
  }
  hostnameByName(hostname: string) {
    return this.db
      .selectFrom('dyn_hostnames')
      .select('id')
      .where('hostname', '=', hostname)
      .executeTakeFirst();
  }
  hostnames(customerId: string) {
    return this.db
      .selectFrom('dyn_hostnames')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  async countHostnames(customerId: string): Promise<number> {
    const r = await this.db
      .selectFrom('dyn_hostnames')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('customer_id', '=', customerId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
  updateHostname(id: string, changes: Partial<DynHostnamesTable>) {
    return this.db.updateTable('dyn_hostnames').set(changes).where('id', '=', id).execute();
  }
  deleteHostname(id: string) {
    return this.db.deleteFrom('dyn_hostnames').where('id', '=', id).execute();
  }

  insertCredential(row: DynCredentialsTable) {
    return this.db.insertInto('dyn_credentials').values(row).execute();
  }
  credentials(hostnameId: string, kind: DynCredentialsTable['kind']) {
    return this.db
      .selectFrom('dyn_credentials')
      .selectAll()
      .where('hostname_id', '=', hostnameId)
      .where('kind', '=', kind)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  async countCredentials(hostnameId: string): Promise<number> {
    const r = await this.db
      .selectFrom('dyn_credentials')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('hostname_id', '=', hostnameId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
  credential(hostnameId: string, id: string) {
    return this.db
      .selectFrom('dyn_credentials')
      .selectAll()
      .where('hostname_id', '=', hostnameId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  credentialByUsername(username: string) {
    return this.db
      .selectFrom('dyn_credentials')
      .selectAll()
      .where('username', '=', username)
      .executeTakeFirst();
  }
  touchCredential(id: string, at: number) {
    return this.db.updateTable('dyn_credentials').set({ last_used_at: at }).where('id', '=', id).execute();
  }
  /** Makes `credentialId` the source only if the hostname has none; true when it did. */
  async claimSourceIfNone(hostnameId: string, credentialId: string): Promise<boolean> {
    const r = await this.db
      .updateTable('dyn_hostnames')
      .set({ active_source_id: credentialId })
      .where('id', '=', hostnameId)
      .where('active_source_id', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Deletes a credential; if it was the hostname's active source, the hostname has none afterwards. */
  async deleteCredential(hostnameId: string, id: string): Promise<void> {
    await this.db
      .updateTable('dyn_hostnames')
      .set({ active_source_id: null })
      .where('id', '=', hostnameId)
      .where('active_source_id', '=', id)
      .execute();
    await this.db.deleteFrom('dyn_credentials').where('id', '=', id).execute();
  }

  insertUpdate(row: DynUpdatesTable) {
    return this.db.insertInto('dyn_updates').values(row).execute();
  }
  async countAppliedSince(hostnameId: string, since: number): Promise<number> {
    const r = await this.db
      .selectFrom('dyn_updates')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('hostname_id', '=', hostnameId)
      .where('created_at', '>=', since)
      .where('result', 'in', COUNTED_RESULTS)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
  updates(hostnameId: string, limit: number, offset: number) {
    return this.db
      .selectFrom('dyn_updates')
      .selectAll()
      .where('hostname_id', '=', hostnameId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
  }
  async countUpdates(hostnameId: string): Promise<number> {
    const r = await this.db
      .selectFrom('dyn_updates')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('hostname_id', '=', hostnameId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
