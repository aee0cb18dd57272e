import { Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../../kernel/http/common-schemas.js';

export const DbTypeSchema = Type.Union([Type.Literal('postgresql'), Type.Literal('mariadb')], {
  description: 'Database engine',
});
const NAME = { minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_]+$' };

export const DbTypeParams = Type.Object({ db_type: DbTypeSchema });
export const DbParams = Type.Object({ db_type: DbTypeSchema, db_name: Type.String(NAME) });
export const RuleParams = Type.Object({
  db_type: DbTypeSchema,
  db_name: Type.String(NAME),
  rule_id: Type.String({ minLength: 1, maxLength: 64 }),
});
export const SnapshotParams = Type.Object({
  db_type: DbTypeSchema,
  db_name: Type.String(NAME),
  snapshot_id: Type.String({ minLength: 1, maxLength: 64 }),
});

export const Tier = Type.Union([Type.Literal('standard'), Type.Literal('encrypted')]);

export const CreateBody = Type.Object(
  {
    db_type: DbTypeSchema,
    db_name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 30,
        pattern: '^[a-z0-9_]+$',
        description: '(A) lowercase letters, digits, underscore',
      }),
    ),
    requested_name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 30,
        pattern: '^[A-Za-z0-9_]+$',
        description: '(B) suffix after the customer prefix; stored lowercased',
      }),
    ),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    tier: Type.Optional(Tier),
    customer_id: Type.Optional(
      Type.String({ maxLength: 64, description: '(B) honoured for internal service keys only' }),
    ),
  },
  { additionalProperties: false },
);

export const CreatedA = Type.Object(
  {
    ok: Type.Boolean(),
    created: Type.Boolean(),
    friendly_name: Type.String(),
    technical_name: Type.String(),
    db_type: DbTypeSchema,
    host: Type.String(),
    port: Type.Integer(),
    username: Type.String(),
    password: Type.String({ description: 'Shown once' }),
    connection_string: Type.String(),
  },
  { title: 'DatabaseCreatedA' },
);

export const CreatedB = Type.Object(
  {
    success: Type.Boolean(),
    db_type: DbTypeSchema,
    db_name: Type.String(),
    username: Type.String(),
    password: Nullable(Type.String({ description: 'Shown once; null when the database already existed' })),
    host: Type.String(),
    port: Type.Integer(),
    connection_string: Type.String(),
    message: Type.String(),
    password_generated: Type.Boolean(),
    idempotent: Type.Boolean(),
  },
  { title: 'DatabaseCreatedB' },
);

/**
 * The creation answer: form A's fields or form B's, as the request's form implies. One object
 * with every field optional, since the serialiser cannot pick between two shapes.
 */
export const Created = Type.Object(
  Object.fromEntries(
    Object.entries({ ...CreatedA.properties, ...CreatedB.properties }).map(([k, v]) => [k, Type.Optional(v)]),
  ),
  { title: 'DatabaseCreated' },
);

export const ListEntry = Type.Object(
  {
    name: Type.String(),
    technical_name: Type.String(),
    type: DbTypeSchema,
    description: Nullable(Type.String()),
    tier: Tier,
    host: Type.String(),
    created_at: Timestamp(),
  },
  { title: 'DatabaseListEntry' },
);

export const DatabaseList = Type.Object({ databases: Type.Array(ListEntry), total: Type.Integer() });
export const NamesOfType = Type.Object({ db_type: DbTypeSchema, databases: Type.Array(Type.String()) });
export const TypeListQuery = Type.Object({ customer_id: Type.Optional(Type.String({ maxLength: 64 })) });

export const Detail = Type.Object(
  {
    db_name: Type.String(),
    friendly_name: Type.String(),
    technical_name: Type.String(),
    db_type: DbTypeSchema,
    host: Type.String(),
    port: Type.Integer(),
    status: Type.String({ description: 'As the server reports it; `unknown` when it does not answer' }),
    size_mb: Nullable(Type.Number()),
    created_at: Timestamp(),
    description: Nullable(Type.String()),
    tier: Tier,
    connection_limit: Type.Integer(),
  },
  { title: 'DatabaseDetail' },
);

export const Info = Type.Object(
  {
    db_name: Type.String(),
    db_type: DbTypeSchema,
    size_mb: Nullable(Type.Number()),
    connection_count: Nullable(Type.Integer()),
    connection_limit: Nullable(Type.Integer()),
    created_at: Nullable(Timestamp()),
    owner: Nullable(Type.String()),
    status: Type.String(),
  },
  { title: 'DatabaseInfo' },
);

export const TierRecord = Type.Object(
  { tier: Tier, name: Type.String(), description: Type.String(), is_encrypted: Type.Boolean() },
  { title: 'DatabaseTier' },
);

export const Engine = Type.Object(
  {
    name: DbTypeSchema,
    versions: Type.Array(Type.String()),
    default_version: Nullable(Type.String()),
    driver: Type.String({ description: '`embedded`, `external` or `simulated`' }),
    simulated: Type.Boolean(),
    status: Type.String(),
  },
  { title: 'DatabaseEngine' },
);

export const DeleteBody = Type.Object(
  {
    db_type: DbTypeSchema,
    db_name: Type.String(NAME),
    username: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
export const UsernameQuery = Type.Object({ username: Type.Optional(Type.String({ maxLength: 100 })) });

export const Deleted = Type.Object({
  ok: Type.Boolean(),
  deleted: Type.Boolean(),
  db_name: Type.String(),
  success: Type.Boolean(),
  message: Type.String(),
});

export const PatchBody = Type.Object(
  {
    connection_limit: Type.Optional(Type.Integer({ minimum: 10, maximum: 1000 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const Credentials = Type.Object(
  {
    host: Type.String(),
    port: Type.Integer(),
    database: Type.String(),
    username: Type.String(),
    connection_string: Type.String({ description: 'Without the password' }),
  },
  { title: 'DatabaseCredentials' },
);

export const Rotated = Type.Object({
  success: Type.Boolean(),
  db_name: Type.String(),
  username: Type.String(),
  password: Type.String({ description: 'Shown once' }),
  host: Type.String(),
  port: Type.Integer(),
  connection_string: Type.String(),
  created_at: Timestamp(),
});

export const FirewallRule = Type.Object(
  {
    rule_id: Type.String(),
    db_name: Type.String(),
    db_type: DbTypeSchema,
    ip_address: Type.String(),
    port: Type.Integer(),
    description: Nullable(Type.String()),
    created_at: Timestamp(),
  },
  { title: 'DatabaseFirewallRule' },
);
export const FirewallList = Type.Object({ rules: Type.Array(FirewallRule), total: Type.Integer() });
export const FirewallBody = Type.Object(
  {
    ip_address: Type.String({ minLength: 7, maxLength: 18, description: 'IPv4 address or IPv4 CIDR block' }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  { additionalProperties: false },
);
export const RuleDeleted = Type.Object({
  ok: Type.Boolean(),
  message: Type.String(),
  rule_id: Type.String(),
});

export const Metrics = Type.Object(
  {
    db_name: Type.String(),
    db_type: DbTypeSchema,
    collected_at: Timestamp(),
    connections: Type.Object({ active: Type.Integer(), limit: Type.Integer() }),
    size_mb: Type.Number(),
    transactions: Type.Object({ commits: Nullable(Type.Integer()), rollbacks: Nullable(Type.Integer()) }),
    cache_hit_ratio: Nullable(Type.Number()),
    cache_hit_scope: Type.String({
      description: '`database` (PostgreSQL) or `server` (MariaDB buffer pool)',
    }),
    rows: Type.Object({ read: Nullable(Type.Integer()), written: Nullable(Type.Integer()) }),
  },
  { title: 'DatabaseMetrics' },
);

const Used = Type.Object({ used: Type.Integer(), limit: Type.Integer() });
export const Quota = Type.Object(
  {
    plan: Type.String(),
    databases: Used,
    database_size_mb: Type.Integer(),
    snapshots_per_database: Type.Integer(),
    connections_per_database: Type.Integer(),
    connection_limit_range: Type.Object({ min: Type.Integer(), max: Type.Integer() }),
    firewall_rules_per_database: Type.Integer(),
    rate_limits: Type.Object({
      api_requests_per_minute: Type.Integer(),
      creations_per_hour: Type.Integer(),
      snapshots_per_hour: Type.Integer(),
    }),
  },
  { title: 'DatabaseQuota' },
);

export const HistoryEntry = Type.Object(
  {
    id: Type.String(),
    action: Type.String(),
    db_name: Nullable(Type.String()),
    db_type: Nullable(Type.String()),
    actor_type: Type.String(),
    actor_id: Nullable(Type.String()),
    details: Type.Record(Type.String(), Type.Unknown()),
    created_at: Timestamp(),
  },
  { title: 'DatabaseHistoryEntry' },
);
export const History = Type.Object({
  history: Type.Array(HistoryEntry),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});

export const Snapshot = Type.Object(
  {
    snapshot_id: Type.String(),
    db_name: Type.String(),
    db_type: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    kind: Type.String({ description: '`manual` or `automatic` (backup policy)' }),
    status: Type.String({ description: '`creating`, `available` or `failed`' }),
    format: Type.String(),
    encrypted: Type.Boolean(),
    size_bytes: Nullable(Type.Integer()),
    created_at: Timestamp(),
    completed_at: NullableTimestamp(),
  },
  { title: 'DatabaseSnapshot' },
);
export const SnapshotList = Type.Object({
  snapshots: Type.Array(Snapshot),
  total: Type.Integer(),
  max_snapshots: Type.Integer(),
});
/** Optional body: a POST without one takes a snapshot with a generated name. */
export const SnapshotBody = Type.Union([
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' })),
      description: Type.Optional(Type.String({ maxLength: 500 })),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export const SnapshotFile = Type.String({
  format: 'binary',
  description: 'gzip-compressed SQL, as pg_dump or mariadb-dump wrote it',
});

export const SnapshotDeleted = Type.Object({
  ok: Type.Boolean(),
  snapshot_id: Type.String(),
  message: Type.String(),
});

export const RestoreBody = Type.Object(
  {
    snapshot_id: Type.String({ minLength: 1, maxLength: 64 }),
    target_db_name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 30,
        pattern: '^[a-z0-9_]+$',
        description: 'Restore into a new database of this name (form A naming); absent: into this database',
      }),
    ),
  },
  { additionalProperties: false },
);
export const Restored = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  db_type: DbTypeSchema,
  db_name: Type.String(),
  snapshot_id: Type.String(),
  source_db_name: Type.String(),
  restored_at: Timestamp(),
  new_database: Nullable(
    Type.Object({
      db_name: Type.String(),
      username: Type.String(),
      password: Type.String(),
      host: Type.String(),
      port: Type.Integer(),
      connection_string: Type.String(),
    }),
  ),
});

const Frequency = Type.Union([Type.Literal('hourly'), Type.Literal('daily'), Type.Literal('weekly')]);
export const BackupPolicy = Type.Object(
  {
    db_name: Type.String(),
    db_type: Type.String(),
    enabled: Type.Boolean(),
    frequency: Frequency,
    hour_utc: Type.Integer(),
    retention_count: Type.Integer(),
    next_run_at: NullableTimestamp(),
    last_run_at: NullableTimestamp(),
  },
  { title: 'DatabaseBackupPolicy' },
);
export const BackupPolicyBody = Type.Object(
  {
    enabled: Type.Boolean(),
    frequency: Type.Optional(Frequency),
    hour_utc: Type.Optional(Type.Integer({ minimum: 0, maximum: 23 })),
    retention_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
);
export const HistoryQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  db_name: Type.Optional(Type.String(NAME)),
});
