import type { LimitOverrides } from '../kernel/limits/quotas.js';
import type { LlmModelSettings, LlmUpstreamSettings } from './llm-settings.js';

/** Fjord's settings, as loadConfig (config.ts) reads them from FJORD_* variables and checks them. */
export type Role = 'api' | 's3' | 'dns' | 'mqtt' | 'rtmp' | 'worker';

export interface Config {
  dataDir: string;
  host: string;
  ports: { api: number; s3: number; dns: number; mqtt: number; rtmp: number };
  publicUrl: string | null;
  /** PEM certificate and key: the API and S3 listeners answer HTTPS (FJORD_TLS_CERT/KEY). */
  tls: { cert: string; key: string } | null;
  /**
   * The broker's MQTT over TLS and over WebSocket listeners (off while their port is unset), and
   * the PEM pair of the TLS one (null: a self-signed pair is made in the data dir).
   */
  mqttListeners: { tlsPort: number | null; wsPort: number | null; tls: { cert: string; key: string } | null };
  /** The S3 endpoint as clients reach it (FJORD_S3_PUBLIC_URL); null: derived from host and port. */
  s3PublicUrl: string | null;
  /** The broker as devices reach it (FJORD_MQTT_PUBLIC_ADDRESS); null: the API's host, the MQTT port. */
  mqttPublicAddress: { host: string; port: number } | null;
  /** The RTMP ingest URL encoders are handed (FJORD_RTMP_PUBLIC_URL); null: the API's host, the RTMP port. */
  rtmpPublicUrl: string | null;
  s3: {
    /** Regions S3 requests may be signed for; the first is reported. */
    regions: string[];
    baseDomain: string | null;
    driver: 'fs' | 's3';
    /** fsync object files before they become visible (fs driver). */
    fsync: boolean;
    /** Public access block switches of every bucket (FJORD_S3_BLOCK_PUBLIC_ACCESS, `all` expanded). */
    blockPublicAccess: string[];
    /** Object ownership of buckets created without one (FJORD_S3_DEFAULT_OBJECT_OWNERSHIP). */
    defaultObjectOwnership: 'BucketOwnerEnforced' | 'BucketOwnerPreferred' | 'ObjectWriter';
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
  oidc: {
    issuer: string;
    audience: string | null;
    jwksUrl: string | null;
    /** The console's client at the issuer: null, no "Sign in with …". */
    clientId: string | null;
    clientSecret: string | null;
    /** Shown on the sign-in button. */
    name: string;
  } | null;
  emulator: boolean;
  devCredentials: boolean;
  seedFile: string | null;
  logLevel: string;
  bodyLimitBytes: number;
  /** Free bytes the data dir must keep for `/readyz` to say ready (FJORD_MIN_FREE_BYTES; 0: no check). */
  minFreeBytes: number;
  rateLimitOverrides: Record<string, { points?: number; duration?: number; burst?: number }>;
  /** FJORD_LIMITS: rows of the limits table (kernel/limits/quotas.ts) set by the operator. */
  limitOverrides: LimitOverrides;
  webhookAllowPrivate: boolean;
  workerPollMs: number;
  jobLeaseSeconds: number;
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
  /** IP intelligence: a folder of newer MMDB/CSV files and flag lists; null: the shipped data only. */
  ipDataDir: string | null;
  domainVerification: { label: string; cnameTarget: string };
  dyn: { zone: string; ttl: number; plans: { home: DynPlanLimits; fleet: DynPlanLimits } };
  /** Outgoing e-mail: nodemailer's SMTP URL, or null for the simulated transport. */
  smtpUrl: string | null;
  mailFrom: string;
  voice: { callerId: string; simulatedNoAnswer: string[]; simulatedBusy: string[] };
  /** GPU jobs: an operator's catalogue file in place of the shipped one. */
  gpu: { catalogueFile: string | undefined };
  /** Container apps: the driver, the ingress port and the domain app hosts live under. */
  apps: {
    driver: 'simulated' | 'podman';
    ingressPort: number;
    ingressTlsPort: number;
    domain: string;
    /** An ACME directory to get custom domains' certificates from; null: the local CA. */
    acmeDirectory: string | null;
    /** PEM file of a CA to trust for the ACME directory's own HTTPS (a private or test ACME server). */
    acmeCaFile: string | null;
    /** Registries revisions may name images from (`host[:port][/path prefix]`); empty: uploads only. */
    imageRegistries: string[];
    /** Whether a listed registry may be on a loopback, link-local or private address. */
    imageAllowPrivate: boolean;
  };
  /** Virtual servers: the driver, where Debian roots are cached, and what a stopping Fjord does to them. */
  vps: { driver: 'simulated' | 'namespace'; templateDir: string | undefined; onStop: 'stop' | 'leave' };
  /** Transcription: the recogniser, and the server of the openai-compatible one. */
  speech: {
    engine: 'pocketsphinx' | 'openai-compatible';
    url: string | undefined;
    apiKey: string | undefined;
    model: string;
    /** Transcriptions one worker process runs at once. */
    concurrency: number;
  };
  llm: {
    upstreams: LlmUpstreamSettings[];
    models: Record<string, LlmModelSettings>;
    simulated: boolean;
  };
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
