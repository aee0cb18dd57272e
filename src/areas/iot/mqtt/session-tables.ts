import type { Kysely, Migration } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

/**
 * The broker's own state, kept so that a restart (or a kill -9) loses nothing a device relies on:
 * retained messages, persistent sessions' subscriptions, the QoS 1/2 messages queued for them, the
 * inbound QoS 2 messages awaiting PUBREL, and wills. Packets are JSON with their byte fields in
 * base64 (packet-codec.ts). Rows are keyed by MQTT client id (a device's username), not by device
 * row: a session outlives nothing, but a device's deletion must not have to wait on the broker.
 */
export interface MqttRetainedTable {
  topic: string;
  /** The device username the topic lies under (`devices/<owner>/…`); '' for other topics. */
  owner: string;
  packet: string;
}

export interface MqttSubscriptionsTable {
  client_id: string;
  topic: string;
  /** JSON: {qos, rh, rap, nl, subscriptionIdentifier?}. */
  options: string;
}

export interface MqttOutgoingTable {
  client_id: string;
  /** Queue order within the client (a process-wide counter, continued from the store at start). */
  seq: number;
  broker_id: string;
  broker_counter: number;
  /** The packet id given when the message was sent; null while it waits. */
  message_id: number | null;
  packet: string;
}

export interface MqttIncomingTable {
  client_id: string;
  message_id: number;
  packet: string;
}

export interface MqttWillsTable {
  client_id: string;
  broker_id: string;
  packet: string;
}

/**
 * MQTT 5 sessions that end on their own (a Session Expiry Interval above 0): the interval, and
 * the time the session ends while no connection holds it (null while one does). Kept so that a
 * restart or a kill -9 neither forgets the deadline nor keeps the session forever.
 */
export interface MqttSessionExpiryTable {
  client_id: string;
  interval_s: number;
  /** Epoch milliseconds; null while connected. */
  expires_at: number | null;
}

export interface MqttSessionTables {
  iot_mqtt_retained: MqttRetainedTable;
  iot_mqtt_subscriptions: MqttSubscriptionsTable;
  iot_mqtt_outgoing: MqttOutgoingTable;
  iot_mqtt_incoming: MqttIncomingTable;
  iot_mqtt_wills: MqttWillsTable;
  iot_mqtt_session_expiry: MqttSessionExpiryTable;
}

export const MQTT_SESSION_TABLES = [
  'iot_mqtt_retained',
  'iot_mqtt_subscriptions',
  'iot_mqtt_outgoing',
  'iot_mqtt_incoming',
  'iot_mqtt_wills',
  'iot_mqtt_session_expiry',
] as const;

export const mqttSessionMigrations: Record<string, Migration> = {
  '2026-11-29-0430-iot-mqtt-sessions': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('iot_mqtt_retained')
        .addColumn('topic', 'text', (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('packet', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('iot_mqtt_subscriptions')
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('topic', 'text', (c) => c.notNull())
        .addColumn('options', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('iot_mqtt_subscriptions_pk', ['client_id', 'topic'])
        .execute();
      await db.schema
        .createTable('iot_mqtt_outgoing')
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('broker_id', 'text', (c) => c.notNull())
        .addColumn('broker_counter', 'bigint', (c) => c.notNull())
        .addColumn('message_id', 'integer')
        .addColumn('packet', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('iot_mqtt_outgoing_pk', ['client_id', 'seq'])
        .execute();
      await db.schema
        .createTable('iot_mqtt_incoming')
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('message_id', 'integer', (c) => c.notNull())
        .addColumn('packet', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('iot_mqtt_incoming_pk', ['client_id', 'message_id'])
        .execute();
      await db.schema
        .createTable('iot_mqtt_wills')
        .addColumn('client_id', 'text', (c) => c.primaryKey())
        .addColumn('broker_id', 'text', (c) => c.notNull())
        .addColumn('packet', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '2026-11-29-1100-iot-mqtt-session-expiry': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('iot_mqtt_session_expiry')
        .addColumn('client_id', 'text', (c) => c.primaryKey())
        .addColumn('interval_s', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .execute();
    },
  },
};
