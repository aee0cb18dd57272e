/**
 * Services a service key can be made for, and the PAT scope catalogue. docs/auth.md is checked
 * against these lists by a test.
 */
export const SERVICES = [
  // Document 1
  'database',
  'storage',
  'llm-api',
  'dns',
  'vps',
  'iot',
  'globalsim',
  'workspace',
  // Documents 2 and 3
  'live-events',
  'dyndns',
  'container-apps',
  'chatbot',
  'gpu',
  'transcript',
  'verify',
  'sms',
  'contacts',
  'ip',
] as const;
export type ServiceName = (typeof SERVICES)[number];

export function normaliseService(name: string): ServiceName | null {
  const lower = name.trim().toLowerCase();
  return (SERVICES as readonly string[]).includes(lower) ? (lower as ServiceName) : null;
}

/** Areas that get `<area>:read` and `<area>:write`. */
export const SCOPE_AREAS = [
  'account',
  'regions',
  'database',
  'storage',
  'dns',
  'vps',
  'domain-verification',
  'live-events',
  'kubernetes',
  'iot',
  'dyndns',
  'container-apps',
  'llm',
  'chatbot',
  'gpu',
  'transcript',
  'verify',
  'sms',
  'sms-keywords',
  'contacts',
  'ip',
  'globalsim',
  'workspace',
] as const;

/** The scope area whose `:write` a PAT needs to mint a service key for each service. */
export const SERVICE_SCOPE_AREA: Record<ServiceName, (typeof SCOPE_AREAS)[number]> = {
  database: 'database',
  storage: 'storage',
  'llm-api': 'llm',
  dns: 'dns',
  vps: 'vps',
  iot: 'iot',
  globalsim: 'globalsim',
  workspace: 'workspace',
  'live-events': 'live-events',
  dyndns: 'dyndns',
  'container-apps': 'container-apps',
  chatbot: 'chatbot',
  gpu: 'gpu',
  transcript: 'transcript',
  verify: 'verify',
  sms: 'sms',
  contacts: 'contacts',
  ip: 'ip',
};

/** Scopes the documents name, beyond the area pairs. */
export const NAMED_SCOPES = [
  'api_keys:read',
  'api_keys:write',
  'ssh_keys:read',
  'ssh_keys:write',
  'services:read',
  'database:firewall',
  'database:create',
  'database:delete',
] as const;

export const ALL_SCOPES: readonly string[] = [
  ...SCOPE_AREAS.flatMap((a) => [`${a}:read`, `${a}:write`]),
  ...NAMED_SCOPES,
].sort();

export const isKnownScope = (s: string): boolean => ALL_SCOPES.includes(s);

/**
 * A PAT satisfies a route when it holds any of the route's scopes. `x:write` implies `x:read`
 * (as GitHub's scopes do), so a token made to change things can also see them.
 */
export function scopesSatisfy(held: readonly string[], anyOf: readonly string[]): boolean {
  return anyOf.some((want) => {
    if (held.includes(want)) return true;
    return want.endsWith(':read') && held.includes(`${want.slice(0, -5)}:write`);
  });
}
