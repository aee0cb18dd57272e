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
  databases: {
    engines: 'auto' | 'embedded' | 'external' | 'simulated';
    postgresAdminUrl: string | null;
    postgresHbaFile: string | null;
    mariadbAdminUrl: string | null;
    internalCustomers: string[];
    encryptedEngines: string[];
  };
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
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** The address clients should use for the API (`{base_url}`). */
export function apiBaseUrl(config: Config, boundPort = config.ports.api): string {
  if (config.publicUrl) return config.publicUrl;
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
