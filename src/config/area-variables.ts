import type { VariableSpec } from './variables.js';

/** The FJORD_* variables of the areas (domain verification onwards); VARIABLES includes them. */
export const AREA_VARIABLES = {
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
  FJORD_APPS_IMAGE_REGISTRIES: {
    kind: 'string',
    default: 'docker.io,quay.io,ghcr.io',
    doc: 'Comma-separated registries container app revisions may name images from: `host[:port]`, optionally with a path prefix (`ghcr.io/acme` allows `ghcr.io/acme/…` only). Short names such as `nginx:1.27` are Docker Hub’s (`docker.io/library/nginx:1.27`). `none` (or empty): uploaded images only. See docs/container-apps.md.',
  },
  FJORD_APPS_IMAGE_ALLOW_PRIVATE: {
    kind: 'boolean',
    default: 'false',
    doc: 'Whether a listed registry may sit on a loopback, link-local or private address (`localhost`, 10.x, 169.254.x …). Off, such pulls are refused, as webhooks to those addresses are.',
  },
  FJORD_VPS_DRIVER: {
    kind: 'enum',
    default: 'simulated',
    values: ['simulated', 'namespace'],
    doc: 'What runs virtual servers: `simulated` (states on the clock, no server) or `namespace` (real Debian servers in Linux namespaces over overlayfs, with sshd; needs root, overlayfs and debootstrap). See docs/vps.md.',
  },
  FJORD_VPS_TEMPLATE_DIR: {
    kind: 'string',
    doc: 'Where the namespace driver keeps the Debian root of each OS template, built once with debootstrap (default: `vps/templates` in the data dir). Several data dirs may share one.',
  },
  FJORD_VPS_ON_STOP: {
    kind: 'enum',
    default: 'stop',
    values: ['stop', 'leave'],
    doc: 'What a stopping Fjord does to running namespace servers: `stop` shuts them down gracefully (the next start boots those that were running), `leave` keeps them running for the next start to adopt.',
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
