import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import type { Config, Role } from './config-types.js';
import { asLlmModels, asLlmUpstreams } from './llm-settings.js';
import {
  asBoolean,
  asCidrList,
  asDataKey,
  asDnsName,
  asDynLimits,
  asE164,
  asE164List,
  asEnum,
  asHost,
  asHostNames,
  asHostPort,
  asHostPortList,
  asHttpUrl,
  asImageRegistries,
  asInteger,
  asLimitOverrides,
  asList,
  asPort,
  asRateLimitOverrides,
  asRedisUrl,
  asResolverAddress,
  asRtmpUrl,
  asSmppUrl,
  asSmtpUrl,
  asStoreUrl,
  asString,
  sqlitePath,
  urlOf,
  withoutPassword,
} from './parsers.js';
import { VARIABLES, type VariableName, type VariableSpec } from './variables.js';

export type { Config, DynPlanLimits, Role } from './config-types.js';

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
    tls: readTls(value('FJORD_TLS_CERT', asString), value('FJORD_TLS_KEY', asString), problems),
    mqttListeners: {
      tlsPort: value('FJORD_MQTT_TLS_PORT', asPort) ?? null,
      wsPort: value('FJORD_MQTT_WS_PORT', asPort) ?? null,
      tls: readTls(value('FJORD_MQTT_TLS_CERT', asString), value('FJORD_MQTT_TLS_KEY', asString), problems, [
        'FJORD_MQTT_TLS_CERT',
        'FJORD_MQTT_TLS_KEY',
        'your own pair',
        'a self-signed pair',
      ]),
    },
    s3PublicUrl: value('FJORD_S3_PUBLIC_URL', asHttpUrl)?.replace(/\/+$/, '') ?? null,
    mqttPublicAddress: value('FJORD_MQTT_PUBLIC_ADDRESS', asHostPort) ?? null,
    rtmpPublicUrl: value('FJORD_RTMP_PUBLIC_URL', asRtmpUrl)?.replace(/\/+$/, '') ?? null,
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
          clientId: value('FJORD_OIDC_CLIENT_ID', asString) ?? null,
          clientSecret: value('FJORD_OIDC_CLIENT_SECRET', asString) ?? null,
          name: value('FJORD_OIDC_NAME', asString) ?? new URL(issuer).hostname,
        }
      : null,
    emulator: value('FJORD_EMULATOR', asBoolean) ?? false,
    devCredentials: value('FJORD_DEV_CREDENTIALS', asBoolean) ?? !storeUrl?.startsWith('postgres'),
    seedFile: value('FJORD_SEED_FILE', asString) ?? null,
    logLevel: value('FJORD_LOG_LEVEL', asEnum) ?? 'info',
    bodyLimitBytes: value('FJORD_BODY_LIMIT_BYTES', asInteger) ?? 1048576,
    minFreeBytes: value('FJORD_MIN_FREE_BYTES', asInteger) ?? 67108864,
    rateLimitOverrides: value('FJORD_RATE_LIMITS', asRateLimitOverrides) ?? {},
    limitOverrides: value('FJORD_LIMITS', asLimitOverrides) ?? {},
    webhookAllowPrivate: value('FJORD_WEBHOOK_ALLOW_PRIVATE', asBoolean) ?? false,
    workerPollMs: value('FJORD_WORKER_POLL_MS', asInteger) ?? 500,
    jobLeaseSeconds: value('FJORD_JOB_LEASE_SECONDS', asInteger) ?? 300,
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
    ipDataDir: value('FJORD_IP_DATA_DIR', asString) ?? null,
    smtpUrl: value('FJORD_SMTP_URL', asSmtpUrl) ?? null,
    mailFrom: value('FJORD_MAIL_FROM', asString) ?? 'Fjord <no-reply@fjord.localhost>',
    voice: {
      callerId: value('FJORD_VOICE_CALLER_ID', asE164) ?? '+4721000000',
      simulatedNoAnswer: value('FJORD_VOICE_SIMULATED_NO_ANSWER', asE164List) ?? [],
      simulatedBusy: value('FJORD_VOICE_SIMULATED_BUSY', asE164List) ?? [],
    },
    gpu: { catalogueFile: value('FJORD_GPU_CATALOGUE', asString) },
    apps: {
      driver: (value('FJORD_APPS_DRIVER', asEnum) ?? 'simulated') as 'simulated' | 'podman',
      ingressPort: value('FJORD_APPS_INGRESS_PORT', asPort) ?? 8088,
      ingressTlsPort: value('FJORD_APPS_INGRESS_TLS_PORT', asPort) ?? 8443,
      domain: value('FJORD_APPS_DOMAIN', asDnsName)?.toLowerCase() ?? 'apps.fjord.test',
      acmeDirectory: value('FJORD_APPS_ACME_DIRECTORY', asHttpUrl) ?? null,
      acmeCaFile: value('FJORD_APPS_ACME_CA_FILE', asString) ?? null,
      imageRegistries: value('FJORD_APPS_IMAGE_REGISTRIES', asImageRegistries) ?? [],
      imageAllowPrivate: value('FJORD_APPS_IMAGE_ALLOW_PRIVATE', asBoolean) ?? false,
    },
    vps: {
      driver: (value('FJORD_VPS_DRIVER', asEnum) ?? 'simulated') as 'simulated' | 'namespace',
      templateDir: value('FJORD_VPS_TEMPLATE_DIR', asString),
      onStop: (value('FJORD_VPS_ON_STOP', asEnum) ?? 'stop') as 'stop' | 'leave',
    },
    speech: {
      engine: (value('FJORD_SPEECH_ENGINE', asEnum) ?? 'pocketsphinx') as
        | 'pocketsphinx'
        | 'openai-compatible',
      url: value('FJORD_SPEECH_URL', asString),
      apiKey: value('FJORD_SPEECH_API_KEY', asString),
      model: value('FJORD_SPEECH_MODEL', asString) ?? 'whisper-1',
      concurrency: value('FJORD_SPEECH_CONCURRENCY', asInteger) ?? 1,
    },
    llm: {
      upstreams: value('FJORD_LLM_UPSTREAMS', asLlmUpstreams) ?? [],
      models: value('FJORD_LLM_MODELS', asLlmModels) ?? {},
      simulated: value('FJORD_LLM_SIMULATED', asBoolean) ?? true,
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
  for (const [alias, model] of Object.entries(config.llm.models))
    for (const route of model.routes)
      if (!config.llm.upstreams.some((u) => u.name === route.upstream))
        problems.push(
          `FJORD_LLM_MODELS: ${alias} routes to upstream ${route.upstream}, which FJORD_LLM_UPSTREAMS does not name`,
        );
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
  const block = value('FJORD_S3_BLOCK_PUBLIC_ACCESS', asList) ?? [];
  const blockPublicAccess = block.includes('all')
    ? ['BlockPublicAcls', 'IgnorePublicAcls', 'BlockPublicPolicy', 'RestrictPublicBuckets']
    : block;
  const defaultObjectOwnership = (value('FJORD_S3_DEFAULT_OBJECT_OWNERSHIP', asEnum) ??
    'BucketOwnerEnforced') as Config['s3']['defaultObjectOwnership'];
  return { regions, baseDomain: domain, driver, fsync, upstream, blockPublicAccess, defaultObjectOwnership };
}

/** The address clients should use for the API (`{base_url}`). */
export function apiBaseUrl(config: Config, boundPort = config.ports.api): string {
  return config.publicUrl ?? listenerUrl(config, boundPort);
}

/** The S3 data plane's address as clients reach it: the `endpoint` of buckets and keys. */
export function s3EndpointUrl(config: Config, boundPort = config.ports.s3): string {
  return config.s3PublicUrl ?? listenerUrl(config, boundPort);
}

/** `http(s)://host:port` of a listener bound to FJORD_HOST (https with FJORD_TLS_CERT). */
export function listenerUrl(config: Config, port: number): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `${config.tls ? 'https' : 'http'}://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/** Both TLS files or neither, each readable and in PEM. */
function readTls(
  certFile: string | undefined,
  keyFile: string | undefined,
  problems: string[],
  [certName, keyName, both, neither] = ['FJORD_TLS_CERT', 'FJORD_TLS_KEY', 'HTTPS', 'HTTP'],
): { cert: string; key: string } | null {
  if (!certFile && !keyFile) return null;
  if (!certFile || !keyFile) {
    problems.push(`${certName} and ${keyName}: set both (${both}) or neither (${neither})`);
    return null;
  }
  const read = (name: string, file: string, marker: RegExp) => {
    try {
      const pem = readFileSync(file, 'utf8');
      if (!marker.test(pem)) problems.push(`${name}=${JSON.stringify(file)}: not a PEM file`);
      return pem;
    } catch (err) {
      problems.push(`${name}=${JSON.stringify(file)}: ${(err as Error).message}`);
      return '';
    }
  };
  const cert = read(certName, certFile, /-----BEGIN CERTIFICATE-----/);
  const key = read(keyName, keyFile, /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
  return { cert, key };
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
