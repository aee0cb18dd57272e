import { Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../../kernel/http/common-schemas.js';

export const KmsKeyParams = Type.Object({ key_id: Type.String({ minLength: 1, maxLength: 300 }) });

export const KmsKey = Type.Object(
  {
    key_id: Type.String({ description: 'A UUID' }),
    arn: Type.String({ description: '`arn:aws:kms:<region>:<account>:key/<key_id>`' }),
    alias: Nullable(Type.String({ description: '`alias/…`; the default key is `alias/aws/s3`' })),
    description: Nullable(Type.String()),
    key_state: Type.Union(
      [Type.Literal('Enabled'), Type.Literal('Disabled'), Type.Literal('PendingDeletion')],
      {
        description: '`PendingDeletion` once deletion is scheduled: the key neither wraps nor unwraps',
      },
    ),
    is_default: Type.Boolean({ description: 'The key S3 uses when a request names none' }),
    current_version: Type.Integer({ minimum: 1, description: 'The version that wraps new data keys' }),
    versions: Type.Array(Type.Object({ version: Type.Integer({ minimum: 1 }), created_at: Timestamp() })),
    created_at: Timestamp(),
    rotated_at: NullableTimestamp(),
    deletion_date: NullableTimestamp('While `PendingDeletion`: when the key material is destroyed for good'),
  },
  { title: 'StorageKmsKey' },
);

export const ScheduleKmsKeyDeletionBody = Type.Object(
  {
    pending_window_days: Type.Optional(
      Type.Integer({
        minimum: 7,
        maximum: 30,
        default: 30,
        description: 'The waiting period before the key is destroyed, in days (7-30, default 30)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreateKmsKeyBody = Type.Object(
  {
    alias: Type.Optional(Nullable(Type.String({ minLength: 7, maxLength: 256, pattern: '^alias/' }))),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  { additionalProperties: false },
);
