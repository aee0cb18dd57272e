import { DAY_MS } from './activity.js';
import { iotErrors } from './errors.js';
import type { IotService } from './service.js';
import { pointValue } from './telemetry.js';

/** Aggregated telemetry answers at most this many intervals per key. */
const MAX_BUCKETS = 10_000;

export interface TelemetryRequest {
  keys?: string[];
  from?: number;
  to?: number;
  limit: number;
  aggregation?: 'none' | 'avg' | 'min' | 'max' | 'sum' | 'count';
  /** Seconds per bucket (aggregations only). */
  interval?: number;
}

/** Reads of stored telemetry: raw points, aggregates per interval, the newest value per key. */
export class TelemetryQueries {
  constructor(private readonly iot: IotService) {}

  /**
   * Raw points newest first, or with an aggregation each key's points grouped in buckets of
   * `interval` seconds between `from` and `to` (default: the 24 hours up to now).
   */
  async telemetry(customerId: string, deviceId: string, q: TelemetryRequest) {
    const row = await this.iot.row(customerId, deviceId);
    if (q.aggregation && q.aggregation !== 'none') {
      const to = q.to ?? this.iot.now();
      const from = q.from ?? to - DAY_MS;
      const intervalMs = (q.interval ?? 3600) * 1000;
      if (from > to) throw iotErrors.badWindow('from is after to');
      if ((to - from) / intervalMs > MAX_BUCKETS)
        throw iotErrors.badWindow(`from–to holds more than ${MAX_BUCKETS} intervals; widen interval`);
      const rows = await this.iot.repo.aggregate(row.id, { ...q, from, to, intervalMs, fn: q.aggregation });
      return {
        device_id: deviceId,
        aggregation: q.aggregation,
        interval: intervalMs / 1000,
        points: rows.map((r) => ({
          key: r.key,
          ts: new Date(Number(r.bucket)).toISOString(),
          value: r.value === null ? null : Number(r.value),
          count: Number(r.n),
        })),
      };
    }
    const points = await this.iot.repo.telemetry(row.id, q);
    return {
      device_id: deviceId,
      aggregation: 'none' as const,
      interval: null,
      points: points.map((p) => ({
        key: p.key,
        ts: new Date(Number(p.ts)).toISOString(),
        value: pointValue(p),
        count: 1,
      })),
    };
  }

  async latest(customerId: string, deviceId: string) {
    const row = await this.iot.row(customerId, deviceId);
    const values: Record<string, { value: number | boolean | string; ts: string }> = {};
    for (const p of await this.iot.repo.latest(row.id))
      values[p.key] ??= { value: pointValue(p), ts: new Date(Number(p.ts)).toISOString() };
    return { device_id: deviceId, values };
  }
}
