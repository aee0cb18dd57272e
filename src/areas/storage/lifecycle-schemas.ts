import { Type } from '@sinclair/typebox';
import { Nullable } from '../../kernel/http/common-schemas.js';

/** The control API's lifecycle documents (`/v1/storage/buckets/{bucket_name}/lifecycle`). */

const Days = Type.Integer({ minimum: 1, maximum: 36500 });
const TransitionDays = Type.Integer({ minimum: 0, maximum: 36500 });
/** Storage classes are labels (every class is on the same disk): see the S3 guide. */
const TransitionClass = Type.Union(
  ['STANDARD_IA', 'ONEZONE_IA', 'INTELLIGENT_TIERING', 'GLACIER_IR'].map((c) => Type.Literal(c)),
  {
    description:
      'The storage class the versions take (a label; STANDARD_IA and ONEZONE_IA need 30 days or more)',
  },
);
const TransitionOut = Type.Object({
  days: Nullable(
    Type.Integer({
      description: 'Days after the last modification; null for a rule set at a date through S3',
    }),
  ),
  storage_class: Type.String(),
});
const NoncurrentTransitionOut = Type.Object({
  noncurrent_days: Type.Integer(),
  storage_class: Type.String(),
  newer_noncurrent_versions: Type.Optional(Nullable(Type.Integer())),
});
const LifecycleRuleOut = Type.Object({
  id: Type.String(),
  enabled: Type.Boolean(),
  prefix: Type.String(),
  expiration_days: Nullable(Type.Integer()),
  noncurrent_version_expiration_days: Nullable(Type.Integer()),
  newer_noncurrent_versions: Nullable(
    Type.Integer({ description: 'The newest this many noncurrent versions of each key are kept' }),
  ),
  abort_incomplete_multipart_upload_days: Nullable(Type.Integer()),
  transitions: Nullable(Type.Array(TransitionOut)),
  noncurrent_version_transitions: Nullable(Type.Array(NoncurrentTransitionOut)),
});
export const LifecycleDocument = Type.Object(
  { rules: Type.Array(LifecycleRuleOut) },
  { title: 'StorageLifecycleConfiguration' },
);
export const LifecycleBody = Type.Object(
  {
    rules: Type.Array(
      Type.Object(
        {
          id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
          enabled: Type.Optional(Type.Boolean({ default: true })),
          prefix: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
          expiration_days: Type.Optional(Nullable(Days)),
          noncurrent_version_expiration_days: Type.Optional(Nullable(Days)),
          newer_noncurrent_versions: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 100 }))),
          abort_incomplete_multipart_upload_days: Type.Optional(Nullable(Days)),
          transitions: Type.Optional(
            Nullable(
              Type.Array(
                Type.Object(
                  { days: TransitionDays, storage_class: TransitionClass },
                  { additionalProperties: false },
                ),
                { maxItems: 4 },
              ),
            ),
          ),
          noncurrent_version_transitions: Type.Optional(
            Nullable(
              Type.Array(
                Type.Object(
                  {
                    noncurrent_days: TransitionDays,
                    storage_class: TransitionClass,
                    newer_noncurrent_versions: Type.Optional(
                      Nullable(Type.Integer({ minimum: 1, maximum: 100 })),
                    ),
                  },
                  { additionalProperties: false },
                ),
                { maxItems: 4 },
              ),
            ),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);
