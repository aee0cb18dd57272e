import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { VARIABLES, type VariableName, type VariableSpec } from './variables.js';

export type Role = 'api' | 's3' | 'dns' | 'mqtt' | 'rtmp' | 'worker';

export interface Config {
  dataDir: string;
  host: string;
  ports: { api: number; s3: number; dns: number; mqtt: number; rtmp: number };
  publicUrl: string | null;
  /** The S3 endpoint as clients reach it (FJORD_S3_PUBLIC_URL); null: derived from host and port. */
  s3PublicUrl: string | null;
  s3: {
    /** Regions S3 requests may be signed for; the first is reported. */
    regions: string[];
    baseDomain: string | null;
    driver: 'fs' | 's3';
    /** fsync object files before they become visible (fs driver). */
    fsync: boolean;
    upstream: {
      endpoint: string;
      bucket: string;
      region: string;
      accessKeyId: string;
      secretKey: string;
      prefix: string;
    } | null;
  };
  roles: Role[];
  store: { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };
  redisUrl: string | null;
  operatorToken: string | null;
  dataKey: string | null;
  oidc: { issuer: string; audience: string | null; jwksUrl: string | null } | null;
  emulator: boolean;
  devCredentials: boolean;
  seedFile: string | null;
  logLevel: string;
  bodyLimitBytes: number;
  rateLimitOverrides: Record<string, { points?: number; duration?: number; burst?: number }>;
  webhookAllowPrivate: boolean;
  workerPollMs: number;
  dns: {
    nameservers: string[];
    /** Networks allowed to transfer zones (AXFR/IXFR), as CIDR. */
    axfrAllow: string[];
    /** Secondaries told of serial changes, as `host:port`. */
    notify: string[];
    /** Response rate limit per client netblock and response class; 0 turns it off. */
    rrlRate: number;
  };
  /** `ip:port` of the recursive resolver to use; null: the system's. */
  resolver: string | null;
  domainVerification: { label: string; cnameTarget: string };
  dyn: { zone: string; ttl: number; plans: { home: DynPlanLimits; fleet: DynPlanLimits } };
  /** Outgoing e-mail: nodemailer's SMTP URL, or null for the simulated transport. */
  smtpUrl: string | null;
  mailFrom: string;
  voice: { callerId: string; simulatedNoAnswer: string[]; simulatedBusy: string[] };
  sms: {
    driver: 'sandbox' | 'smpp';
    smppUrl: string | null;
    smppSystemType: string;
    smppWindow: number;
    smppEnquireLinkSeconds: number;
    sharedNumber: string;
    currency: string;
    sandboxDeliverySeconds: number;
    sandboxFailNumbers: string[];
  };
  databases: {
    engines: 'auto' | 'embedded' | 'external' | 'simulated';
    postgresAdminUrl: string | null;
    postgresHbaFile: string | null;
    mariadbAdminUrl: string | null;
    internalCustomers: string[];
    encryptedEngines: string[];
  };
}

export interface DynPlanLimits {
  hostnames: number;
  updates_per_hour: number;
  sources: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

/** Reads FJORD_* from the environment (and FJORD_CONFIG_FILE); throws ConfigError listing every bad value. */
export function loadConfig(env: Env = process.env, warn: (msg: string) => void = () => {}): Config {
  const merged: Env = { ...readConfigFile(env['FJORD_CONFIG_FILE']), ...pickFjord(env) };
  for (const name of Object.keys(merged)) {
    if (!(name in VARIABLES)) warn(`unknown configuration variable ${name} is ignored`);
  }
  const problems: string[] = [];
  const value = <T>(name: VariableName, parse: (raw: string, spec: VariableSpec) => T): T | undefined => {
    const spec: VariableSpec = VARIABLES[name];
    const raw = merged[name] ?? spec.default;
    if (raw === undefined || raw === '') return undefined;
    try {
      return parse(raw.trim(), spec);
    } catch (err) {
      const shown = spec.secret ? '<hidden>' : JSON.stringify(withoutPassword(raw));
      problems.push(`${name}=${shown}: ${(err as Error).message}`);
      return undefined;
    }
  };

  const dataDir = resolve(value('FJORD_DATA_DIR', asString) ?? '.fjord');
  const storeUrl = value('FJORD_DATABASE_URL', asStoreUrl);
  const issuer = value('FJORD_OIDC_ISSUER', asHttpUrl);
  const config: Config = {
    dataDir,
    host: value('FJORD_HOST', asHost) ?? '127.0.0.1',
    ports: {
      api: value('FJORD_API_PORT', asPort) ?? 8080,
      s3: value('FJORD_S3_PORT', asPort) ?? 9000,
      dns: value('FJORD_DNS_PORT', asPort) ?? 5300,
      mqtt: value('FJORD_MQTT_PORT', asPort) ?? 1883,
      rtmp: value('FJORD_RTMP_PORT', asPort) ?? 1935,
    },
    publicUrl: value('FJORD_PUBLIC_URL', asHttpUrl)?.replace(/\/+$/, '') ?? null,
    s3PublicUrl: value('FJORD_S3_PUBLIC_URL', asHttpUrl)?.replace(/\/+$/, '') ?? null,
    s3: s3Settings(value, problems),
    roles: (value('FJORD_ROLES', asList) ?? VARIABLES.FJORD_ROLES.values) as Role[],
    store: storeUrl?.startsWith('postgres')
      ? { kind: 'postgres', url: storeUrl }
      : { kind: 'sqlite', path: sqlitePath(storeUrl, dataDir) },
    redisUrl: value('FJORD_REDIS_URL', asRedisUrl) ?? null,
    operatorToken: value('FJORD_OPERATOR_TOKEN', asString) ?? null,
    dataKey: value('FJORD_DATA_KEY', asDataKey) ?? null,
    oidc: issuer
      ? {
          issuer,
          audience: value('FJORD_OIDC_AUDIENCE', asString) ?? null,
          jwksUrl: value('FJORD_OIDC_JWKS_URL', asHttpUrl) ?? null,
        }
      : null,
    emulator: value('FJORD_EMULATOR', asBoolean) ?? false,
    devCredentials: value('FJORD_DEV_CREDENTIALS', asBoolean) ?? !storeUrl?.startsWith('postgres'),
    seedFile: value('FJORD_SEED_FILE', asString) ?? null,
    logLevel: value('FJORD_LOG_LEVEL', asEnum) ?? 'info',
    bodyLimitBytes: value('FJORD_BODY_LIMIT_BYTES', asInteger) ?? 1048576,
    rateLimitOverrides: value('FJORD_RATE_LIMITS', asRateLimitOverrides) ?? {},
    webhookAllowPrivate: value('FJORD_WEBHOOK_ALLOW_PRIVATE', asBoolean) ?? false,
    workerPollMs: value('FJORD_WORKER_POLL_MS', asInteger) ?? 500,
    domainVerification: {
      label: value('FJORD_VERIFICATION_LABEL', asDnsName) ?? '_fjord',
      cnameTarget: value('FJORD_VERIFICATION_CNAME_TARGET', asDnsName) ?? 'verify.fjord.test',
    },
    dyn: {
      zone: value('FJORD_DYN_ZONE', asDnsName) ?? 'dyn.fjord.test',
      ttl: value('FJORD_DYN_TTL', asInteger) ?? 60,
      plans: {
        home: value('FJORD_DYN_HOME_LIMITS', asDynLimits) ?? {
          hostnames: 5,
          updates_per_hour: 60,
          sources: 2,
        },
        fleet: value('FJORD_DYN_FLEET_LIMITS', asDynLimits) ?? {
          hostnames: 500,
          updates_per_hour: 360,
          sources: 10,
        },
      },
    },
    dns: {
      nameservers: value('FJORD_DNS_NAMESERVERS', asHostNames) ?? ['ns1.fjord.test', 'ns2.fjord.test'],
      axfrAllow: value('FJORD_DNS_AXFR_ALLOW', asCidrList) ?? [],
      notify: value('FJORD_DNS_NOTIFY', asHostPortList) ?? [],
      rrlRate: value('FJORD_DNS_RRL_RATE', asInteger) ?? 50,
    },
    resolver: value('FJORD_RESOLVER', asResolverAddress) ?? null,
    smtpUrl: value('FJORD_SMTP_URL', asSmtpUrl) ?? null,
    mailFrom: value('FJORD_MAIL_FROM', asString) ?? 'Fjord <no-reply@fjord.localhost>',
    voice: {
      callerId: value('FJORD_VOICE_CALLER_ID', asE164) ?? '+4721000000',
      simulatedNoAnswer: value('FJORD_VOICE_SIMULATED_NO_ANSWER', asE164List) ?? [],
      simulatedBusy: value('FJORD_VOICE_SIMULATED_BUSY', asE164List) ?? [],
    },
    sms: {
      driver:
        (value('FJORD_SMS_DRIVER', asEnum) as 'sandbox' | 'smpp' | undefined) ??
        (merged['FJORD_SMPP_URL'] ? 'smpp' : 'sandbox'),
      smppUrl: value('FJORD_SMPP_URL', asSmppUrl) ?? null,
      smppSystemType: value('FJORD_SMPP_SYSTEM_TYPE', asString) ?? '',
      smppWindow: value('FJORD_SMPP_WINDOW', asInteger) ?? 10,
      smppEnquireLinkSeconds: value('FJORD_SMPP_ENQUIRE_LINK_SECONDS', asInteger) ?? 30,
      sharedNumber: value('FJORD_SMS_SHARED_NUMBER', asE164) ?? '+4759440000',
      currency: value('FJORD_SMS_CURRENCY', asEnum) ?? 'NOK',
      sandboxDeliverySeconds: value('FJORD_SMS_SANDBOX_DELIVERY_SECONDS', asInteger) ?? 3,
      sandboxFailNumbers: value('FJORD_SMS_SANDBOX_FAIL_NUMBERS', asE164List) ?? [],
    },
    databases: {
      engines: (value('FJORD_DATABASE_ENGINES', asEnum) ?? 'auto') as Config['databases']['engines'],
      postgresAdminUrl: value('FJORD_POSTGRES_ADMIN_URL', urlOf('postgres', 'postgresql')) ?? null,
      postgresHbaFile: value('FJORD_POSTGRES_HBA_FILE', asString) ?? null,
      mariadbAdminUrl: value('FJORD_MARIADB_ADMIN_URL', urlOf('mariadb', 'mysql')) ?? null,
      encryptedEngines: (value('FJORD_DATABASE_ENCRYPTED_ENGINES', asList) ?? []) as string[],
      internalCustomers: (value('FJORD_DATABASE_INTERNAL_CUSTOMERS', asString) ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    },
  };
  if (
    config.sms.driver === 'smpp' &&
    !config.sms.smppUrl &&
    !problems.some((p) => p.startsWith('FJORD_SMPP_URL'))
  ) {
    problems.push('FJORD_SMS_DRIVER=smpp: needs FJORD_SMPP_URL (smpp://system_id:password@host:port)');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

type ValueOf = <T>(name: VariableName, parse: (raw: string, spec: VariableSpec) => T) => T | undefined;

function s3Settings(value: ValueOf, problems: string[]): Config['s3'] {
  const regions = (value('FJORD_S3_REGIONS', asString) ?? 'eu-north-1,us-east-1')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  if (regions.length === 0 || regions.some((r) => !/^[a-z0-9-]+$/.test(r))) {
    problems.push('FJORD_S3_REGIONS: expected a comma-separated list of region names');
  }
  const driver = (value('FJORD_S3_DRIVER', asEnum) ?? 'fs') as 'fs' | 's3';
  let upstream: Config['s3']['upstream'] = null;
  if (driver === 's3') {
    const endpoint = value('FJORD_S3_UPSTREAM_ENDPOINT', asHttpUrl);
    const bucket = value('FJORD_S3_UPSTREAM_BUCKET', asString);
    const accessKeyId = value('FJORD_S3_UPSTREAM_ACCESS_KEY_ID', asString);
    const secretKey = value('FJORD_S3_UPSTREAM_SECRET_ACCESS_KEY', asString);
    if (!endpoint || !bucket || !accessKeyId || !secretKey) {
      problems.push(
        'FJORD_S3_DRIVER=s3 needs FJORD_S3_UPSTREAM_ENDPOINT, FJORD_S3_UPSTREAM_BUCKET, FJORD_S3_UPSTREAM_ACCESS_KEY_ID and FJORD_S3_UPSTREAM_SECRET_ACCESS_KEY',
      );
    } else {
      upstream = {
        endpoint,
        bucket,
        accessKeyId,
        secretKey,
        region: value('FJORD_S3_UPSTREAM_REGION', asString) ?? 'us-east-1',
        prefix: value('FJORD_S3_UPSTREAM_PREFIX', asString) ?? '',
      };
    }
  }
  const domain = value('FJORD_S3_BASE_DOMAIN', asHost)?.toLowerCase() ?? null;
  const fsync = value('FJORD_S3_FSYNC', asBoolean) ?? true;
  return { regions, baseDomain: domain, driver, fsync, upstream };
}

/** The address clients should use for the API (`{base_url}`). */
export function apiBaseUrl(config: Config, boundPort = config.ports.api): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${boundPort}`;
}

/** The S3 data plane's address as clients reach it: the `endpoint` of buckets and keys. */
export function s3EndpointUrl(config: Config, boundPort = config.ports.s3): string {
  if (config.s3PublicUrl) return config.s3PublicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${boundPort}`;
}

function pickFjord(env: Env): Env {
  return Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('FJORD_')));
}

function readConfigFile(path: string | undefined): Env {
  if (!path) return {};
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError([`FJORD_CONFIG_FILE=${JSON.stringify(path)}: ${(err as Error).message}`]);
  }
  if (text.trimStart().startsWith('{')) {
    try {
      const obj = JSON.parse(text) as Record<string, unknown>;
      return Object.fromEntries(
        Object.entries(obj).map(([k, v]) => [
          k,
          v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v),
        ]),
      );
    } catch (err) {
      throw new ConfigError([`FJORD_CONFIG_FILE: not valid JSON: ${(err as Error).message}`]);
    }
  }
  const out: Env = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || line.trimStart().startsWith('#')) continue;
    out[m[1]!] = m[2]!.replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}

/** A connection URL's password is a secret even when the variable is not (`postgres://u:<hidden>@h`). */
const withoutPassword = (raw: string) => raw.replace(/^([a-z][\w+.-]*:\/\/[^/@:]*):[^/@]*@/i, '$1:<hidden>@');

function sqlitePath(url: string | undefined, dataDir: string): string {
  if (!url) return resolve(dataDir, 'fjord.sqlite');
  const rest = url.slice('sqlite:'.length);
  return rest === ':memory:' ? ':memory:' : resolve(rest);
}

const asString = (raw: string) => raw;

function asInteger(raw: string, spec: VariableSpec): number {
  if (!/^-?\d+$/.test(raw)) throw new Error('expected an integer');
  const n = Number(raw);
  if (spec.min !== undefined && n < spec.min) throw new Error(`must be at least ${spec.min}`);
  if (spec.max !== undefined && n > spec.max) throw new Error(`must be at most ${spec.max}`);
  return n;
}

function asPort(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > 65535) throw new Error('expected a port number 0-65535');
  return n;
}

function asBoolean(raw: string): boolean {
  const v = raw.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new Error('expected a boolean (1/0, true/false, yes/no, on/off)');
}

const urlOf = (...schemes: string[]) =>
  function asUrl(raw: string): string {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error('expected an absolute URL');
    }
    if (!schemes.includes(url.protocol.slice(0, -1))) {
      throw new Error(
        `unsupported scheme ${url.protocol} (expected ${schemes.map((s) => `${s}:`).join(' or ')})`,
      );
    }
    return raw;
  };
const asHttpUrl = urlOf('http', 'https');
const asRedisUrl = urlOf('redis', 'rediss');
const asSmtpUrl = urlOf('smtp', 'smtps');
const asSmppUrl = urlOf('smpp', 'ssmpp');

function asE164(raw: string): string {
  if (!/^\+[1-9]\d{6,14}$/.test(raw)) throw new Error('expected an E.164 number such as +4721000000');
  return raw;
}

const asE164List = (raw: string): string[] =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(asE164);

function asHost(raw: string): string {
  if (isIP(raw) || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(raw)) return raw;
  throw new Error('expected an IP address or host name');
}

function asEnum(raw: string, spec: VariableSpec): string {
  if (!spec.values?.includes(raw)) throw new Error(`expected one of ${spec.values?.join(', ')}`);
  return raw;
}

function asList(raw: string, spec: VariableSpec): string[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = items.filter((i) => !spec.values?.includes(i));
  if (bad.length > 0)
    throw new Error(`unknown ${bad.join(', ')}; expected some of ${spec.values?.join(', ')}`);
  if (items.length === 0) throw new Error(`expected at least one of ${spec.values?.join(', ')}`);
  return [...new Set(items)];
}

function asHostNames(raw: string): string[] {
  const names = raw
    .split(',')
    .map((s) => s.trim().toLowerCase().replace(/\.$/, ''))
    .filter(Boolean);
  const label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
  const bad = names.filter(
    (n) => n.length > 253 || !n.includes('.') || !n.split('.').every((l) => label.test(l)),
  );
  if (bad.length > 0) throw new Error(`not fully qualified host names: ${bad.join(', ')}`);
  if (names.length === 0) throw new Error('expected at least one host name');
  return [...new Set(names)];
}

/** `ip`, `ip:port` or `[ipv6]:port`, as node:dns `setServers` takes them (port 53 when none is given). */
function asResolverAddress(raw: string): string {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw) ?? /^([^:]+)(?::(\d+))?$/.exec(raw);
  const host = m ? m[1]! : raw;
  const port = m?.[2] ?? '53';
  if (!isIP(host) || Number(port) < 1 || Number(port) > 65535) {
    throw new Error('expected an IP address with an optional port (ip, ip:port or [ipv6]:port)');
  }
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `a.b.c.d/n` or `v6::/n` entries; a bare address means that one host. */
function asCidrList(raw: string): string[] {
  const items = splitList(raw);
  const bad = items.filter((item) => {
    const [address, prefix, extra] = item.split('/');
    const family = isIP(address ?? '');
    if (!family || extra !== undefined) return true;
    return prefix !== undefined && (!/^\d+$/.test(prefix) || Number(prefix) > (family === 6 ? 128 : 32));
  });
  if (bad.length > 0) throw new Error(`not CIDR networks: ${bad.join(', ')}`);
  return items;
}

/** `ip`, `ip:port` or `[ipv6]:port` entries (port 53 when none is given). */
function asHostPortList(raw: string): string[] {
  return splitList(raw).map(asResolverAddress);
}

function asStoreUrl(raw: string): string {
  if (/^postgres(ql)?:\/\//.test(raw) || raw.startsWith('sqlite:')) return raw;
  throw new Error('expected postgres://… or sqlite:<path>');
}

function asDataKey(raw: string): string {
  if (Buffer.from(raw, 'base64').length !== 32) throw new Error('expected base64 of exactly 32 bytes');
  return raw;
}

function asRateLimitOverrides(raw: string): Config['rateLimitOverrides'] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('expected a JSON object');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('expected a JSON object');
  for (const [key, row] of Object.entries(parsed)) {
    if (!row || typeof row !== 'object') throw new Error(`${key}: expected {points, duration, burst}`);
    for (const [field, v] of Object.entries(row)) {
      if (!['points', 'duration', 'burst'].includes(field) || !Number.isInteger(v) || (v as number) < 0) {
        throw new Error(`${key}.${field}: expected a non-negative integer points, duration or burst`);
      }
    }
  }
  return parsed as Config['rateLimitOverrides'];
}

/** A domain name in lowercase without the trailing dot. */
function asDnsName(raw: string): string {
  const name = raw.toLowerCase().replace(/\.$/, '');
  if (!/^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)*$/.test(name)) {
    throw new Error('expected a domain name');
  }
  return name;
}

/** `hostnames=5,updates_per_hour=60,sources=2`: every key required, positive integers. */
function asDynLimits(raw: string): DynPlanLimits {
  const entries = new Map(
    raw.split(',').map((part) => {
      const [k, v] = part.split('=').map((x) => x.trim());
      return [k ?? '', Number(v)] as const;
    }),
  );
  const out = {} as DynPlanLimits;
  for (const key of ['hostnames', 'updates_per_hour', 'sources'] as const) {
    const n = entries.get(key);
    if (n === undefined || !Number.isInteger(n) || n < 1)
      throw new Error(`${key} must be a positive integer`);
    out[key] = n;
  }
  return out;
}
