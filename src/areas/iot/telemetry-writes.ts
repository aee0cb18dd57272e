import type { Kysely } from 'kysely';
import { runCompiled } from '../../kernel/store/compiled.js';
import type { ActivitySummary, IngestItem } from './activity.js';
import { BATTERY_KEYS, hourOf, SIGNAL_KEYS } from './activity.js';

/**
 * The group commit's writes for a batch of telemetry messages, as SQL text written once.
 *
 * Built through Kysely, a batch cost more than SQLite's own work: every row became frozen
 * operation nodes compiled into a fresh text (and a fresh prepared statement for each new row
 * count), and each device's counter upsert and latest-state update was built and compiled again
 * in every batch. Under a broker load that was about half of the CPU spent per message, and most
 * of its garbage. Rows now go in chunks of a few fixed sizes, so the statements are prepared once
 * and reused, and the per-device statements are one text each.
 */

/** Rows per insert statement, largest first: any count is a sum of these with few statements. */
const CHUNKS = [256, 64, 16, 4, 1];

const INSERT_POINTS = new Map(
  CHUNKS.map((size) => [
    size,
    'INSERT INTO "iot_telemetry" ("device_pk", "key", "ts", "value_num", "value_bool", "value_text") VALUES ' +
      Array.from({ length: size }, () => '(?, ?, ?, ?, ?, ?)').join(', '),
  ]),
);

const BUMP_HOUR =
  'INSERT INTO "iot_device_hours" ("device_pk", "hour", "messages", "points", "rejected", "connects") ' +
  'VALUES (?, ?, ?, ?, ?, 0) ON CONFLICT ("device_pk", "hour") DO UPDATE SET ' +
  '"messages" = "iot_device_hours"."messages" + excluded."messages", ' +
  '"points" = "iot_device_hours"."points" + excluded."points", ' +
  '"rejected" = "iot_device_hours"."rejected" + excluded."rejected"';

// A battery or signal value the batch did not carry keeps the stored one (the parameter is NULL).
const LATEST =
  'UPDATE "iot_devices" SET "last_telemetry_at" = ?, "last_seen" = ?, ' +
  '"battery_level" = COALESCE(?, "battery_level"), "signal_strength" = COALESCE(?, "signal_strength") ' +
  'WHERE "id" = ?';

type HourCounts = { device_pk: string; hour: number } & Omit<ActivitySummary, 'connects'>;

// biome-ignore lint/suspicious/noExplicitAny: a unit's transaction over any table set
type Db = Kysely<any>;

/**
 * Writes a batch of messages in the caller's transaction: points, hourly counters, latest state.
 * The points' statement parameters are written straight from the messages (no row object per
 * point): this runs for every message a broker stores.
 */
export async function writeTelemetryBatch(db: Db, items: readonly IngestItem[]): Promise<void> {
  await insertPoints(db, items);

  // By device, then hour: a batch rarely spans two hours, and a key string per message was garbage.
  const hours = new Map<string, Map<number, HourCounts>>();
  const latest = new Map<string, { at: number; battery: number | null; signal: number | null }>();
  for (const item of items) {
    const hour = hourOf(item.at);
    let byHour = hours.get(item.device_pk);
    if (!byHour) {
      byHour = new Map();
      hours.set(item.device_pk, byHour);
    }
    let h = byHour.get(hour);
    if (!h) {
      h = { device_pk: item.device_pk, hour, messages: 0, points: 0, rejected: 0 };
      byHour.set(hour, h);
    }
    h.messages++;
    h.points += item.points.length;
    h.rejected += item.rejected;
    let l = latest.get(item.device_pk);
    if (!l) {
      l = { at: item.at, battery: null, signal: null };
      latest.set(item.device_pk, l);
    }
    if (item.at > l.at) l.at = item.at;
    // In arrival order, so the newest value of the batch wins.
    for (const p of item.points) {
      if (typeof p.value !== 'number') continue;
      if (BATTERY_KEYS.includes(p.key)) l.battery = Math.round(p.value);
      if (SIGNAL_KEYS.includes(p.key)) l.signal = Math.round(p.value);
    }
  }
  for (const byHour of hours.values())
    for (const h of byHour.values())
      await runCompiled(db, BUMP_HOUR, [h.device_pk, h.hour, h.messages, h.points, h.rejected]);
  for (const [pk, l] of latest) await runCompiled(db, LATEST, [l.at, l.at, l.battery, l.signal, pk]);
}

/** Inserts every item's points in order, in statements of the fixed sizes of CHUNKS. */
async function insertPoints(db: Db, items: readonly IngestItem[]): Promise<void> {
  let left = 0;
  for (const item of items) left += item.points.length;
  let item = 0;
  let point = 0;
  for (const size of CHUNKS)
    for (; left >= size; left -= size) {
      const parameters: unknown[] = new Array(size * 6);
      for (let i = 0; i < size * 6; ) {
        while (point >= items[item]!.points.length) {
          item++;
          point = 0;
        }
        const { device_pk } = items[item]!;
        const { key, ts, value } = items[item]!.points[point++]!;
        parameters[i++] = device_pk;
        parameters[i++] = key;
        parameters[i++] = ts;
        // The value in the one column of its type (`pointValue` in telemetry.ts reads it back).
        parameters[i++] = typeof value === 'number' ? value : null;
        parameters[i++] = typeof value === 'boolean' ? (value ? 1 : 0) : null;
        parameters[i++] = typeof value === 'string' ? value : null;
      }
      await runCompiled(db, INSERT_POINTS.get(size)!, parameters);
    }
}
