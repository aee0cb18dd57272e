import type { Kysely } from 'kysely';
import type { Store } from '../../../kernel/store/store.js';
import type { AnyDb } from '../../../kernel/store/unit-of-work.js';
import type { IotTables } from '../migrations.js';
import { countOwned } from '../repo.js';
import type { IotAlarmEventsTable, IotAlarmsTable, IotRuleStateTable, IotRulesTable } from './tables.js';

type Db = Kysely<IotTables>;

export interface AlarmFilter {
  status?: 'active' | 'acknowledged' | 'resolved' | 'open';
  severity?: string;
  device_id?: string;
  rule_id?: string;
  from?: number;
  to?: number;
}

/** Rules, their per-device state, alarms and their timelines. */
export class AlarmRepo {
  constructor(readonly db: Db) {}
  static of(store: Store) {
    return new AlarmRepo(store.typed<IotTables>());
  }
  static over(tx: AnyDb) {
    return new AlarmRepo(tx);
  }

  // --- rules ---------------------------------------------------------------------------------

  async insertRule(row: IotRulesTable) {
    await this.db.insertInto('iot_rules').values(row).execute();
  }
  countRules(customerId: string): Promise<number> {
    return countOwned(this.db, 'iot_rules', customerId);
  }
  rules(customerId: string) {
    return this.db
      .selectFrom('iot_rules')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  /** Enabled rules with an inactivity condition, of every customer (for the clock's sweep). */
  enabledRules() {
    return this.db.selectFrom('iot_rules').selectAll().where('enabled', '=', 1).execute();
  }
  rule(customerId: string, id: string) {
    return this.db
      .selectFrom('iot_rules')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  ruleById(id: string) {
    return this.db.selectFrom('iot_rules').selectAll().where('id', '=', id).executeTakeFirst();
  }
  async updateRule(id: string, patch: Partial<IotRulesTable>) {
    await this.db.updateTable('iot_rules').set(patch).where('id', '=', id).execute();
  }
  async deleteRule(id: string) {
    await this.db.deleteFrom('iot_rule_state').where('rule_id', '=', id).execute();
    await this.db.deleteFrom('iot_rules').where('id', '=', id).execute();
  }
  async rulesTargeting(customerId: string, type: IotRulesTable['target_type'], value: string) {
    const rows = await this.db
      .selectFrom('iot_rules')
      .select('id')
      .where('customer_id', '=', customerId)
      .where('target_type', '=', type)
      .where('target_value', '=', value)
      .execute();
    return rows.map((r) => r.id);
  }

  // --- state ---------------------------------------------------------------------------------

  state(ruleId: string, devicePk: string) {
    return this.db
      .selectFrom('iot_rule_state')
      .selectAll()
      .where('rule_id', '=', ruleId)
      .where('device_pk', '=', devicePk)
      .execute();
  }
  /** Every rule's state for one device (the engine reads it once per device). */
  stateOfDevice(devicePk: string) {
    return this.db.selectFrom('iot_rule_state').selectAll().where('device_pk', '=', devicePk).execute();
  }
  /** Many states in order (a later row for the same key wins), in the caller's transaction. */
  async saveStates(rows: IotRuleStateTable[]) {
    for (const row of rows) await this.saveState(row);
  }
  async saveState(row: IotRuleStateTable) {
    await this.db
      .insertInto('iot_rule_state')
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(['rule_id', 'device_pk', 'severity'])
          .doUpdateSet({ count: row.count, since: row.since, updated_at: row.updated_at }),
      )
      .execute();
  }
  /** Duration conditions that have held since before `before` (for the clock's sweep). */
  heldSince(before: number) {
    return this.db
      .selectFrom('iot_rule_state')
      .selectAll()
      .where('since', 'is not', null)
      .where('since', '<=', before)
      .execute();
  }
  async clearRuleState(ruleId: string) {
    await this.db.deleteFrom('iot_rule_state').where('rule_id', '=', ruleId).execute();
  }

  // --- alarms --------------------------------------------------------------------------------

  async insertAlarm(row: IotAlarmsTable) {
    await this.db.insertInto('iot_alarms').values(row).execute();
  }
  openAlarm(ruleId: string, devicePk: string) {
    return this.db
      .selectFrom('iot_alarms')
      .selectAll()
      .where('rule_id', '=', ruleId)
      .where('device_pk', '=', devicePk)
      .where('status', 'in', ['active', 'acknowledged'])
      .executeTakeFirst();
  }
  /** The device's open alarms, by rule (the engine reads them once per device). */
  openOfDevice(devicePk: string) {
    return this.db
      .selectFrom('iot_alarms')
      .select(['rule_id', 'severity'])
      .where('device_pk', '=', devicePk)
      .where('status', 'in', ['active', 'acknowledged'])
      .execute();
  }
  /** The rule's open alarms, by device (for the clock's sweep). */
  async openOfRule(ruleId: string): Promise<Map<string, string>> {
    const rows = await this.db
      .selectFrom('iot_alarms')
      .select(['device_pk', 'severity'])
      .where('rule_id', '=', ruleId)
      .where('status', 'in', ['active', 'acknowledged'])
      .execute();
    return new Map(rows.map((r) => [r.device_pk, r.severity]));
  }
  alarm(customerId: string, id: string) {
    return this.db
      .selectFrom('iot_alarms')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  async updateAlarm(id: string, patch: Partial<IotAlarmsTable>) {
    await this.db.updateTable('iot_alarms').set(patch).where('id', '=', id).execute();
  }
  private filtered(customerId: string, f: AlarmFilter) {
    let q = this.db.selectFrom('iot_alarms').where('customer_id', '=', customerId);
    if (f.status === 'open') q = q.where('status', 'in', ['active', 'acknowledged']);
    else if (f.status) q = q.where('status', '=', f.status);
    if (f.severity) q = q.where('severity', '=', f.severity);
    if (f.device_id) q = q.where('device_id', '=', f.device_id);
    if (f.rule_id) q = q.where('rule_id', '=', f.rule_id);
    if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
    if (f.to !== undefined) q = q.where('created_at', '<=', f.to);
    return q;
  }
  async alarms(customerId: string, f: AlarmFilter, limit: number, offset: number) {
    const [rows, total] = await Promise.all([
      this.filtered(customerId, f)
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .offset(offset)
        .execute(),
      this.filtered(customerId, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
    ]);
    return { rows, total: Number(total?.n ?? 0) };
  }
  /** Counts by status and severity. */
  async counts(customerId: string) {
    return this.db
      .selectFrom('iot_alarms')
      .select((eb) => ['status', 'severity', eb.fn.countAll<number>().as('n')])
      .where('customer_id', '=', customerId)
      .groupBy(['status', 'severity'])
      .execute();
  }
  async openSeverities(devicePk: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('iot_alarms')
      .select('severity')
      .where('device_pk', '=', devicePk)
      .where('status', 'in', ['active', 'acknowledged'])
      .execute();
    return rows.map((r) => r.severity);
  }
  async addEvent(row: IotAlarmEventsTable) {
    await this.db.insertInto('iot_alarm_events').values(row).execute();
  }
  events(alarmId: string) {
    return this.db
      .selectFrom('iot_alarm_events')
      .selectAll()
      .where('alarm_id', '=', alarmId)
      .orderBy('at')
      .orderBy('id')
      .execute();
  }
}
