import type { IotTelemetryTable } from './migrations.js';

/** Keys and string values longer than this are refused: a device cannot fill the store with one point. */
const MAX_KEY = 64;
const MAX_TEXT = 1024;
/** Points one message may carry. */
export const MAX_POINTS_PER_MESSAGE = 500;

export type TelemetryValue = number | boolean | string;
export interface TelemetryPoint {
  key: string;
  ts: number;
  value: TelemetryValue;
}

/**
 * Reads a telemetry payload, in the shapes ThingsBoard devices send: a JSON object of key →
 * value (time of arrival), `{ts, values}` (ts in epoch milliseconds), or an array of either.
 * Values are numbers, booleans or strings; anything else in a message makes the whole message
 * malformed (null), so a device learns of a mistake instead of losing part of a message quietly.
 */
export function parseTelemetry(payload: Buffer, now: number): TelemetryPoint[] | null {
  let doc: unknown;
  try {
    doc = JSON.parse(payload.toString('utf8'));
  } catch {
    return null;
  }
  const out: TelemetryPoint[] = [];
  if (Array.isArray(doc)) {
    for (const entry of doc) if (!pointsOf(entry, now, out)) return null;
  } else if (!pointsOf(doc, now, out)) return null;
  return out.length > 0 && out.length <= MAX_POINTS_PER_MESSAGE ? out : null;
}

/**
 * Appends one entry's points to `out` (a plain object of values, or `{ts, values}`); false when
 * the entry is malformed. Reads the keys with for…in (JSON.parse makes only own, enumerable
 * properties): this runs for every message, and Object.entries made an array per key.
 */
function pointsOf(entry: unknown, now: number, out: TelemetryPoint[]): boolean {
  if (!isObject(entry)) return false;
  const timed = 'ts' in entry && 'values' in entry;
  const ts = timed ? entry['ts'] : now;
  const values = timed ? entry['values'] : entry;
  if (typeof ts !== 'number' || !Number.isSafeInteger(ts) || ts < 0 || !isObject(values)) return false;
  for (const key in values) {
    const value = values[key];
    if (key.length === 0 || key.length > MAX_KEY) return false;
    if (
      typeof value === 'number'
        ? !Number.isFinite(value)
        : typeof value === 'string'
          ? value.length > MAX_TEXT
          : typeof value !== 'boolean'
    )
      return false;
    out.push({ key, ts, value: value as TelemetryValue });
  }
  return true;
}

export function pointValue(
  row: Pick<IotTelemetryTable, 'value_num' | 'value_bool' | 'value_text'>,
): TelemetryValue {
  if (row.value_num !== null) return Number(row.value_num);
  if (row.value_bool !== null) return row.value_bool === 1;
  return row.value_text ?? '';
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
