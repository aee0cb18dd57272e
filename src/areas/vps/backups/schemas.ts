import { Type } from '@sinclair/typebox';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const Id = Type.String({ minLength: 1, maxLength: 64 });

export const BackupParams = Type.Object({ vps_id: Id, backup_id: Id });
export const DownloadParams = Type.Object({ backup_id: Id });
/** The link's token is in the query string: the router caps path parameters at 100 characters. */
export const DownloadQuery = Type.Object({ token: Type.String({ minLength: 10, maxLength: 4000 }) });
export const UsageQuery = Type.Object(
  { currency: Type.Optional(Type.String({ minLength: 3, maxLength: 3 })) },
  { additionalProperties: false },
);

export const BackupView = Type.Object(
  {
    id: Type.String(),
    vps_id: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    kind: Type.Union([Type.Literal('manual'), Type.Literal('automatic')], {
      description: '`manual` (POST …/backups) or `automatic` (the backup policy)',
    }),
    status: Type.String({ description: '`creating`, `available` or `failed`' }),
    format: Type.Literal('tar.gz'),
    size_bytes: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'Size of the archive in object storage; null until available',
    }),
    sha256: Nullable(Type.String({ description: 'SHA-256 of the archive, hex' })),
    os_template: Type.String(),
    created_at: Type.String(),
    completed_at: Nullable(Type.String()),
    error: Nullable(Type.String({ description: 'Why a `failed` backup failed' })),
  },
  { title: 'VpsBackup' },
);
export const BackupList = Type.Object({
  backups: Type.Array(BackupView, { description: 'Newest first' }),
  total: Type.Integer(),
  max_backups: Type.Integer({ description: 'Manual backups a server keeps; also the longest retention' }),
});
export const BackupBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
export const BackupDeleted = Type.Object({ status: Type.Literal('deleted'), backup_id: Type.String() });
export const Restored = Type.Object({
  status: Type.Literal('restored'),
  backup_id: Type.String(),
  vps_id: Type.String(),
  restored_at: Type.String(),
  message: Type.String(),
});
export const DownloadLinkView = Type.Object({
  backup_id: Type.String(),
  vps_id: Type.String(),
  download_url: Type.String({ description: 'GET it without credentials until expires_at' }),
  expires_at: Type.String(),
  filename: Type.String(),
  format: Type.Literal('tar.gz'),
  size_bytes: Type.Integer({ minimum: 0 }),
  sha256: Type.String(),
});

const Frequency = Type.Union([Type.Literal('daily'), Type.Literal('weekly')]);
export const PolicyView = Type.Object(
  {
    vps_id: Type.String(),
    enabled: Type.Boolean(),
    frequency: Frequency,
    hour_utc: Type.Integer({ minimum: 0, maximum: 23 }),
    day_of_week: Type.Integer({ minimum: 0, maximum: 6, description: '0 = Sunday; weekly backups only' }),
    retention_count: Type.Integer({ description: 'Automatic backups kept; the oldest go first' }),
    max_retention: Type.Integer(),
    next_run_at: Nullable(Type.String()),
    last_run_at: Nullable(Type.String()),
    updated_at: Nullable(Type.String()),
  },
  { title: 'VpsBackupPolicy' },
);
export const PolicyBody = Type.Object(
  {
    enabled: Type.Boolean(),
    frequency: Type.Optional(Frequency),
    hour_utc: Type.Optional(Type.Integer({ minimum: 0, maximum: 23 })),
    day_of_week: Type.Optional(Type.Integer({ minimum: 0, maximum: 6 })),
    retention_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  { additionalProperties: false },
);
export const UsageView = Type.Object(
  {
    vps_id: Type.String(),
    region: Type.String(),
    server_status: Type.String({ description: 'Backups are billed in every status, stopped included' }),
    backup_count: Type.Integer(),
    manual_backups: Type.Integer(),
    automatic_backups: Type.Integer(),
    max_backups: Type.Integer(),
    used_bytes: Type.Integer({ minimum: 0 }),
    used_gb: Type.Number({ description: 'used_bytes / 10^9' }),
    price_per_gb_month: Type.Number(),
    estimated_monthly_cost: Type.Number(),
    currency: Type.String(),
  },
  { title: 'VpsBackupUsage' },
);
