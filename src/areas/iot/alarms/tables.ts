import type { Kysely, Migration } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

export interface IotRulesTable {
  id: string;
  customer_id: string;
  name: string;
  description: string | null;
  enabled: number;
  target_type: 'all' | 'device' | 'group' | 'profile' | 'device_type';
  /** The device_id, group id, profile id or device type (null for `all`). */
  target_value: string | null;
  /** JSON: severity → condition. */
  severities: string;
  /** JSON condition or null. */
  clear_condition: string | null;
  /** JSON schedule or null (always active). */
  schedule: string | null;
  created_at: number;
  updated_at: number;
}

/** What a repeating or duration condition remembers between messages (survives restarts). */
export interface IotRuleStateTable {
  rule_id: string;
  device_pk: string;
  severity: string;
  /** Messages in a row that matched (repeating). */
  count: number;
  /** Since when the condition has held (duration); null while it does not. */
  since: number | null;
  updated_at: number;
}

export interface IotAlarmsTable {
  id: string;
  customer_id: string;
  rule_id: string;
  rule_name: string;
  device_pk: string;
  device_id: string;
  severity: string;
  status: 'active' | 'acknowledged' | 'resolved';
  /** `rule` (the clear condition or renewed activity) or `user`; null while open. */
  cleared_by: string | null;
  /** JSON: the values and condition that raised it. */
  details: string;
  created_at: number;
  updated_at: number;
  acknowledged_at: number | null;
  acknowledged_by: string | null;
  resolved_at: number | null;
  resolved_by: string | null;
  last_notified_at: number | null;
}

export interface IotAlarmEventsTable {
  id: string;
  alarm_id: string;
  at: number;
  event: string;
  actor: string;
  /** JSON object. */
  details: string;
}

export interface IotChannelsTable {
  id: string;
  customer_id: string;
  name: string;
  channel_type: 'webhook' | 'email' | 'sms';
  /** JSON object (`url` for a webhook, `to` for e-mail and SMS). */
  config: string;
  enabled: number;
  created_at: number;
  updated_at: number;
}

export interface IotPoliciesTable {
  id: string;
  customer_id: string;
  name: string;
  enabled: number;
  /** JSON arrays; null = any. */
  channel_ids: string;
  severities: string | null;
  rule_ids: string | null;
  group_ids: string | null;
  device_ids: string | null;
  /** JSON array of alarm events: created, escalated, acknowledged, resolved, reopened. */
  events: string;
  renotify_minutes: number | null;
  /** JSON {timezone, start, end} or null. */
  quiet_hours: string | null;
  created_at: number;
  updated_at: number;
}

export interface IotDeliveriesTable {
  id: string;
  customer_id: string;
  channel_id: string;
  policy_id: string | null;
  alarm_id: string | null;
  event: string;
  status: 'pending' | 'delivered' | 'failed' | 'suppressed';
  /** Why it was suppressed (throttled, quiet_hours) or failed. */
  error: string | null;
  response_code: number | null;
  test: number;
  /** The kernel's webhook delivery carrying it (webhook channels). */
  webhook_delivery_id: string | null;
  created_at: number;
  completed_at: number | null;
}

export interface IotAlarmTables {
  iot_rules: IotRulesTable;
  iot_rule_state: IotRuleStateTable;
  iot_alarms: IotAlarmsTable;
  iot_alarm_events: IotAlarmEventsTable;
  iot_channels: IotChannelsTable;
  iot_policies: IotPoliciesTable;
  iot_deliveries: IotDeliveriesTable;
}

const owned = (db: AnyDb, table: string) =>
  db.schema
    .createTable(table)
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'));

export const iotAlarmMigrations: Record<string, Migration> = {
  '2026-11-26-0200-iot-alarms': {
    async up(db: AnyDb) {
      await owned(db, 'iot_rules')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('target_type', 'text', (c) => c.notNull())
        .addColumn('target_value', 'text')
        .addColumn('severities', 'text', (c) => c.notNull())
        .addColumn('clear_condition', 'text')
        .addColumn('schedule', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('iot_rules_customer').on('iot_rules').columns(['customer_id']).execute();
      await db.schema
        .createTable('iot_rule_state')
        .addColumn('rule_id', 'text', (c) => c.notNull().references('iot_rules.id').onDelete('cascade'))
        .addColumn('device_pk', 'text', (c) => c.notNull().references('iot_devices.id').onDelete('cascade'))
        .addColumn('severity', 'text', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('since', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('iot_rule_state_pk', ['rule_id', 'device_pk', 'severity'])
        .execute();
      await owned(db, 'iot_alarms')
        .addColumn('rule_id', 'text', (c) => c.notNull())
        .addColumn('rule_name', 'text', (c) => c.notNull())
        .addColumn('device_pk', 'text', (c) => c.notNull())
        .addColumn('device_id', 'text', (c) => c.notNull())
        .addColumn('severity', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('cleared_by', 'text')
        .addColumn('details', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('acknowledged_at', 'bigint')
        .addColumn('acknowledged_by', 'text')
        .addColumn('resolved_at', 'bigint')
        .addColumn('resolved_by', 'text')
        .addColumn('last_notified_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('iot_alarms_customer_created')
        .on('iot_alarms')
        .columns(['customer_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('iot_alarms_rule_device')
        .on('iot_alarms')
        .columns(['rule_id', 'device_pk', 'status'])
        .execute();
      await db.schema
        .createTable('iot_alarm_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('alarm_id', 'text', (c) => c.notNull().references('iot_alarms.id').onDelete('cascade'))
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('iot_alarm_events_alarm')
        .on('iot_alarm_events')
        .columns(['alarm_id', 'at'])
        .execute();
      await owned(db, 'iot_channels')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('channel_type', 'text', (c) => c.notNull())
        .addColumn('config', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await owned(db, 'iot_policies')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('channel_ids', 'text', (c) => c.notNull())
        .addColumn('severities', 'text')
        .addColumn('rule_ids', 'text')
        .addColumn('group_ids', 'text')
        .addColumn('device_ids', 'text')
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('renotify_minutes', 'integer')
        .addColumn('quiet_hours', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await owned(db, 'iot_deliveries')
        .addColumn('channel_id', 'text', (c) => c.notNull())
        .addColumn('policy_id', 'text')
        .addColumn('alarm_id', 'text')
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('response_code', 'integer')
        .addColumn('test', 'integer', (c) => c.notNull())
        .addColumn('webhook_delivery_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('iot_deliveries_customer_created')
        .on('iot_deliveries')
        .columns(['customer_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('iot_deliveries_channel_created')
        .on('iot_deliveries')
        .columns(['channel_id', 'created_at'])
        .execute();
    },
  },
  '2026-11-26-0300-iot-alarm-device-indexes': {
    // The rule engine reads a device's rule state and open alarms once when it first judges it.
    async up(db: AnyDb) {
      await db.schema
        .createIndex('iot_rule_state_device')
        .on('iot_rule_state')
        .columns(['device_pk'])
        .execute();
      await db.schema
        .createIndex('iot_alarms_device_status')
        .on('iot_alarms')
        .columns(['device_pk', 'status'])
        .execute();
    },
  },
};
