import { Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../../kernel/http/common-schemas.js';
import { pageQuery } from '../../kernel/http/pagination.js';
import { WATCH_STATES } from './watch.js';

export const STATUSES = [
  'draft',
  'scheduled',
  'ready',
  'rehearsal',
  'live',
  'ending',
  'ended',
  'processing',
  'failed',
  'cancelled',
] as const;
export type EventStatus = (typeof STATUSES)[number];

export const VISIBILITY = ['public', 'token', 'password', 'tenant_only'] as const;
export type Visibility = (typeof VISIBILITY)[number];

const Status = Type.Union(STATUSES.map((s) => Type.Literal(s)));
const VisibilityMode = Type.Union(VISIBILITY.map((s) => Type.Literal(s)));
const Slug = Type.String({ pattern: '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$', description: 'URL-safe' });
const Iso = Type.String({ format: 'date-time' });

export const LiveEvent = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  status: Status,
  scheduled_start_at: NullableTimestamp(),
  scheduled_end_at: NullableTimestamp(),
  actual_start_at: NullableTimestamp(),
  actual_end_at: NullableTimestamp(),
  timezone: Type.String(),
  visibility_mode: VisibilityMode,
  record_enabled: Type.Boolean(),
  replay_enabled: Type.Boolean(),
  rehearsal_enabled: Type.Boolean(),
  embed_enabled: Type.Boolean(),
  auto_start_on_ingest: Type.Boolean(),
  max_bitrate_kbps: Type.Integer(),
  retention_days: Type.Integer(),
  ingest_url: Type.String({ description: '`rtmp://{ingest_host}/live`; the stream key goes after it' }),
  watch_url: Type.String(),
  embed_url: Type.String(),
  hls_url: Type.String({ description: 'HLS playlist of the latest stream (public events)' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

export const CreatedLiveEvent = Type.Intersect([
  LiveEvent,
  Type.Object({ stream_key: Type.String({ description: 'Shown once; rotate it to get a new one' }) }),
]);

export const LiveEventDetail = Type.Intersect([
  LiveEvent,
  Type.Object({
    ingest_status: Type.Union([Type.Literal('idle'), Type.Literal('receiving')]),
    current_session: Nullable(Type.Object({ id: Type.String(), started_at: Timestamp() })),
    recording_count: Type.Integer(),
  }),
]);

export const LiveEventList = Type.Object({
  events: Type.Array(LiveEvent),
  page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
});

export const ListEventsQuery = Type.Intersect([
  pageQuery('per_page', 20, 100),
  Type.Object({ status: Type.Optional(Status) }),
]);

const common = {
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  scheduled_start_at: Type.Optional(Nullable(Iso)),
  scheduled_end_at: Type.Optional(Nullable(Iso)),
  visibility_mode: Type.Optional(VisibilityMode),
  password: Type.Optional(Type.String({ minLength: 4, maxLength: 200 })),
  record_enabled: Type.Optional(Type.Boolean()),
  replay_enabled: Type.Optional(Type.Boolean()),
  embed_enabled: Type.Optional(Type.Boolean()),
  auto_start_on_ingest: Type.Optional(Type.Boolean()),
};

export const CreateEventBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    slug: Type.Optional(Slug),
    ...common,
    timezone: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'IANA name; default UTC' }),
    ),
    rehearsal_enabled: Type.Optional(Type.Boolean()),
    max_bitrate_kbps: Type.Optional(Type.Integer({ minimum: 100 })),
    retention_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
    draft: Type.Optional(Type.Boolean({ description: 'Create in `draft` (not publicly resolvable)' })),
  },
  { additionalProperties: false },
);

export const UpdateEventBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), ...common },
  { additionalProperties: false },
);

export const EventIdParams = Type.Object({ event_id: Type.String() });

export const RotatedKey = Type.Object({
  id: Type.String(),
  stream_key: Type.String(),
  ingest_url: Type.String(),
});

export const LiveLimits = Type.Object({
  plan: Type.String(),
  max_events: Nullable(Type.Integer()),
  max_bitrate_kbps: Type.Integer(),
  reconnect_window_seconds: Type.Integer(),
  max_retention_days: Type.Integer(),
});

export const WatchView = Type.Object({
  event_id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  status: Status,
  watch_state: Type.Union(WATCH_STATES.map((s) => Type.Literal(s))),
  visibility_mode: VisibilityMode,
  requires_auth: Type.Boolean(),
  auth_type: Nullable(
    Type.Union([Type.Literal('password'), Type.Literal('token'), Type.Literal('tenant_only')]),
  ),
  scheduled_start_at: NullableTimestamp(),
  scheduled_end_at: NullableTimestamp(),
  actual_start_at: NullableTimestamp(),
  actual_end_at: NullableTimestamp(),
  replay_published_at: NullableTimestamp(),
  timezone: Type.String(),
  countdown_enabled: Type.Boolean(),
  playback_mode: Type.Union([Type.Literal('live'), Type.Literal('replay'), Type.Literal('none')]),
  live_playback: Nullable(Type.Object({ hls_url: Type.String(), protocol: Type.Literal('hls') })),
  replay_playback: Nullable(Type.Object({ hls_url: Type.String(), protocol: Type.Literal('hls') })),
  embed_enabled: Type.Boolean(),
  banner_url: Nullable(Type.String()),
  logo_url: Nullable(Type.String()),
});

export const SlugParams = Type.Object({ slug: Type.String() });
