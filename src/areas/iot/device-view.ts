import type { ActivitySummary } from './activity.js';
import type { IotDevicesTable } from './migrations.js';

/** The record every device answer uses; activity is the last 24 h of counters. */
export function deviceView(row: IotDevicesTable, tags: string[], activity: ActivitySummary | undefined) {
  return {
    device_id: row.device_id,
    name: row.name,
    description: row.description,
    device_type: row.device_type,
    is_active: row.is_active === 1,
    is_online: row.is_online === 1,
    last_seen: row.last_seen === null ? null : new Date(Number(row.last_seen)).toISOString(),
    connection_status: row.is_online === 1 ? ('connected' as const) : ('disconnected' as const),
    stability_score: row.last_seen === null ? null : stabilityScore(activity?.connects ?? 0),
    firmware_version: row.firmware_version,
    tags,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    messages_24h: activity?.messages ?? 0,
    battery_level: row.battery_level === null ? null : Number(row.battery_level),
    signal_strength: row.signal_strength === null ? null : Number(row.signal_strength),
    created_at: new Date(Number(row.created_at)).toISOString(),
  };
}

/**
 * 100 for a device that connected at most once in the last 24 h, 10 less for each reconnect
 * after that (a device that reconnects ten times a day scores 0).
 */
export const stabilityScore = (connects24h: number): number =>
  Math.max(0, 100 - 10 * Math.max(0, connects24h - 1));
