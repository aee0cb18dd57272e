import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { lazyPackage } from '../kernel/lazy.js';

const ioredis = lazyPackage<typeof import('ioredis')>('ioredis');

import type { Logger } from 'pino';
import { apiBaseUrl, type Config } from '../config/config.js';
import { AuditTrail } from '../kernel/audit/audit.js';
import { Authenticator } from '../kernel/auth/authenticate.js';
import { ConsoleSessions } from '../kernel/auth/console-sessions.js';
import { IdentityService } from '../kernel/auth/identity.js';
import { OidcVerifier } from '../kernel/auth/oidc.js';
import { AdjustableClock } from '../kernel/clock.js';
import { ClockPersistence } from '../kernel/clock-persistence.js';
import { randomString } from '../kernel/ids.js';
import { JobQueue } from '../kernel/jobs/queue.js';
import type { Kernel } from '../kernel/kernel.js';
import { Limits } from '../kernel/limits/quotas.js';
import { RateLimiter } from '../kernel/limits/rate-limiter.js';
import { buildRateLimitTable } from '../kernel/limits/table.js';
import { ProtocolMetrics } from '../kernel/observe/protocol-metrics.js';
import { Registry } from '../kernel/registry.js';
import { SecretBox } from '../kernel/secrets.js';
import type { Store } from '../kernel/store/store.js';
import { WebhookService } from '../kernel/webhooks/webhooks.js';
import { readOrCreateSecretFile } from './files.js';

export interface KernelDeps {
  config: Config;
  store: Store;
  log: Logger;
  fetchImpl?: typeof fetch;
}

/** Builds the kernel services once, wiring every side effect in from here. */
export function buildKernel({
  config,
  store,
  log,
  fetchImpl,
}: KernelDeps): Kernel & { redis: Redis | null; setBoundApiPort(p: number): void } {
  const persistent = !(config.store.kind === 'sqlite' && config.store.path === ':memory:');
  if (persistent || config.devCredentials) mkdirSync(config.dataDir, { recursive: true });
  const clock = new AdjustableClock();
  const secrets = new SecretBox(Buffer.from(dataKey(config, persistent), 'base64'));
  const operatorToken =
    config.operatorToken ??
    (config.devCredentials
      ? readOrCreateSecretFile(join(config.dataDir, 'operator.token'), () => `fjo_${randomString(40)}`)
      : null);
  const identity = new IdentityService(store, clock, (err) => log.warn({ err }, 'could not record key use'));
  // Wall time, not the emulator's clock: see ConsoleSessions.
  const consoleSessions = new ConsoleSessions(store, identity, () => operatorToken, Date.now);
  const oidc = config.oidc ? new OidcVerifier(config.oidc) : null;
  const redis = config.redisUrl
    ? new (ioredis().Redis)(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
    : null;
  redis?.on('error', (err) => log.warn({ err: err.message }, 'redis error'));
  const jobs = new JobQueue(
    store,
    clock,
    log.child({ role: 'worker' }),
    config.workerPollMs,
    config.jobLeaseSeconds * 1000,
  );
  let boundApiPort = config.ports.api;
  const kernel: Kernel & { redis: Redis | null; setBoundApiPort(p: number): void } = {
    config,
    clock,
    clockStore: new ClockPersistence(store, clock),
    store,
    log,
    identity,
    auth: new Authenticator(identity, oidc, () => operatorToken, clock, consoleSessions),
    consoleSessions,
    oidc,
    limiter: new RateLimiter(buildRateLimitTable(config.rateLimitOverrides), redis),
    limits: new Limits(config.limitOverrides),
    jobs,
    webhooks: new WebhookService(store, clock, secrets, jobs, config.webhookAllowPrivate, fetchImpl),
    audit: new AuditTrail(store, clock),
    secrets,
    registry: kernelRegistry(),
    metrics: new ProtocolMetrics(log.child({ role: 'protocol' })),
    baseUrl: () => apiBaseUrl(config, boundApiPort),
    operatorToken: () => operatorToken,
    redis,
    setBoundApiPort: (p) => {
      boundApiPort = p;
    },
  };
  return kernel;
}

function dataKey(config: Config, persistent: boolean): string {
  if (config.dataKey) return config.dataKey;
  const generate = () => randomBytes(32).toString('base64');
  return persistent ? readOrCreateSecretFile(join(config.dataDir, 'data.key'), generate) : generate();
}

/** The registry, with the credential kinds the kernel itself accepts on the HTTP API. */
function kernelRegistry(): Registry {
  const registry = new Registry();
  registry.addCredentialKind({
    name: 'pat',
    area: 'kernel',
    doc: '`X-API-Key` or `Authorization: Bearer` (`fjp_…`)',
  });
  registry.addCredentialKind({
    name: 'service-key',
    area: 'kernel',
    doc: '`X-API-Key` or `Authorization: Bearer` (`fjk_…`)',
  });
  registry.addCredentialKind({
    name: 'oidc',
    area: 'kernel',
    doc: '`Authorization: Bearer` JWT from the configured issuer',
  });
  return registry;
}
