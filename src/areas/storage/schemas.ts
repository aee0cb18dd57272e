import { Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../../kernel/http/common-schemas.js';
import { BUCKET_NAME_PATTERN } from './validation.js';

const CORS_METHODS = ['GET', 'PUT', 'HEAD', 'POST', 'DELETE', 'OPTIONS'] as const;
const Tier = Type.Union([Type.Literal('standard'), Type.Literal('enterprise')]);
const ActionName = Type.String({ minLength: 1, maxLength: 100, description: 'From GET /v1/storage/actions' });

export const BucketParams = Type.Object({ bucket_name: Type.String({ minLength: 1, maxLength: 255 }) });
export const BucketKeyParams = Type.Object({
  bucket_name: Type.String({ minLength: 1, maxLength: 255 }),
  key_id: Type.String({ minLength: 1, maxLength: 100 }),
});
export const KeyParams = Type.Object({ key_id: Type.String({ minLength: 1, maxLength: 100 }) });

// Buckets

export const Bucket = Type.Object(
  {
    bucket_name: Type.String(),
    storage_tier: Tier,
    region: Type.String({ description: 'Always `no`' }),
    created_at: Timestamp(),
    is_active: Type.Boolean(),
    is_public: Type.Boolean({ description: 'true means anonymous clients can read objects' }),
    total_storage_gb: Type.Number({ description: 'Storage used, in GB (10^9 bytes)' }),
    total_objects: Type.Integer(),
    name: Type.String({ description: 'Older form: the bucket name' }),
    size_bytes: Type.Integer({ description: 'Older form: storage used in bytes' }),
    object_count: Type.Integer({ description: 'Older form: number of objects' }),
  },
  { title: 'StorageBucket' },
);

export const BucketListQuery = Type.Object({
  page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Older form: page, from 1' }),
  ),
  per_page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, description: 'Older form: buckets per page (default 100)' }),
  ),
});

export const BucketList = Type.Union(
  [
    Type.Array(Bucket),
    Type.Object(
      { buckets: Type.Array(Bucket), total: Type.Integer() },
      { title: 'StorageBucketListOlderForm' },
    ),
  ],
  { description: 'An array; the older `{buckets, total}` form when `page` or `per_page` is given' },
);

export const CreateBucketBody = Type.Object(
  {
    bucket_name: Type.String({
      pattern: BUCKET_NAME_PATTERN,
      description: '3-63 lowercase letters, digits and hyphens, starting and ending with a letter or digit',
    }),
    tier: Type.Optional(Tier),
    region: Type.Optional(
      Type.String({ maxLength: 64, description: '`no` (the legacy `no-oslo-1` is accepted)' }),
    ),
    is_public: Type.Optional(Type.Boolean()),
    object_lock_enabled: Type.Optional(
      Type.Boolean({
        description: 'Fjord: enable object lock (only possible at creation; turns on versioning)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreatedBucket = Type.Object(
  {
    success: Type.Boolean(),
    bucket_name: Type.String(),
    message: Type.String(),
    endpoint: Type.String({ description: 'The S3 endpoint URL' }),
    region: Type.String(),
    tier: Tier,
    access_key: Type.String({ description: 'Access key id of the bucket’s default key' }),
    secret_key: Type.String({ description: 'Shown only in this response' }),
  },
  { title: 'CreatedStorageBucket' },
);

export const Success = Type.Object({ success: Type.Boolean(), message: Type.String() });

export const VisibilityBody = Type.Object({ is_public: Type.Boolean() }, { additionalProperties: false });
export const Visibility = Type.Object(
  { success: Type.Boolean(), bucket_name: Type.String(), is_public: Type.Boolean(), message: Type.String() },
  { title: 'StorageBucketVisibility' },
);

// Bucket keys

const bucketKeyFields = {
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  access_key: Type.String(),
  actions: Type.Array(Type.String(), { description: 'S3 actions granted on the bucket' }),
  full_access: Type.Boolean({ description: 'true when the key has every action (no `actions` given)' }),
  created_at: Timestamp(),
};

export const BucketKey = Type.Object(
  { ...bucketKeyFields, is_default: Type.Boolean(), last_used_at: NullableTimestamp() },
  { title: 'StorageBucketKey' },
);
export const CreatedBucketKey = Type.Object(
  {
    ...bucketKeyFields,
    secret_key: Type.String({ description: 'Shown only in this response' }),
    endpoint: Type.String(),
  },
  { title: 'CreatedStorageBucketKey' },
);

const KeyName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Not blank' });
const Description = Nullable(Type.String({ maxLength: 500 }));
const Actions = Type.Array(ActionName, { minItems: 1, maxItems: 100 });

export const CreateBucketKeyBody = Type.Object(
  {
    name: KeyName,
    description: Type.Optional(Description),
    actions: Type.Optional(Nullable(Actions)),
  },
  { additionalProperties: false },
);
export const UpdateBucketKeyBody = Type.Object(
  {
    name: Type.Optional(KeyName),
    description: Type.Optional(Description),
    actions: Type.Optional(
      Nullable(
        Type.Array(ActionName, {
          minItems: 1,
          maxItems: 100,
          description: 'Replaces the grants; null restores full access',
        }),
      ),
    ),
  },
  { additionalProperties: false },
);

// Account keys

const GrantInput = Type.Object(
  {
    bucket_name: Type.String({
      minLength: 1,
      maxLength: 63,
      description: 'A bucket of the account, or `*` for every bucket',
    }),
    actions: Type.Optional(Nullable(Actions)),
  },
  { additionalProperties: false },
);
const Grant = Type.Object({
  bucket_name: Type.String(),
  actions: Type.Array(Type.String()),
  full_access: Type.Boolean(),
});

const accountKeyFields = {
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  access_key: Type.String(),
  actions: Type.Array(Type.String(), {
    description: 'Account-level actions: s3:ListAllMyBuckets, s3:CreateBucket',
  }),
  buckets: Type.Array(Grant, { description: 'Per-bucket grants' }),
  created_at: Timestamp(),
};
export const AccountKey = Type.Object(
  { ...accountKeyFields, last_used_at: NullableTimestamp() },
  { title: 'StorageAccountKey' },
);
export const CreatedAccountKey = Type.Object(
  {
    ...accountKeyFields,
    secret_key: Type.String({ description: 'Shown only in this response' }),
    endpoint: Type.String(),
  },
  { title: 'CreatedStorageAccountKey' },
);
export const CreateAccountKeyBody = Type.Object(
  {
    name: KeyName,
    description: Type.Optional(Description),
    actions: Type.Optional(Type.Array(ActionName, { maxItems: 10 })),
    buckets: Type.Optional(Type.Array(GrantInput, { maxItems: 1000 })),
  },
  { additionalProperties: false },
);
export const UpdateAccountKeyBody = Type.Object(
  {
    name: Type.Optional(KeyName),
    description: Type.Optional(Description),
    actions: Type.Optional(
      Type.Array(ActionName, { maxItems: 10, description: 'Replaces the account-level actions' }),
    ),
    buckets: Type.Optional(
      Type.Array(GrantInput, { maxItems: 1000, description: 'Replaces every bucket grant' }),
    ),
  },
  { additionalProperties: false },
);

export const LegacyCredentials = Type.Object(
  {
    access_key_id: Type.String(),
    secret_access_key: Type.String(),
    endpoint_url: Type.String(),
    region: Type.String({ description: 'The signing region, `eu-north-1`' }),
  },
  { title: 'StorageCredentials' },
);

// CORS

const CorsRuleOut = Type.Object({
  id: Type.String(),
  allowed_origins: Type.Array(Type.String()),
  allowed_methods: Type.Array(Type.String()),
  allowed_headers: Type.Array(Type.String()),
  expose_headers: Type.Array(Type.String()),
  max_age_seconds: Nullable(Type.Integer()),
});
export const CorsDocument = Type.Object({ rules: Type.Array(CorsRuleOut) }, { title: 'StorageCorsDocument' });

const HeaderName = Type.String({ minLength: 1, maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" });
export const CorsBody = Type.Object(
  {
    rules: Type.Array(
      Type.Object(
        {
          id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
          allowed_origins: Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), {
            minItems: 1,
            maxItems: 100,
          }),
          allowed_methods: Type.Array(Type.Union(CORS_METHODS.map((m) => Type.Literal(m))), {
            minItems: 1,
            maxItems: 6,
          }),
          allowed_headers: Type.Optional(Type.Array(HeaderName, { maxItems: 100 })),
          expose_headers: Type.Optional(Type.Array(HeaderName, { maxItems: 100 })),
          max_age_seconds: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 86400 }))),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  { additionalProperties: false },
);

// Lifecycle, versioning, object lock

export { LifecycleBody, LifecycleDocument } from './lifecycle-schemas.js';

const VersioningStatus = Type.Union([
  Type.Literal('Unversioned'),
  Type.Literal('Enabled'),
  Type.Literal('Suspended'),
]);
export const Versioning = Type.Object(
  { bucket_name: Type.String(), status: VersioningStatus, object_lock_enabled: Type.Boolean() },
  { title: 'StorageVersioning' },
);
export const VersioningBody = Type.Object(
  { status: Type.Union([Type.Literal('Enabled'), Type.Literal('Suspended')]) },
  { additionalProperties: false },
);

export const ObjectLock = Type.Object(
  {
    bucket_name: Type.String(),
    object_lock_enabled: Type.Boolean(),
    versioning: VersioningStatus,
    default_retention: Nullable(
      Type.Object({
        mode: Type.Union([Type.Literal('GOVERNANCE'), Type.Literal('COMPLIANCE')]),
        days: Nullable(Type.Integer()),
        years: Nullable(Type.Integer()),
      }),
    ),
  },
  { title: 'StorageObjectLock' },
);

// Catalogues

export const Action = Type.Object(
  {
    action: Type.String(),
    scope: Type.Union([Type.Literal('bucket'), Type.Literal('account')]),
    category: Type.String(),
    description: Type.String(),
    operations: Type.Array(Type.String()),
  },
  { title: 'StorageAction' },
);
export const StorageTier = Type.Object(
  { tier: Tier, name: Type.String(), description: Type.String(), is_default: Type.Boolean() },
  { title: 'StorageTier' },
);

export const S3Guide = Type.Object(
  {
    endpoint: Type.String(),
    region: Type.String({ description: 'The signing region' }),
    accepted_signing_regions: Type.Array(Type.String()),
    storage_region: Type.String(),
    signature_version: Type.String(),
    addressing: Type.Object({ path_style: Type.String(), virtual_host_style: Nullable(Type.String()) }),
    credentials: Type.String(),
    limits: Type.Object({
      max_upload_bytes: Type.Union([Type.Integer(), Type.Null()], { description: 'null: no limit' }),
      max_connections_per_key: Type.Union([Type.Integer(), Type.Null()], { description: 'null: no limit' }),
      list_page_size: Type.Integer(),
      multipart_min_part_bytes: Type.Integer(),
    }),
    examples: Type.Array(
      Type.Object({
        client: Type.String(),
        title: Type.String(),
        language: Type.String(),
        code: Type.String(),
      }),
    ),
  },
  { title: 'S3UsageGuide' },
);
