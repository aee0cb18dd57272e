/**
 * Every FJORD_* variable Fjord reads, in one table. `docs/configuration.md` is checked against
 * this table by a test, so a variable cannot exist without being documented.
 */
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
  FJORD_S3_PORT: { kind: 'port', default: '9000', doc: 'Port of the S3 data plane (role `s3`).' },
  FJORD_DNS_PORT: {
    kind: 'port',
    default: '5300',
    doc: 'UDP and TCP port of the authoritative DNS server (role `dns`).',
  },
  FJORD_MQTT_PORT: { kind: 'port', default: '1883', doc: 'Port of the MQTT broker (role `mqtt`).' },
  FJORD_RTMP_PORT: { kind: 'port', default: '1935', doc: 'Port of the RTMP ingest (role `rtmp`).' },
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
    doc: 'Redis for shared counters (rate limits) when several processes run. Unset: in memory.',
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
  FJORD_WEBHOOK_ALLOW_PRIVATE: {
    kind: 'boolean',
    default: 'false',
    doc: 'Allow webhook targets in private, loopback and link-local ranges (tests, closed networks).',
  },
  FJORD_WORKER_POLL_MS: {
    kind: 'integer',
    default: '500',
    min: 10,
    max: 60000,
    doc: 'How often an idle worker looks for due jobs.',
  },
  FJORD_DATABASE_ENGINES: {
    kind: 'enum',
    default: 'auto',
    values: ['auto', 'embedded', 'external', 'simulated'],
    doc: "Where customer databases live. `auto`: an external server when its admin URL is set, else Fjord's own embedded PostgreSQL / MariaDB (when installed), else the simulated driver. `embedded` ignores the admin URLs; `external` uses only them; `simulated` touches no server.",
  },
  FJORD_POSTGRES_ADMIN_URL: {
    kind: 'string',
    secret: true,
    doc: 'Admin connection to an external PostgreSQL server for customer databases, e.g. `postgres://admin:pw@db.example:5432/postgres` (a superuser, or a role with CREATEDB and CREATEROLE). Customers are given its host and port; a `?host=/socket/dir` parameter makes the admin connect over that Unix socket.',
  },
  FJORD_POSTGRES_HBA_FILE: {
    kind: 'string',
    doc: 'The pg_hba.conf Fjord writes (whole) and reloads to enforce database firewall rules on an external PostgreSQL server. Unset with an external server: firewall rules are refused (docs/databases.md).',
  },
  FJORD_MARIADB_ADMIN_URL: {
    kind: 'string',
    secret: true,
    doc: 'Admin connection to an external MariaDB server for customer databases, e.g. `mariadb://admin:pw@db.example:3306/` (needs CREATE USER and GRANT OPTION). A `?socket=/path` parameter makes the admin connect over that Unix socket.',
  },
  FJORD_DATABASE_ENCRYPTED_ENGINES: {
    kind: 'list',
    values: ['postgresql', 'mariadb'],
    doc: 'Engines whose external server keeps its data on encrypted storage, as the operator declares; they offer the `encrypted` tier. The embedded MariaDB always does (InnoDB encryption); the embedded PostgreSQL never does.',
  },
  FJORD_DATABASE_INTERNAL_CUSTOMERS: {
    kind: 'string',
    doc: "Customer ids whose database service keys are internal: their `customer_id` field or query parameter is honoured (databases are made for, and listed of, that customer). Every other key's `customer_id` is ignored.",
  },
} as const satisfies Record<string, VariableSpec>;

export type VariableName = keyof typeof VARIABLES;
