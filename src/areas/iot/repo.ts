import { type Kysely, sql } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type { IotDevicesTable, IotGroupsTable, IotTables } from './migrations.js';

export interface DeviceFilter {
  device_type?: string;
  is_online?: boolean;
  is_active?: boolean;
  tag?: string;
  group_id?: string;
  profile_id?: string;
}

type Owned =
  | 'iot_devices'
  | 'iot_groups'
  | 'iot_profiles'
  | 'iot_datapoints'
  | 'iot_rules'
  | 'iot_channels'
  | 'iot_policies';

/** How many rows of `table` a customer owns: what every per-account IoT limit counts. */
export async function countOwned(db: Kysely<IotTables>, table: Owned, customerId: string): Promise<number> {
  const r = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

export class IotRepo {
  constructor(readonly db: Kysely<IotTables>) {}
  static of(store: Store) {
    return new IotRepo(store.typed<IotTables>());
  }
  static over(tx: AnyDb) {
    return new IotRepo(tx);
  }

  async insertDevice(row: IotDevicesTable) {
    await this.db.insertInto('iot_devices').values(row).execute();
  }
  countDevices(customerId: string): Promise<number> {
    return countOwned(this.db, 'iot_devices', customerId);
  }
  async customersWithDevices(): Promise<string[]> {
    const rows = await this.db.selectFrom('iot_devices').select('customer_id').distinct().execute();
    return rows.map((r) => r.customer_id);
  }
  async deviceCounts(customerId: string) {
    const r = await this.db
      .selectFrom('iot_devices')
      .select((eb) => [
        eb.fn.countAll<number>().as('total'),
        eb.fn.sum<number>('is_online').as('online'),
        eb.fn.sum<number>('is_active').as('active'),
      ])
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    const total = Number(r?.total ?? 0);
    const online = Number(r?.online ?? 0);
    return { total, online, offline: total - online, inactive: total - Number(r?.active ?? 0) };
  }
  device(customerId: string, deviceId: string) {
    return this.db
      .selectFrom('iot_devices')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('device_id', '=', deviceId)
      .executeTakeFirst();
  }
  byPk(id: string) {
    return this.db.selectFrom('iot_devices').selectAll().where('id', '=', id).executeTakeFirst();
  }
  async groupsOf(devicePk: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('iot_group_members')
      .select('group_id')
      .where('device_pk', '=', devicePk)
      .execute();
    return rows.map((r) => r.group_id);
  }
  byUsername(username: string) {
    return this.db
      .selectFrom('iot_devices')
      .selectAll()
      .where('mqtt_username', '=', username)
      .executeTakeFirst();
  }
  private filtered(customerId: string, f: DeviceFilter) {
    let q = this.db.selectFrom('iot_devices').where('customer_id', '=', customerId);
    if (f.device_type !== undefined) q = q.where('device_type', '=', f.device_type);
    if (f.is_online !== undefined) q = q.where('is_online', '=', f.is_online ? 1 : 0);
    if (f.is_active !== undefined) q = q.where('is_active', '=', f.is_active ? 1 : 0);
    if (f.profile_id !== undefined) q = q.where('profile_id', '=', f.profile_id);
    if (f.group_id !== undefined) {
      const group = f.group_id;
      q = q.where('id', 'in', (eb) =>
        eb.selectFrom('iot_group_members').select('device_pk').where('group_id', '=', group),
      );
    }
    if (f.tag !== undefined) {
      const tag = f.tag;
      q = q.where('id', 'in', (eb) =>
        eb.selectFrom('iot_device_tags').select('device_pk').where('tag', '=', tag),
      );
    }
    return q;
  }
  async list(customerId: string, f: DeviceFilter, limit: number, offset: number) {
    const [rows, total] = await Promise.all([
      this.filtered(customerId, f)
        .selectAll()
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .offset(offset)
        .execute(),
      this.filtered(customerId, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
    ]);
    return { rows, total: Number(total?.n ?? 0) };
  }
  async updateDevice(id: string, patch: Partial<IotDevicesTable>) {
    await this.db.updateTable('iot_devices').set(patch).where('id', '=', id).execute();
  }
  /** Tags of these devices, each list in the order the tags were added. */
  async tagsOf(devicePks: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(devicePks.map((id) => [id, []]));
    if (devicePks.length === 0) return out;
    const rows = await this.db
      .selectFrom('iot_device_tags')
      .select(['device_pk', 'tag'])
      .where('device_pk', 'in', devicePks)
      .orderBy('position')
      .execute();
    for (const r of rows) out.get(r.device_pk)?.push(r.tag);
    return out;
  }
  async addTag(devicePk: string, tag: string, position: number, at: number) {
    await this.db
      .insertInto('iot_device_tags')
      .values({ device_pk: devicePk, tag, position, created_at: at })
      .execute();
  }
  async maxTagPosition(devicePk: string): Promise<number> {
    const r = await this.db
      .selectFrom('iot_device_tags')
      .select((eb) => eb.fn.max('position').as('p'))
      .where('device_pk', '=', devicePk)
      .executeTakeFirst();
    return r?.p == null ? -1 : Number(r.p);
  }
  async removeTag(devicePk: string, tag: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('iot_device_tags')
      .where('device_pk', '=', devicePk)
      .where('tag', '=', tag)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
  async deleteDevice(id: string): Promise<boolean> {
    await this.db.deleteFrom('iot_device_tags').where('device_pk', '=', id).execute();
    await this.db.deleteFrom('iot_telemetry').where('device_pk', '=', id).execute();
    await this.db.deleteFrom('iot_group_members').where('device_pk', '=', id).execute();
    await this.db.deleteFrom('iot_device_hours').where('device_pk', '=', id).execute();
    // Its alarms, their timelines and rule state go with it, as in ThingsBoard.
    await this.db
      .deleteFrom('iot_alarm_events')
      .where('alarm_id', 'in', (eb) => eb.selectFrom('iot_alarms').select('id').where('device_pk', '=', id))
      .execute();
    await this.db.deleteFrom('iot_alarms').where('device_pk', '=', id).execute();
    await this.db.deleteFrom('iot_rule_state').where('device_pk', '=', id).execute();
    await this.db.deleteFrom('iot_device_sessions').where('device_pk', '=', id).execute();
    const r = await this.db.deleteFrom('iot_devices').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  // --- telemetry ---------------------------------------------------------------------------------

  telemetry(devicePk: string, q: { keys?: string[]; from?: number; to?: number; limit: number }) {
    let query = this.db.selectFrom('iot_telemetry').selectAll().where('device_pk', '=', devicePk);
    if (q.keys?.length) query = query.where('key', 'in', q.keys);
    if (q.from !== undefined) query = query.where('ts', '>=', q.from);
    if (q.to !== undefined) query = query.where('ts', '<=', q.to);
    return query.orderBy('ts', 'desc').orderBy('key').limit(q.limit).execute();
  }
  /**
   * Points of each key grouped in buckets of `intervalMs` (from the epoch, UTC), newest bucket
   * first. avg/min/max/sum look at numbers only; count counts every point.
   */
  aggregate(
    devicePk: string,
    q: {
      keys?: string[];
      from: number;
      to: number;
      limit: number;
      fn: 'avg' | 'min' | 'max' | 'sum' | 'count';
      intervalMs: number;
    },
  ) {
    const ms = sql.lit(q.intervalMs);
    const bucket = sql<number>`(${sql.ref('ts')} / ${ms}) * ${ms}`;
    const value =
      q.fn === 'count'
        ? sql<number>`count(*)`
        : sql<number | null>`${sql.raw(q.fn)}(${sql.ref('value_num')})`;
    let query = this.db
      .selectFrom('iot_telemetry')
      .select(['key', bucket.as('bucket'), value.as('value'), sql<number>`count(*)`.as('n')])
      .where('device_pk', '=', devicePk)
      .where('ts', '>=', q.from)
      .where('ts', '<=', q.to);
    if (q.keys?.length) query = query.where('key', 'in', q.keys);
    return query.groupBy(['key', bucket]).orderBy('bucket', 'desc').orderBy('key').limit(q.limit).execute();
  }
  /** The newest point of each key. */
  latest(devicePk: string) {
    return this.db
      .selectFrom('iot_telemetry as t')
      .selectAll('t')
      .where('t.device_pk', '=', devicePk)
      .where('t.ts', '=', (eb) =>
        eb
          .selectFrom('iot_telemetry as u')
          .select((e) => e.fn.max('u.ts').as('m'))
          .whereRef('u.device_pk', '=', 't.device_pk')
          .whereRef('u.key', '=', 't.key'),
      )
      .orderBy('t.key')
      .execute();
  }
  async setConnection(id: string, online: boolean, at: number) {
    await this.db
      .updateTable('iot_devices')
      .set({ is_online: online ? 1 : 0, last_seen: at })
      .where('id', '=', id)
      .execute();
  }

  // --- groups ------------------------------------------------------------------------------------

  async insertGroup(row: IotGroupsTable) {
    await this.db.insertInto('iot_groups').values(row).execute();
  }
  countGroups(customerId: string): Promise<number> {
    return countOwned(this.db, 'iot_groups', customerId);
  }
  groups(customerId: string) {
    return this.db
      .selectFrom('iot_groups')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  group(customerId: string, id: string) {
    return this.db
      .selectFrom('iot_groups')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  async updateGroup(id: string, patch: Partial<IotGroupsTable>) {
    await this.db.updateTable('iot_groups').set(patch).where('id', '=', id).execute();
  }
  async deleteGroup(id: string) {
    await this.db.deleteFrom('iot_group_members').where('group_id', '=', id).execute();
    await this.db.deleteFrom('iot_groups').where('id', '=', id).execute();
  }
  devicesByIds(customerId: string, deviceIds: string[]) {
    return this.db
      .selectFrom('iot_devices')
      .select(['id', 'device_id'])
      .where('customer_id', '=', customerId)
      .where('device_id', 'in', deviceIds)
      .execute();
  }
  async members(groupId: string): Promise<Set<string>> {
    const rows = await this.db
      .selectFrom('iot_group_members')
      .select('device_pk')
      .where('group_id', '=', groupId)
      .execute();
    return new Set(rows.map((r) => r.device_pk));
  }
  async addMember(groupId: string, devicePk: string) {
    await this.db
      .insertInto('iot_group_members')
      .values({ group_id: groupId, device_pk: devicePk })
      .execute();
  }
  async removeMember(groupId: string, devicePk: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('iot_group_members')
      .where('group_id', '=', groupId)
      .where('device_pk', '=', devicePk)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
