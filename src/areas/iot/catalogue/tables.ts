import type { Kysely, Migration } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

export type DatapointType = 'number' | 'integer' | 'boolean' | 'string';

/** What a telemetry key means and which values it may take, per customer. */
export interface IotDatapointsTable {
  id: string;
  customer_id: string;
  key: string;
  name: string;
  unit: string | null;
  data_type: DatapointType;
  min: number | null;
  max: number | null;
  decimals: number | null;
  description: string | null;
  created_at: number;
  updated_at: number;
}

/** Defaults a device takes when the profile is applied to it. */
export interface IotProfilesTable {
  id: string;
  customer_id: string;
  name: string;
  description: string | null;
  device_type: string | null;
  /** JSON object merged under the device's own metadata. */
  default_metadata: string;
  /** JSON array of datapoint keys the devices of this profile report. */
  datapoint_keys: string;
  created_at: number;
  updated_at: number;
}

/**
 * Per device and hour: what the broker saw. Written once per group commit (not per message), so
 * `messages_24h`, stability and monthly usage are sums over a few rows.
 */
export interface IotDeviceHoursTable {
  device_pk: string;
  /** Epoch milliseconds of the start of the hour (UTC). */
  hour: number;
  messages: number;
  points: number;
  rejected: number;
  connects: number;
}

/** One MQTT session of a device: uptime is the part of a window these cover. */
export interface IotDeviceSessionsTable {
  id: string;
  device_pk: string;
  connected_at: number;
  disconnected_at: number | null;
}

export interface IotCatalogueTables {
  iot_datapoints: IotDatapointsTable;
  iot_profiles: IotProfilesTable;
  iot_device_hours: IotDeviceHoursTable;
  iot_device_sessions: IotDeviceSessionsTable;
}

export const iotCatalogueMigrations: Record<string, Migration> = {
  '2026-11-26-0100-iot-catalogue': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('iot_datapoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('unit', 'text')
        .addColumn('data_type', 'text', (c) => c.notNull())
        .addColumn('min', 'double precision')
        .addColumn('max', 'double precision')
        .addColumn('decimals', 'integer')
        .addColumn('description', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('iot_datapoints_customer_key')
        .on('iot_datapoints')
        .columns(['customer_id', 'key'])
        .unique()
        .execute();
      await db.schema
        .createTable('iot_profiles')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('device_type', 'text')
        .addColumn('default_metadata', 'text', (c) => c.notNull())
        .addColumn('datapoint_keys', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('iot_profiles_customer_name')
        .on('iot_profiles')
        .columns(['customer_id', 'name'])
        .unique()
        .execute();
      await db.schema.alterTable('iot_devices').addColumn('profile_id', 'text').execute();
      await db.schema.alterTable('iot_devices').addColumn('battery_level', 'integer').execute();
      await db.schema.alterTable('iot_devices').addColumn('signal_strength', 'integer').execute();
      await db.schema.alterTable('iot_devices').addColumn('last_telemetry_at', 'bigint').execute();
      await db.schema
        .createTable('iot_device_hours')
        .addColumn('device_pk', 'text', (c) => c.notNull().references('iot_devices.id').onDelete('cascade'))
        .addColumn('hour', 'bigint', (c) => c.notNull())
        .addColumn('messages', 'integer', (c) => c.notNull())
        .addColumn('points', 'integer', (c) => c.notNull())
        .addColumn('rejected', 'integer', (c) => c.notNull())
        .addColumn('connects', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('iot_device_hours_pk', ['device_pk', 'hour'])
        .execute();
      await db.schema
        .createTable('iot_device_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('device_pk', 'text', (c) => c.notNull().references('iot_devices.id').onDelete('cascade'))
        .addColumn('connected_at', 'bigint', (c) => c.notNull())
        .addColumn('disconnected_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('iot_device_sessions_device')
        .on('iot_device_sessions')
        .columns(['device_pk', 'connected_at'])
        .execute();
      await db.schema.createIndex('iot_telemetry_ts').on('iot_telemetry').columns(['ts']).execute();
    },
  },
};
