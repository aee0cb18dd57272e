import type { Kysely } from 'kysely';
import { newId } from '../../kernel/ids.js';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type { IotTables } from './migrations.js';
import type { TelemetryPoint } from './telemetry.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
export const hourOf = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

/** Telemetry keys whose newest value becomes the device's `battery_level` / `signal_strength`. */
export const BATTERY_KEYS = ['battery', 'battery_level'];
export const SIGNAL_KEYS = ['rssi', 'signal_strength'];

/** One accepted MQTT telemetry message, as the group commit writes it. */
export interface IngestItem {
  device_pk: string;
  /** Fjord's time of arrival (counters are kept by the hour of arrival). */
  at: number;
  /** The message's accepted points, written as rows of iot_telemetry. */
  points: readonly TelemetryPoint[];
  rejected: number;
}

export interface ActivitySummary {
  messages: number;
  points: number;
  rejected: number;
  connects: number;
}

/**
 * What the broker saw of each device: hourly counters (messages, points, rejected points,
 * connects) and sessions. Counters are written once per group commit, never once per message.
 */
export class ActivityRepo {
  constructor(readonly db: Kysely<IotTables>) {}
  static of(store: Store) {
    return new ActivityRepo(store.typed<IotTables>());
  }
  static over(tx: AnyDb) {
    return new ActivityRepo(tx);
  }

  /** Adds to an hour's counters (one row per device and hour). */
  async bump(h: { device_pk: string; hour: number } & ActivitySummary) {
    await this.db
      .insertInto('iot_device_hours')
      .values(h)
      .onConflict((oc) =>
        oc.columns(['device_pk', 'hour']).doUpdateSet((eb) => ({
          messages: eb('iot_device_hours.messages', '+', eb.ref('excluded.messages')),
          points: eb('iot_device_hours.points', '+', eb.ref('excluded.points')),
          rejected: eb('iot_device_hours.rejected', '+', eb.ref('excluded.rejected')),
          connects: eb('iot_device_hours.connects', '+', eb.ref('excluded.connects')),
        })),
      )
      .execute();
  }

  /** Counter sums since `since`, per device (devices with no activity are absent). */
  async summaries(devicePks: string[], since: number): Promise<Map<string, ActivitySummary>> {
    const out = new Map<string, ActivitySummary>();
    if (devicePks.length === 0) return out;
    const rows = await this.db
      .selectFrom('iot_device_hours')
      .select((eb) => [
        'device_pk',
        eb.fn.sum<number>('messages').as('messages'),
        eb.fn.sum<number>('points').as('points'),
        eb.fn.sum<number>('rejected').as('rejected'),
        eb.fn.sum<number>('connects').as('connects'),
      ])
      .where('device_pk', 'in', devicePks)
      .where('hour', '>=', hourOf(since))
      .groupBy('device_pk')
      .execute();
    for (const r of rows)
      out.set(r.device_pk, {
        messages: Number(r.messages),
        points: Number(r.points),
        rejected: Number(r.rejected),
        connects: Number(r.connects),
      });
    return out;
  }

  /** Sums over all of a customer's devices since `since`. */
  async customerTotals(customerId: string, since: number): Promise<ActivitySummary> {
    const r = await this.db
      .selectFrom('iot_device_hours as h')
      .innerJoin('iot_devices as d', 'd.id', 'h.device_pk')
      .select((eb) => [
        eb.fn.sum<number>('h.messages').as('messages'),
        eb.fn.sum<number>('h.points').as('points'),
        eb.fn.sum<number>('h.rejected').as('rejected'),
        eb.fn.sum<number>('h.connects').as('connects'),
      ])
      .where('d.customer_id', '=', customerId)
      .where('h.hour', '>=', hourOf(since))
      .executeTakeFirst();
    return {
      messages: Number(r?.messages ?? 0),
      points: Number(r?.points ?? 0),
      rejected: Number(r?.rejected ?? 0),
      connects: Number(r?.connects ?? 0),
    };
  }

  async openSession(devicePk: string, at: number) {
    // A session a crash left open ends where the new one starts.
    await this.closeSessions(devicePk, at);
    await this.db
      .insertInto('iot_device_sessions')
      .values({ id: newId(), device_pk: devicePk, connected_at: at, disconnected_at: null })
      .execute();
    await this.bump({
      device_pk: devicePk,
      hour: hourOf(at),
      messages: 0,
      points: 0,
      rejected: 0,
      connects: 1,
    });
  }

  async closeSessions(devicePk: string, at: number) {
    await this.db
      .updateTable('iot_device_sessions')
      .set({ disconnected_at: at })
      .where('device_pk', '=', devicePk)
      .where('disconnected_at', 'is', null)
      .execute();
  }

  /** Sessions that overlap [from, ∞). */
  sessionsSince(devicePk: string, from: number) {
    return this.db
      .selectFrom('iot_device_sessions')
      .select(['connected_at', 'disconnected_at'])
      .where('device_pk', '=', devicePk)
      .where((eb) => eb.or([eb('disconnected_at', 'is', null), eb('disconnected_at', '>=', from)]))
      .execute();
  }

  async storedPoints(customerId: string): Promise<number> {
    const r = await this.db
      .selectFrom('iot_telemetry as t')
      .innerJoin('iot_devices as d', 'd.id', 't.device_pk')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('d.customer_id', '=', customerId)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /** Deletes a customer's points older than `before`; answers how many went. */
  async prune(customerId: string, before: number): Promise<number> {
    const r = await this.db
      .deleteFrom('iot_telemetry')
      .where('ts', '<', before)
      .where('device_pk', 'in', (eb) =>
        eb.selectFrom('iot_devices').select('id').where('customer_id', '=', customerId),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async pruneCounters(before: number) {
    await this.db.deleteFrom('iot_device_hours').where('hour', '<', before).execute();
    await this.db.deleteFrom('iot_device_sessions').where('disconnected_at', '<', before).execute();
  }
}
