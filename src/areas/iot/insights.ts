import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import { type ActivityRepo, DAY_MS } from './activity.js';
import { stabilityScore } from './device-view.js';
import type { IotRepo } from './repo.js';
import type { IotService, MqttAddress } from './service.js';

export type Severity = 'critical' | 'major' | 'minor' | 'warning';

/** What the alarms part tells the device side (set once the alarms part is wired). */
export interface AlarmFacts {
  openSeverities(devicePk: string): Promise<Severity[]>;
  counts(
    customerId: string,
    monthStart: number,
  ): Promise<{
    active: number;
    acknowledged: number;
    rules: number;
    rules_enabled: number;
    notifications_this_month: number;
  }>;
}

/** What the broker of this process knows (null when this process runs no broker). */
export interface BrokerFacts {
  connected(): number;
  malformed(): number;
}

const BURDEN: Record<Severity, number> = { critical: 40, major: 25, minor: 10, warning: 5 };
/** Minutes since the last telemetry → freshness; older than the last step scores 0. */
const FRESHNESS_STEPS: [number, number][] = [
  [5, 100],
  [15, 80],
  [60, 60],
  [360, 30],
  [1440, 10],
];

/** Health, usage and statistics: read-only views over devices, counters and alarms. */
export class IotInsights {
  private readonly repo: IotRepo;
  private readonly activity: ActivityRepo;
  alarms: AlarmFacts | null = null;

  constructor(
    private readonly iot: IotService,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly mqtt: MqttAddress,
    private readonly broker: () => BrokerFacts | null,
  ) {
    this.repo = iot.repo;
    this.activity = iot.activity;
  }

  /** Ports of MQTT over TLS and over WebSocket (null: not served); set where the broker is wired. */
  listenerPorts: () => { mqtts: number | null; websocket: number | null } = () => ({
    mqtts: null,
    websocket: null,
  });

  /** How devices reach the broker; no device's secret is in it. */
  connectionInfo() {
    const host = this.mqtt.host();
    const port = this.mqtt.port();
    return {
      host,
      ports: { mqtt: port, ...this.listenerPorts() },
      protocol: 'MQTT 3.1.1',
      client_id: 'the device’s MQTT username',
      topics: {
        telemetry: 'devices/{username}/telemetry',
        attributes: 'devices/{username}/attributes',
        commands: 'devices/{username}/commands',
        own_tree: 'devices/{username}/#',
      },
      example: `mosquitto_pub -h ${host} -p ${port} -V mqttv311 -i <username> -u <username> -P <password> -q 1 -t 'devices/<username>/telemetry' -m '{"temperature": 21.5}'`,
    };
  }

  async subscription(customerId: string) {
    const plan = await this.plan(customerId);
    return {
      plan,
      device_limit: this.limits.of('iot.devices', plan),
      devices: await this.repo.countDevices(customerId),
      group_limit: this.limits.of('iot.groups', plan),
      rule_limit: this.limits.of('iot.rules', plan),
      telemetry_retention_days: this.limits.of('iot.telemetry_retention_days', plan),
    };
  }

  /** This calendar month (UTC) so far. */
  async usage(customerId: string) {
    const now = this.clock.nowMs();
    const d = new Date(now);
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    const totals = await this.activity.customerTotals(customerId, start);
    const alarms = await this.alarms?.counts(customerId, start);
    const plan = await this.plan(customerId);
    return {
      period_start: new Date(start).toISOString(),
      period_end: new Date(end).toISOString(),
      plan,
      devices: await this.repo.countDevices(customerId),
      device_limit: this.limits.of('iot.devices', plan),
      messages: totals.messages,
      points_stored: totals.points,
      points_rejected: totals.rejected,
      stored_points: await this.activity.storedPoints(customerId),
      telemetry_retention_days: this.limits.of('iot.telemetry_retention_days', plan),
      notifications: alarms?.notifications_this_month ?? 0,
    };
  }

  async stats(customerId: string) {
    const now = this.clock.nowMs();
    const counts = await this.repo.deviceCounts(customerId);
    const day = await this.activity.customerTotals(customerId, now - DAY_MS);
    const alarms = await this.alarms?.counts(customerId, now);
    const broker = this.broker();
    return {
      devices: counts,
      last_24h: {
        messages: day.messages,
        points: day.points,
        points_rejected: day.rejected,
        connects: day.connects,
      },
      alarms: { active: alarms?.active ?? 0, acknowledged: alarms?.acknowledged ?? 0 },
      rules: { total: alarms?.rules ?? 0, enabled: alarms?.rules_enabled ?? 0 },
      broker: broker
        ? { connected_here: broker.connected(), malformed_messages_here: broker.malformed() }
        : null,
      checked_at: new Date(now).toISOString(),
    };
  }

  /**
   * A score from four components, each 0-100 (formulas in docs/iot.md): uptime over 24 h,
   * alarm burden, connection stability and telemetry freshness.
   */
  async health(customerId: string, deviceId: string) {
    const row = await this.iot.row(customerId, deviceId);
    const now = this.clock.nowMs();
    const since = Math.max(now - DAY_MS, Number(row.created_at));
    const sessions = await this.activity.sessionsSince(row.id, since);
    const lastSeen = row.last_seen === null ? null : Number(row.last_seen);
    let covered = 0;
    for (const s of sessions) {
      // A session left open by a crash ends at the last time the device was heard from.
      const end =
        s.disconnected_at !== null
          ? Number(s.disconnected_at)
          : row.is_online === 1
            ? now
            : (lastSeen ?? now);
      covered += Math.max(0, Math.min(end, now) - Math.max(Number(s.connected_at), since));
    }
    const window = Math.max(1, now - since);
    const uptime = Math.min(100, Math.round((100 * covered) / window));
    const severities = (await this.alarms?.openSeverities(row.id)) ?? [];
    const alarmBurden = Math.max(0, 100 - severities.reduce((sum, s) => sum + BURDEN[s], 0));
    const connects = (await this.activity.summaries([row.id], now - DAY_MS)).get(row.id)?.connects ?? 0;
    const stability = lastSeen === null ? 0 : stabilityScore(connects);
    const lastTelemetry = row.last_telemetry_at === null ? null : Number(row.last_telemetry_at);
    const ageMinutes = lastTelemetry === null ? Number.POSITIVE_INFINITY : (now - lastTelemetry) / 60_000;
    const freshness = FRESHNESS_STEPS.find(([limit]) => ageMinutes <= limit)?.[1] ?? 0;
    const score = Math.round(0.3 * uptime + 0.3 * alarmBurden + 0.2 * stability + 0.2 * freshness);
    const status =
      lastSeen === null
        ? 'unknown'
        : row.is_online !== 1
          ? 'offline'
          : score >= 80
            ? 'healthy'
            : score >= 50
              ? 'degraded'
              : 'unhealthy';
    return {
      device_id: row.device_id,
      health_score: score,
      health_status: status as 'healthy' | 'degraded' | 'unhealthy' | 'offline' | 'unknown',
      components: {
        uptime,
        alarm_burden: alarmBurden,
        connection_stability: stability,
        telemetry_freshness: freshness,
      },
      checked_at: new Date(now).toISOString(),
    };
  }

  private async plan(customerId: string) {
    return (await this.identity.getCustomer(customerId))?.plan ?? 'free';
  }
}
