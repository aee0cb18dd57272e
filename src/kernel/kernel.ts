import type { Logger } from 'pino';
import type { Config, Role } from '../config/config.js';
import type { AuditTrail } from './audit/audit.js';
import type { Authenticator } from './auth/authenticate.js';
import type { ConsoleSessions } from './auth/console-sessions.js';
import type { IdentityService } from './auth/identity.js';
import type { OidcVerifier } from './auth/oidc.js';
import type { AdjustableClock } from './clock.js';
import type { ClockPersistence } from './clock-persistence.js';
import type { JobQueue } from './jobs/queue.js';
import type { Limits } from './limits/quotas.js';
import type { RateLimiter } from './limits/rate-limiter.js';
import type { ProtocolMetrics } from './observe/protocol-metrics.js';
import type { Registry } from './registry.js';
import type { SecretBox } from './secrets.js';
import type { Store } from './store/store.js';
import type { WebhookService } from './webhooks/webhooks.js';

/** Everything the kernel offers an area. Built once by the composition root. */
export interface Kernel {
  config: Config;
  clock: AdjustableClock;
  /** Saves the emulator clock's offset for restarts and other processes. */
  clockStore: ClockPersistence;
  store: Store;
  log: Logger;
  identity: IdentityService;
  auth: Authenticator;
  /** Console sign-ins: a PAT or the operator token exchanged for a session cookie. */
  consoleSessions: ConsoleSessions;
  /** The configured OIDC issuer's token checks (bearer tokens, the console's sign-in); null without one. */
  oidc: OidcVerifier | null;
  limiter: RateLimiter;
  /** The table of limits and plan quotas (limits/quotas.ts). */
  limits: Limits;
  jobs: JobQueue;
  webhooks: WebhookService;
  audit: AuditTrail;
  secrets: SecretBox;
  registry: Registry;
  /** Durations and bytes of the protocol planes, served in `/metrics` (observe/protocol-metrics.ts). */
  metrics: ProtocolMetrics;
  /** `{base_url}`: the API's address as clients reach it. */
  baseUrl(): string;
  operatorToken(): string | null;
}

/** A protocol server an area runs in one of the roles. */
export interface RoleServer {
  role: Role;
  name: string;
  start(): Promise<void>;
  /**
   * Work to begin once every role of this process is up, so that it does not compete with the
   * start (the process answers `/healthz` first): e.g. creating an embedded engine's files.
   */
  afterStart?(): void;
  stop(): Promise<void>;
  /**
   * What the server listens on once started (the bound address, so port 0 shows the real port),
   * for the start banner: read after `start()`, so the banner shows what started, not what was
   * configured. Servers that report through `kernel.registry.addListener` themselves leave it out.
   */
  listeners?(): { protocol: string; address: string }[];
}

export type { AreaInstance, AreaModule } from './wiring.js';
