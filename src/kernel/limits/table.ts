/**
 * The rate-limit table: one row per bucket, counted per credential. Seeded with the documents'
 * limits; FJORD_RATE_LIMITS overrides rows. Routes name the buckets they draw from.
 */
export interface RateLimitRow {
  /** Requests per window. */
  points: number;
  /** Window in seconds. */
  duration: number;
  /** Extra requests allowed in a burst on top of `points`, per window. */
  burst?: number;
  doc: string;
}

export const DEFAULT_RATE_LIMITS: Record<string, RateLimitRow> = {
  default: { points: 1000, duration: 60, doc: 'Any route that names no bucket (not stated; ours)' },
  account: { points: 300, duration: 60, doc: 'Account API (not stated; ours)' },
  regions: { points: 1000, duration: 60, doc: 'Region catalogue (not stated; ours)' },
  admin: { points: 10000, duration: 60, doc: 'Operator API (ours)' },
  storage: {
    points: 1000,
    burst: 100,
    duration: 60,
    doc: 'Storage API requests: 1000 plus burst of 100 per minute',
  },
  database: { points: 500, duration: 60, doc: 'Database API requests: 500 per minute' },
  'database.create': { points: 10, duration: 3600, doc: 'Database creation: 10 per hour' },
  'database.snapshot': { points: 20, duration: 3600, doc: 'Snapshot creation: 20 per hour' },
  'ip.burst.free': { points: 20, duration: 60, doc: 'IP intelligence, free tier: burst of 20 a minute' },
  'ip.burst.professional': {
    points: 200,
    duration: 60,
    doc: 'IP intelligence, professional tier: burst of 200 a minute',
  },
  'ip.burst.enterprise': {
    points: 1000,
    duration: 60,
    doc: 'IP intelligence, enterprise tier: burst of 1000 a minute',
  },
  ip: { points: 100000, duration: 60, doc: 'IP intelligence routes, before the tier’s own limits (ours)' },
  'dns.zone.create': { points: 10, duration: 3600, doc: 'DNS zone creation: 10 per hour' },
  'dns.record.create': { points: 100, duration: 60, doc: 'DNS record create: 100 per minute' },
  'dns.record.update': { points: 100, duration: 60, doc: 'DNS record update: 100 per minute' },
  'dns.record.delete': { points: 100, duration: 60, doc: 'DNS record delete: 100 per minute' },
  'dns.zone.write': {
    points: 100,
    duration: 60,
    doc: 'DNS zone deletion and DNSSEC on/off: 100 per minute (not stated; ours)',
  },
  'dns.zone.read': { points: 1000, duration: 60, doc: 'DNS zone reads: 1000 per minute' },
  'dns.record.read': { points: 1000, duration: 60, doc: 'DNS record reads: 1000 per minute' },
  'domain-verification': { points: 300, duration: 60, doc: 'Domain verification API (not stated; ours)' },
  'live-events': { points: 300, duration: 60, doc: 'Live events management API (not stated; ours)' },
  dyn: { points: 300, duration: 60, doc: 'Dynamic DNS control API (not stated; ours)' },
  'dyn.update': {
    points: 600,
    duration: 60,
    doc: 'DynDNS2 `/nic/update` requests per router credential (ours; per-hostname plan limits apply too)',
  },
  llm: { points: 1000, burst: 100, duration: 60, doc: 'Language models: 1000 per minute plus burst of 100' },
  vps: { points: 100, duration: 60, doc: 'Virtual server API requests: 100 per minute' },
  'container-apps': { points: 300, duration: 60, doc: 'Container apps API requests (not stated; ours)' },
  kubernetes: { points: 100, duration: 60, doc: 'Managed cluster API requests: 100 per minute' },
  gpu: { points: 100, duration: 60, doc: 'GPU API requests: 100 per minute' },
  iot: { points: 600, duration: 60, doc: 'IoT API requests, per key (not stated; ours)' },
  'mqtt.connect': {
    points: 600,
    duration: 60,
    doc: 'New MQTT connections (TCP, TLS, WebSocket) per remote address; past it the socket is closed (ours)',
  },
  'gpu.status': { points: 1000, duration: 60, doc: 'GPU job status checks: 1000 per minute' },
  sms: { points: 600, duration: 60, doc: 'SMS API requests, per key (not stated; ours)' },
  'sms-keywords': { points: 300, duration: 60, doc: 'SMS keyword API requests, per key (not stated; ours)' },
  contacts: { points: 600, duration: 60, doc: 'Contacts API requests (not stated; ours)' },
  'verify.recipient': {
    points: 5,
    duration: 600,
    doc: 'Verification sessions to one recipient, per customer: SMS-pumping guard (ours)',
  },
  'verify.prefix': {
    points: 50,
    duration: 3600,
    doc: 'Verification sessions by SMS or voice to one number prefix, per customer: SMS-pumping guard (ours)',
  },
};

export function buildRateLimitTable(
  overrides: Record<string, { points?: number; duration?: number; burst?: number }>,
): Record<string, RateLimitRow> {
  const table: Record<string, RateLimitRow> = structuredClone(DEFAULT_RATE_LIMITS);
  for (const [bucket, o] of Object.entries(overrides)) {
    const base = table[bucket] ?? { points: 1000, duration: 60, doc: 'added by FJORD_RATE_LIMITS' };
    table[bucket] = { ...base, ...o };
  }
  return table;
}
