/**
 * The table of limits and plan quotas: every count or size Fjord refuses to go past, with the
 * value per plan where plans differ. The code that enforces a limit and the code that publishes
 * it (guides, subscription and quota endpoints, docs/limits.md) both read it from here, so they
 * cannot disagree. FJORD_LIMITS overrides rows (docs/configuration.md); the operator changes a
 * customer's plan through `PUT /admin/v1/customers/{id}/plan` or `fjord admin customer plan`.
 *
 * `null` means unlimited ("custom" in the published plan table: an operator sets a number).
 */

export const PLANS = ['free', 'basic', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export type LimitValue = number | null;
export type PerPlan = Record<Plan, LimitValue>;

export interface LimitRow {
  /** What is counted or measured, and per what. */
  doc: string;
  /** The unit of the value, when it is not a count. */
  unit?: 'bytes' | 'megabytes' | 'seconds' | 'days' | 'requests';
  /** One value for every plan, or a value per plan. */
  value: LimitValue | PerPlan;
}

const GB = 1000 ** 3;
const perPlan = (free: LimitValue, basic: LimitValue, pro: LimitValue, enterprise: LimitValue): PerPlan => ({
  free,
  basic,
  pro,
  enterprise,
});

export const DEFAULT_LIMITS = {
  // Object storage
  'storage.buckets': { doc: 'Buckets per customer (ours)', value: 1000 },
  'storage.keys_per_bucket': { doc: 'Access keys per bucket', value: 100 },
  'storage.account_keys': { doc: 'Account-wide storage access keys per customer', value: 100 },
  'storage.bytes': {
    doc: 'Bytes stored per customer, all buckets',
    unit: 'bytes',
    value: perPlan(10 * GB, 100 * GB, 1000 * GB, null),
  },
  'storage.bandwidth_bytes_per_month': {
    doc: 'Bytes downloaded per customer per calendar month',
    unit: 'bytes',
    value: perPlan(50 * GB, 500 * GB, 5000 * GB, null),
  },
  'storage.upload_bytes': { doc: 'Size of one upload', unit: 'bytes', value: 50 * GB },
  'storage.connections_per_key': { doc: 'Concurrent S3 connections per access key', value: 100 },
  'storage.cors_rules': { doc: 'CORS rules per bucket', value: 100 },
  'storage.kms_keys': { doc: 'SSE-KMS keys per customer', value: perPlan(5, 20, 100, 1000) },
  // Databases
  'databases.count': { doc: 'Databases per customer', value: perPlan(3, 10, 50, 100) },
  'databases.size_mb': {
    doc: 'Size of one database',
    unit: 'megabytes',
    value: perPlan(1024, 10 * 1024, 100 * 1024, 1024 * 1024),
  },
  'databases.snapshots_per_database': { doc: 'Snapshots per database', value: perPlan(5, 10, 30, 100) },
  'databases.firewall_rules': { doc: 'Firewall rules per database', value: 50 },
  'databases.connections': { doc: 'Connections per database', value: 100 },
  // DNS
  'dns.zones': { doc: 'DNS zones per customer', value: perPlan(3, 10, 50, null) },
  'dns.records_per_zone': { doc: 'Records per zone', value: perPlan(100, 500, 2000, null) },
  'dns.queries_per_month': {
    doc: 'DNS queries answered per customer per calendar month',
    value: perPlan(1_000_000, 10_000_000, 100_000_000, null),
  },
  'dns.batch_records': { doc: 'Record changes in one batch request', value: 1000 },
  'dns.tsig_keys': { doc: 'TSIG keys the operator holds (all customers)', value: 100 },
  // Chatbots
  'chatbot.bots': { doc: 'Chatbots per customer (ours)', value: perPlan(3, 10, 50, null) },
  'chatbot.sources_per_bot': { doc: 'Knowledge sources per chatbot (ours)', value: 100 },
  'chatbot.session_history_messages': {
    doc: 'Earlier messages of a session sent to the model with each question (ours)',
    value: 20,
  },
  // Virtual servers
  'vps.servers': { doc: 'Virtual servers per customer', value: perPlan(2, 5, 25, null) },
  'vps.vcpus': { doc: 'vCPUs of all virtual servers of a customer', value: perPlan(4, 16, 64, null) },
  'vps.snapshots_per_server': { doc: 'Snapshots per virtual server', value: 10 },
  'vps.backups_per_server': {
    doc: 'Backups kept per virtual server of each kind: manual, and automatic (the longest retention) (ours)',
    value: 7,
  },
  // Container apps (our values)
  'apps.apps': { doc: 'Container apps per customer (ours)', value: perPlan(3, 10, 50, null) },
  'apps.max_instances': {
    doc: 'Highest max_instances of one container app revision (ours)',
    value: perPlan(3, 10, 50, 100),
  },
  'apps.revisions_per_app': {
    doc: 'Revisions kept per container app; older ones that do not serve are deleted (ours)',
    value: 100,
  },
  'apps.image_uploads': {
    doc: 'Container image uploads kept per customer; unused ones that expired do not count (ours)',
    value: perPlan(10, 50, 200, null),
  },
  'apps.image_upload_bytes': {
    doc: 'Size of one uploaded container image archive (ours)',
    unit: 'bytes',
    value: perPlan(GB, 2 * GB, 5 * GB, 10 * GB),
  },
  'apps.volumes': { doc: 'Container app volumes per customer (ours)', value: perPlan(2, 10, 50, null) },
  'apps.volume_gb': {
    doc: 'Size in GB of one container app volume (ours)',
    value: perPlan(1, 10, 100, 500),
  },
  'apps.domains_per_app': { doc: 'Custom domains per container app (ours)', value: perPlan(2, 5, 20, 50) },
  'apps.snapshots_per_volume': { doc: 'Snapshots kept per container app volume (ours)', value: 5 },
  // GPU jobs
  'gpu.concurrent_jobs_per_key': { doc: 'GPU jobs queued or processing per API key', value: 10 },
  // Speech transcription
  'speech.file_size_bytes': { doc: 'Size of a file to transcribe (2 GB)', value: 2 * 1024 ** 3 },
  // Managed clusters (our values; deleting clusters count until their removal is confirmed)
  'kubernetes.clusters': { doc: 'Managed Kubernetes clusters per customer', value: perPlan(1, 3, 10, null) },
  'kubernetes.floating_ips_per_cluster': {
    doc: 'Floating IPv4 addresses one cluster holds (ours)',
    value: 8,
  },
  // IoT devices (our values; free is about ThingsBoard Cloud's and AWS IoT's free tiers)
  'iot.devices': { doc: 'IoT devices per customer', value: perPlan(10, 100, 1000, null) },
  'iot.groups': { doc: 'IoT device groups per customer (ours)', value: 100 },
  'iot.tags_per_device': { doc: 'Tags on one IoT device (ours)', value: 50 },
  'iot.profiles': { doc: 'IoT device profiles per customer (ours)', value: 100 },
  'iot.datapoints': { doc: 'IoT datapoint definitions per customer (ours)', value: 500 },
  'iot.rules': { doc: 'IoT alarm rules per customer (ours)', value: perPlan(10, 50, 200, null) },
  'iot.channels': { doc: 'IoT notification channels per customer (ours)', value: 20 },
  'iot.policies': { doc: 'IoT notification policies per customer (ours)', value: 50 },
  'iot.mqtt_connections': {
    doc: 'Live MQTT connections per customer, on each broker process (ours)',
    value: perPlan(20, 200, 2000, null),
  },
  'iot.mqtt_retained_per_device': {
    doc: 'Retained MQTT messages kept per device (ours)',
    value: perPlan(50, 200, 1000, null),
  },
  'iot.mqtt_queued_per_session': {
    doc: 'MQTT messages queued for one offline persistent session; newer ones are dropped (ours)',
    value: perPlan(100, 1000, 10000, 100000),
  },
  'iot.mqtt_max_packet_bytes': {
    doc: 'Largest MQTT packet the broker takes, on every listener; advertised to MQTT 5 clients (ours)',
    unit: 'bytes',
    value: 1024 * 1024,
  },
  'iot.mqtt_topic_aliases': {
    doc: 'Topic aliases an MQTT 5 client may set on one connection (ours)',
    value: 32,
  },
  'iot.mqtt_receive_maximum': {
    doc: 'QoS 1 and 2 messages an MQTT 5 client may leave unacknowledged; its CONNACK Receive Maximum (AWS IoT’s)',
    value: 100,
  },
  'iot.mqtt_keepalive_max_seconds': {
    doc: 'Longest keep-alive of an MQTT 5 client; a longer or none gets this as Server Keep Alive (ours)',
    unit: 'seconds',
    value: 1200,
  },
  'iot.mqtt_session_expiry_max_seconds': {
    doc: 'Longest session expiry interval of an MQTT 5 session; a longer one is cut to this (ours)',
    unit: 'seconds',
    value: 7 * 24 * 3600,
  },
  'iot.mqtt_expiring_sessions': {
    doc: 'MQTT 5 sessions with a running expiry held by one broker process; past it a session ends at disconnect (ours)',
    value: 100_000,
  },
  'iot.telemetry_retention_days': {
    doc: 'Days IoT telemetry is kept before it is pruned (ours)',
    unit: 'days',
    value: perPlan(7, 30, 90, 365),
  },
  // Live events (our values; like Mux and Cloudflare Stream, bitrate and event counts rise with the plan)
  'live.events': {
    doc: 'Live events per customer, deleted ones not counted',
    value: perPlan(5, 25, 100, null),
  },
  'live.max_bitrate_kbps': {
    doc: 'Highest ingest bitrate an event may allow, in kbit/s',
    value: perPlan(4000, 6000, 12000, 20000),
  },
  'live.retention_days': { doc: 'Longest recording retention, in days', value: perPlan(7, 30, 365, 3650) },
  'live.reconnect_window_seconds': {
    doc: 'How long a live event waits for its encoder to come back',
    unit: 'seconds',
    value: 60,
  },
  'live.tokens_per_event': { doc: 'Watch tokens per live event (ours)', value: 10000 },
  'live.access_failures': {
    doc: 'Failed verify-password or verify-token attempts one viewer address may make on one event in 10 minutes; more answer 429 (ours)',
    value: 10,
  },
  'live.access_grant_seconds': {
    doc: 'How long an access grant (`ag_…`) may wait to be consumed (ours)',
    unit: 'seconds',
    value: 600,
  },
  'live.playback_grant_seconds': {
    doc: 'How long a consumed access grant lets its viewer fetch the HLS (ours)',
    unit: 'seconds',
    value: 43200,
  },
  // IP intelligence (tiers are the area's subscriptions, not plans; bursts are rate-limit rows)
  'ip.free_requests_per_day': { doc: 'IP intelligence requests per UTC day, free tier', value: 1000 },
  'ip.professional_requests_per_day': {
    doc: 'IP intelligence requests per UTC day, professional tier',
    value: 10000,
  },
  'ip.enterprise_requests_per_day': {
    doc: 'IP intelligence requests per UTC day, enterprise tier',
    value: null,
  },
  // Language models
  'llm.concurrent_requests_per_key': {
    doc: 'Language-model requests in flight per API key, streams until they end (per process)',
    value: 50,
  },
} satisfies Record<string, LimitRow>;

export type LimitName = keyof typeof DEFAULT_LIMITS;

/** Overrides as FJORD_LIMITS gives them: a number (every plan) or a value per plan. */
export type LimitOverrides = Record<string, LimitValue | Partial<PerPlan>>;

export const isPlan = (p: unknown): p is Plan =>
  typeof p === 'string' && (PLANS as readonly string[]).includes(p);

export class Limits {
  private readonly rows: Record<string, LimitRow>;

  constructor(overrides: LimitOverrides = {}) {
    this.rows = structuredClone(DEFAULT_LIMITS) as Record<string, LimitRow>;
    for (const [name, o] of Object.entries(overrides)) {
      const base = this.rows[name];
      if (!base) throw new Error(`FJORD_LIMITS: no limit is named ${name}`);
      if (o === null || typeof o === 'number') base.value = o;
      else {
        const current = base.value;
        const expanded =
          current !== null && typeof current === 'object'
            ? current
            : perPlan(current, current, current, current);
        base.value = { ...expanded, ...o };
      }
    }
  }

  /** The limit for a plan (an unknown plan counts as free); null is unlimited. */
  of(name: LimitName, plan: string = 'free'): LimitValue {
    const row = this.rows[name]!;
    const v = row.value;
    if (v === null || typeof v === 'number') return v;
    return v[isPlan(plan) ? plan : 'free'];
  }

  /** True when one more (or `adding` more) still fits under the limit. */
  allows(name: LimitName, plan: string | undefined, current: number, adding = 1): boolean {
    const max = this.of(name, plan);
    return max === null || current + adding <= max;
  }

  /** Every row as it is in force, for docs and the operator API. */
  table(): Record<string, LimitRow> {
    return structuredClone(this.rows);
  }
}
