import type { Kysely, Migration } from 'kysely';
import type { IotAlarmTables } from './alarms/tables.js';
import type { IotCatalogueTables } from './catalogue/tables.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

export interface IotDevicesTable {
  /** Fjord's own id; `device_id` is the customer's name for the device, unique per customer. */
  id: string;
  customer_id: string;
  device_id: string;
  name: string;
  description: string | null;
  device_type: string | null;
  is_active: number;
  firmware_version: string | null;
  /** JSON object. */
  metadata: string;
  /** MQTT username and client id: unique across the broker, unlike `device_id`. */
  mqtt_username: string;
  /** SHA-256 of the generated password (high-entropy, so a slow hash adds nothing). */
  mqtt_password_hash: string;
  is_online: number;
  last_seen: number | null;
  created_at: number;
  updated_at: number;
  /** The profile last applied (null: none, or it was deleted). */
  profile_id: string | null;
  /** Latest `battery` / `rssi` telemetry, kept on the row so lists need no telemetry read. */
  battery_level: number | null;
  signal_strength: number | null;
  last_telemetry_at: number | null;
}

export interface IotDeviceTagsTable {
  device_pk: string;
  tag: string;
  /** Order of adding (timestamps tie within one request). */
  position: number;
  created_at: number;
}

/** One telemetry value; exactly one of the value columns is set. */
export interface IotTelemetryTable {
  device_pk: string;
  key: string;
  ts: number;
  value_num: number | null;
  value_bool: number | null;
  value_text: string | null;
}

export interface IotGroupsTable {
  id: string;
  customer_id: string;
  name: string;
  description: string | null;
  color: string | null;
  created_at: number;
  updated_at: number;
}

export interface IotGroupMembersTable {
  group_id: string;
  device_pk: string;
}

export interface IotTables extends IotCatalogueTables, IotAlarmTables {
  iot_groups: IotGroupsTable;
  iot_group_members: IotGroupMembersTable;
  iot_telemetry: IotTelemetryTable;
  iot_devices: IotDevicesTable;
  iot_device_tags: IotDeviceTagsTable;
}

export const iotMigrations: Record<string, Migration> = {
  '2026-11-25-0150-iot-devices': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('iot_devices')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('device_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('device_type', 'text')
        .addColumn('is_active', 'integer', (c) => c.notNull())
        .addColumn('firmware_version', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('mqtt_username', 'text', (c) => c.notNull().unique())
        .addColumn('mqtt_password_hash', 'text', (c) => c.notNull())
        .addColumn('is_online', 'integer', (c) => c.notNull())
        .addColumn('last_seen', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('iot_devices_customer_device')
        .on('iot_devices')
        .columns(['customer_id', 'device_id'])
        .unique()
        .execute();
      await db.schema
        .createTable('iot_device_tags')
        .addColumn('device_pk', 'text', (c) => c.notNull().references('iot_devices.id').onDelete('cascade'))
        .addColumn('tag', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('iot_device_tags_pk', ['device_pk', 'tag'])
        .execute();
      await db.schema.createIndex('iot_device_tags_tag').on('iot_device_tags').columns(['tag']).execute();
    },
  },
  '2026-11-25-0200-iot-telemetry': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('iot_telemetry')
        .addColumn('device_pk', 'text', (c) => c.notNull().references('iot_devices.id').onDelete('cascade'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('ts', 'bigint', (c) => c.notNull())
        .addColumn('value_num', 'double precision')
        .addColumn('value_bool', 'integer')
        .addColumn('value_text', 'text')
        .execute();
      await db.schema
        .createIndex('iot_telemetry_device_key_ts')
        .on('iot_telemetry')
        .columns(['device_pk', 'key', 'ts'])
        .execute();
    },
  },
  '2026-11-25-0210-iot-groups': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('iot_groups')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('color', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('iot_groups_customer')
        .on('iot_groups')
        .columns(['customer_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('iot_group_members')
        .addColumn('group_id', 'text', (c) => c.notNull().references('iot_groups.id').onDelete('cascade'))
        .addColumn('device_pk', 'text', (c) => c.notNull().references('iot_devices.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('iot_group_members_pk', ['group_id', 'device_pk'])
        .execute();
      await db.schema
        .createIndex('iot_group_members_device')
        .on('iot_group_members')
        .columns(['device_pk'])
        .execute();
    },
  },
};
