import { Type } from '@sinclair/typebox';
import { pageQuery } from '../../kernel/http/pagination.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const Strings = Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 100 });
const Vars = (description: string) =>
  Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.String({ maxLength: 32_768 }), {
    description,
  });

export const AppParams = Type.Object({
  app_id: Type.String({ minLength: 1, maxLength: 64, description: 'The app’s id or name' }),
});
export const RevisionParams = Type.Object({
  app_id: Type.String({ minLength: 1, maxLength: 64, description: 'The app’s id or name' }),
  revision_id: Type.String({ minLength: 1, maxLength: 64, description: 'The revision’s id or number' }),
});
export const ListQuery = pageQuery('per_page', 50, 200);

const HealthCheckBody = Type.Object(
  {
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, pattern: '^/' })),
    interval_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 300 })),
    timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })),
    failure_threshold: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
  },
  { additionalProperties: false },
);
const HealthCheckView = Type.Object({
  path: Type.String(),
  interval_seconds: Type.Integer(),
  timeout_seconds: Type.Integer(),
  failure_threshold: Type.Integer(),
});

const revisionFields = {
  command: Type.Optional(
    Type.Union([Strings, Type.Null()], { description: 'Entrypoint; null: the image’s' }),
  ),
  args: Type.Optional(Type.Union([Strings, Type.Null()], { description: 'Arguments; null: the image’s' })),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_535 })),
  env: Type.Optional(Vars('Environment variables, returned as they are')),
  secrets: Type.Optional(Vars('Environment variables encrypted at rest and never returned')),
  plan_code: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
  concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  min_instances: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  max_instances: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  idle_timeout_seconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 86_400 })),
  health_check: Type.Optional(HealthCheckBody),
};
const Image = Type.Union([
  Type.String({ minLength: 1, maxLength: 500, pattern: '^\\S+$', description: 'A registry reference' }),
  Type.Object(
    {
      upload_id: Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'An image upload (POST /v1/apps/image-uploads)',
      }),
    },
    { additionalProperties: false },
  ),
]);

export const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    image: Image,
    ...revisionFields,
  },
  { additionalProperties: false },
);
export const DeployBody = Type.Object(
  { image: Type.Optional(Image), ...revisionFields },
  { additionalProperties: false, description: 'Fields left out are copied from the latest revision' },
);
export const RollbackBody = Type.Object(
  { revision_id: Type.String({ minLength: 1, maxLength: 64, description: 'A revision id or number' }) },
  { additionalProperties: false },
);

const RevisionRef = Type.Object({ id: Type.String(), number: Type.Integer(), status: Type.String() });
export const AppView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  region: Type.String(),
  url: Type.String(),
  status: Type.String({ description: 'deploying, running, scaled_to_zero, failed or suspended' }),
  status_message: Type.String(),
  current_revision: Type.Union([RevisionRef, Type.Null()]),
  latest_revision: Type.Union([RevisionRef, Type.Null()]),
  min_instances: Type.Integer(),
  max_instances: Type.Integer(),
  instances_running: Type.Integer(),
  driver: Type.String(),
  simulated: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export const AppList = Type.Object({
  apps: Type.Array(AppView),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});
export const Deleted = Type.Object({ deleted: Type.Literal(true), id: Type.String() });

export const RevisionView = Type.Object({
  id: Type.String(),
  app_id: Type.String(),
  number: Type.Integer(),
  status: Type.String({ description: 'deploying, ready or failed' }),
  status_message: Type.String(),
  serving: Type.Boolean(),
  image: Type.String(),
  image_upload_id: Nullable(Type.String()),
  command: Type.Union([Type.Array(Type.String()), Type.Null()]),
  args: Type.Union([Type.Array(Type.String()), Type.Null()]),
  port: Type.Integer(),
  env: Type.Record(Type.String(), Type.String()),
  secret_names: Type.Array(Type.String()),
  plan_code: Type.String(),
  cpu: Type.Number(),
  memory_mb: Type.Integer(),
  concurrency: Type.Integer(),
  min_instances: Type.Integer(),
  max_instances: Type.Integer(),
  idle_timeout_seconds: Type.Integer(),
  health_check: HealthCheckView,
  created_at: Type.String(),
  ready_at: Nullable(Type.String()),
  failed_at: Nullable(Type.String()),
});
export const RevisionList = Type.Object({ revisions: Type.Array(RevisionView), total: Type.Integer() });

export const InstanceView = Type.Object({
  id: Type.String(),
  revision_id: Type.String(),
  revision_number: Type.Integer(),
  state: Type.String({ description: 'starting or running' }),
  started_at: Type.String(),
  status_message: Type.String(),
});
export const InstanceList = Type.Object({ instances: Type.Array(InstanceView), total: Type.Integer() });

export const LogsQuery = Type.Object(
  {
    lines: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'The last lines to answer' }),
    ),
    tail: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1000,
        description: 'As `lines`, and 0 allowed (a follow stream with new lines only); wins over `lines`',
      }),
    ),
    since: Type.Optional(
      Type.String({
        maxLength: 40,
        description:
          'Only lines from then on: an RFC 3339 time, or a duration back from now (`90s`, `5m`, `2h`)',
      }),
    ),
    instance: Type.Optional(
      Type.String({ maxLength: 100, description: 'Only this instance (an id from the instances list)' }),
    ),
    follow: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Answer `text/event-stream`: the last lines, then each new one, until the instances stop or the client leaves',
      }),
    ),
  },
  { additionalProperties: false },
);
export const LogLineView = Type.Object({
  time: Type.String(),
  revision_id: Type.String(),
  revision_number: Type.Union([Type.Integer(), Type.Null()]),
  instance: Type.String({ description: 'The instance that wrote it, as the instances list names it' }),
  stream: Type.String({ description: 'stdout or stderr' }),
  text: Type.String(),
});
export const LogList = Type.Object({
  lines: Type.Array(LogLineView),
  simulated: Type.Boolean({
    description: 'True when no container runs and the lines tell what the deploys did',
  }),
});
/**
 * The logs answer in either media type: JSON, or with `follow=true` Server-Sent Events (declared
 * as Fastify and OpenAPI take several: one schema per media type).
 */
export const LogsAnswer = Type.Unsafe<unknown>({
  description: 'The last lines as JSON; with `follow=true`, a `text/event-stream`',
  content: {
    'application/json': { schema: LogList },
    'text/event-stream': {
      schema: Type.String({
        description:
          'One `data: <line as JSON>` event per line; at the end an `end` event, `data: {"reason": "stopped" | "no_instances" | "too_slow" | "error"}`',
      }),
    },
  },
});
export const PlanList = Type.Object({
  plans: Type.Array(
    Type.Object({
      plan_code: Type.String(),
      name: Type.String(),
      cpu: Type.Number(),
      memory_mb: Type.Integer(),
      max_processes: Type.Integer({ description: 'Processes and threads an instance may have at once' }),
    }),
  ),
});

export const UploadParams = Type.Object({ upload_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const CreateUploadBody = Type.Object(
  {
    size_bytes: Type.Integer({
      minimum: 1,
      description: 'The archive’s size; the upload URL accepts at most this many bytes',
    }),
  },
  { additionalProperties: false },
);
export const UploadView = Type.Object({
  id: Type.String(),
  status: Type.String({ description: 'awaiting_upload, uploaded or expired' }),
  image: Type.String({ description: 'The local reference revisions of this upload run' }),
  max_bytes: Type.Integer(),
  upload_url: Type.Optional(Type.String({ description: 'Presigned PUT URL; shown once, at creation' })),
  upload_method: Type.Optional(Type.Literal('PUT')),
  upload_expires_at: Type.String(),
  uploaded_at: Nullable(Type.String()),
  created_at: Type.String(),
});

export const VolumeParams = Type.Object({
  app_id: Type.String({ minLength: 1, maxLength: 64, description: 'The app’s id or name' }),
  volume_id: Type.String({ minLength: 1, maxLength: 64, description: 'The volume’s id or name' }),
});
export const CreateVolumeBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    size_gb: Type.Integer({ minimum: 1, maximum: 100_000 }),
    mount_path: Type.String({ minLength: 1, maxLength: 256 }),
    snapshot_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Start from this snapshot’s files' }),
    ),
  },
  { additionalProperties: false },
);
export const VolumeView = Type.Object({
  id: Type.String(),
  app_id: Type.String(),
  name: Type.String(),
  size_gb: Type.Integer(),
  mount_path: Type.String(),
  used_bytes: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Bytes its files take now; null when no container runtime stores it (simulated)',
  }),
  size_enforced: Type.Union([Type.Boolean(), Type.Null()], {
    description:
      'True when writes past size_gb fail (its own file system of that size); false where the host cannot make one; null when simulated',
  }),
  source_snapshot_id: Nullable(Type.String()),
  simulated: Type.Boolean(),
  created_at: Type.String(),
});
export const VolumeList = Type.Object({ volumes: Type.Array(VolumeView), total: Type.Integer() });
export const SnapshotView = Type.Object({
  id: Type.String(),
  volume_id: Type.String(),
  app_id: Type.String(),
  status: Type.String({ description: 'creating, ready or failed' }),
  size_bytes: Type.Union([Type.Integer(), Type.Null()]),
  error: Nullable(Type.String()),
  created_at: Type.String(),
  ready_at: Nullable(Type.String()),
});
export const SnapshotList = Type.Object({ snapshots: Type.Array(SnapshotView), total: Type.Integer() });

export const DomainParams = Type.Object({
  app_id: Type.String({ minLength: 1, maxLength: 64, description: 'The app’s id or name' }),
  domain_id: Type.String({ minLength: 1, maxLength: 260, description: 'The domain’s id or host name' }),
});
export const CreateDomainBody = Type.Object(
  { host_name: Type.String({ minLength: 1, maxLength: 260, description: 'e.g. www.example.com' }) },
  { additionalProperties: false },
);
export const DomainView = Type.Object({
  id: Type.String(),
  app_id: Type.String(),
  host_name: Type.String(),
  status: Type.String({ description: 'pending or active' }),
  status_message: Type.String(),
  cname_target: Type.String({ description: 'The host the name’s CNAME must point at' }),
  certificate_status: Type.String({ description: 'pending, issued or failed' }),
  certificate_error: Nullable(Type.String()),
  certificate_issuer: Type.String({ description: 'local-ca: the CA of GET /v1/apps/certificate-authority' }),
  certificate_pem: Nullable(Type.String({ description: 'The issued certificate chain (public), PEM' })),
  certificate_issued_at: Nullable(Type.String()),
  certificate_expires_at: Nullable(Type.String()),
  checked_at: Nullable(Type.String()),
  created_at: Type.String(),
});
export const DomainList = Type.Object({ domains: Type.Array(DomainView), total: Type.Integer() });
export const CaView = Type.Object({
  certificate_pem: Type.String({
    description: 'The local CA’s certificate: trust it to reach custom domains over HTTPS',
  }),
});

export const MetricsQuery = Type.Object(
  {
    window: Type.Optional(
      Type.Integer({ minimum: 60, maximum: 3600, default: 3600, description: 'Seconds back from now' }),
    ),
  },
  { additionalProperties: false },
);
const Latency = Type.Object({
  p50: Type.Union([Type.Number(), Type.Null()]),
  p95: Type.Union([Type.Number(), Type.Null()]),
});
export const MetricsView = Type.Object({
  window_seconds: Type.Integer(),
  requests: Type.Integer(),
  errors: Type.Integer({ description: 'Answers with a 5xx status' }),
  latency_ms: Latency,
  per_minute: Type.Array(
    Type.Object({
      minute: Type.String(),
      requests: Type.Integer(),
      errors: Type.Integer(),
      latency_ms: Latency,
    }),
  ),
  instances: Type.Array(
    Type.Object({
      instance: Type.String(),
      revision_number: Type.Union([Type.Integer(), Type.Null()]),
      cpu_percent: Type.Union([Type.Number(), Type.Null()]),
      memory_bytes: Type.Union([Type.Integer(), Type.Null()]),
    }),
  ),
  simulated: Type.Boolean({ description: 'True when no container runs: no traffic or use to measure' }),
});
