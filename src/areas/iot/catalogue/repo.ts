import type { Kysely } from 'kysely';
import type { Store } from '../../../kernel/store/store.js';
import type { AnyDb } from '../../../kernel/store/unit-of-work.js';
import type { IotTables } from '../migrations.js';
import { countOwned } from '../repo.js';
import type { IotDatapointsTable, IotProfilesTable } from './tables.js';

/** Datapoint definitions and profiles. */
export class CatalogueRepo {
  constructor(readonly db: Kysely<IotTables>) {}
  static of(store: Store) {
    return new CatalogueRepo(store.typed<IotTables>());
  }
  static over(tx: AnyDb) {
    return new CatalogueRepo(tx);
  }

  async insertDatapoint(row: IotDatapointsTable) {
    await this.db.insertInto('iot_datapoints').values(row).execute();
  }
  datapoints(customerId: string) {
    return this.db
      .selectFrom('iot_datapoints')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('key')
      .execute();
  }
  datapoint(customerId: string, id: string) {
    return this.db
      .selectFrom('iot_datapoints')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  datapointByKey(customerId: string, key: string) {
    return this.db
      .selectFrom('iot_datapoints')
      .select('id')
      .where('customer_id', '=', customerId)
      .where('key', '=', key)
      .executeTakeFirst();
  }
  countDatapoints(customerId: string): Promise<number> {
    return countOwned(this.db, 'iot_datapoints', customerId);
  }
  async updateDatapoint(id: string, row: IotDatapointsTable) {
    const { id: _id, customer_id: _c, key: _k, created_at: _at, ...rest } = row;
    await this.db.updateTable('iot_datapoints').set(rest).where('id', '=', id).execute();
  }
  async deleteDatapoint(id: string) {
    await this.db.deleteFrom('iot_datapoints').where('id', '=', id).execute();
  }

  async insertProfile(row: IotProfilesTable) {
    await this.db.insertInto('iot_profiles').values(row).execute();
  }
  countProfiles(customerId: string): Promise<number> {
    return countOwned(this.db, 'iot_profiles', customerId);
  }
  profiles(customerId: string) {
    return this.db
      .selectFrom('iot_profiles')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  profile(customerId: string, id: string) {
    return this.db
      .selectFrom('iot_profiles')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  profileByName(customerId: string, name: string) {
    return this.db
      .selectFrom('iot_profiles')
      .select('id')
      .where('customer_id', '=', customerId)
      .where('name', '=', name)
      .executeTakeFirst();
  }
  async updateProfile(id: string, row: IotProfilesTable) {
    const { id: _id, customer_id: _c, created_at: _at, ...rest } = row;
    await this.db.updateTable('iot_profiles').set(rest).where('id', '=', id).execute();
  }
  /** The profile goes; devices keep their values and forget it. */
  async deleteProfile(id: string) {
    await this.db.updateTable('iot_devices').set({ profile_id: null }).where('profile_id', '=', id).execute();
    await this.db.deleteFrom('iot_profiles').where('id', '=', id).execute();
  }
  async devicesWithProfile(profileId: string): Promise<number> {
    const r = await this.db
      .selectFrom('iot_devices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('profile_id', '=', profileId)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
  async profileIdOf(devicePk: string) {
    const r = await this.db
      .selectFrom('iot_devices')
      .select('profile_id')
      .where('id', '=', devicePk)
      .executeTakeFirst();
    return r?.profile_id;
  }
}
