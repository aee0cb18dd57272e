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
  reconnect_window_seconds: Type.Integer({
    description: 'How long the event stays `live` after its encoder drops, waiting for it to reconnect',
  }),
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

export const ReplayPlayback = Type.Object(
  {
    protocol: Type.Literal('hls'),
    hls_url: Type.String({ description: 'The replay playlist (HLS VOD)' }),
    url: Type.String({ description: 'The same address as `hls_url`' }),
    ready: Type.Boolean(),
    duration_seconds: Type.Number(),
    recording_count: Type.Integer({ description: 'Encoder connections the replay plays, in order' }),
    published_at: Timestamp(),
    expires_at: Timestamp('When the recordings, and with them the replay, expire'),
  },
  { description: 'The published replay of an ended event' },
);

export const LiveEventDetail = Type.Intersect([
  LiveEvent,
  Type.Object({
    ingest_status: Type.Union([Type.Literal('idle'), Type.Literal('receiving')]),
    current_session: Nullable(Type.Object({ id: Type.String(), started_at: Timestamp() })),
    recording_count: Type.Integer(),
    replay_playback: Nullable(ReplayPlayback),
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
  reconnect_window_seconds: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 1800, description: "Default: the plan's (60)" }),
  ),
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
  replay_playback: Nullable(ReplayPlayback),
  access_grant: Nullable(
    Type.String({ description: 'With `?token=` or a bearer of the customer: the grant issued (`ag_…`)' }),
  ),
  access_grant_expires_at: NullableTimestamp(),
  embed_enabled: Type.Boolean(),
  banner_url: Nullable(Type.String()),
  logo_url: Nullable(Type.String()),
});

export const SlugParams = Type.Object({ slug: Type.String() });

// --- viewer access ----------------------------------------------------------------------------

const Playback = Nullable(Type.Object({ hls_url: Type.String(), protocol: Type.Literal('hls') }));

export const VerifyPasswordBody = Type.Object({ password: Type.String({ minLength: 1, maxLength: 200 }) });
export const VerifyTokenBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'The full token value (`wt_…`)' }),
});
export const ConsumeGrantBody = Type.Object({
  access_grant: Type.String({
    pattern: '^ag_',
    maxLength: 200,
    description: 'From verify-password or verify-token',
  }),
});

export const VerifyResult = Type.Object({
  verified: Type.Boolean(),
  reason: Nullable(
    Type.Union([Type.Literal('invalid'), Type.Literal('expired'), Type.Literal('exhausted')], {
      description: 'Why `verified` is false: a wrong secret, or a token past its expiry or its uses',
    }),
  ),
  access_grant: Nullable(Type.String({ description: '`ag_…`: consume it when playback starts' })),
  access_grant_expires_at: NullableTimestamp(),
  watch_state: Type.Union(WATCH_STATES.map((s) => Type.Literal(s))),
  playback_mode: Type.Union([Type.Literal('live'), Type.Literal('replay'), Type.Literal('none')]),
  live_playback: Playback,
  replay_playback: Nullable(ReplayPlayback),
});

export const ConsumeResult = Type.Object({
  consumed: Type.Boolean(),
  already_consumed: Type.Boolean(),
  playback_expires_at: NullableTimestamp(),
});

// --- watch tokens -----------------------------------------------------------------------------

export const CreateTokenBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'A label, e.g. who it is for' }),
    ),
    expires_at: Type.Optional(Nullable(Iso)),
    max_uses: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
  },
  { additionalProperties: false },
);

export const WatchToken = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  name: Nullable(Type.String()),
  token_prefix: Type.String({ description: 'The first characters of the token, to tell tokens apart' }),
  status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('exhausted')]),
  expires_at: NullableTimestamp(),
  max_uses: Nullable(Type.Integer()),
  use_count: Type.Integer(),
  last_used_at: NullableTimestamp(),
  created_at: Timestamp(),
});

export const CreatedWatchToken = Type.Intersect([
  WatchToken,
  Type.Object({ token: Type.String({ description: 'Shown once; Fjord keeps only a hash' }) }),
]);

export const WatchTokenList = Type.Object({
  tokens: Type.Array(WatchToken),
  page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
});

export const PageQuery = pageQuery('per_page', 20, 100);

// --- sessions, ingest, health, recordings, stats ------------------------------------------------

const Video = Nullable(
  Type.Object({ codec: Type.String(), width: Nullable(Type.Integer()), height: Nullable(Type.Integer()) }),
);
const Audio = Nullable(
  Type.Object({
    codec: Type.String(),
    sample_rate: Nullable(Type.Integer()),
    channels: Nullable(Type.String()),
  }),
);

export const IngestSession = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('ended')]),
  started_at: Timestamp(),
  ended_at: NullableTimestamp(),
  end_reason: Nullable(Type.String({ description: 'Why the connection ended (see the live events guide)' })),
  duration_seconds: Type.Integer(),
  bytes_received: Type.Integer(),
  video: Video,
  audio: Audio,
  bitrate_kbps: Nullable(Type.Integer()),
  frame_rate: Nullable(Type.Number()),
  keyframe_interval_seconds: Nullable(Type.Number()),
  dropped_frames: Type.Integer(),
  last_frame_at: NullableTimestamp(),
});

export const IngestSessionList = Type.Object({
  sessions: Type.Array(IngestSession),
  page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
});

export const IngestInfo = Type.Object({
  event_id: Type.String(),
  ingest_url: Type.String(),
  protocol: Type.Literal('rtmp'),
  stream_key: Type.Object({
    prefix: Nullable(
      Type.String({ description: 'First characters of the current key (the key is not kept)' }),
    ),
    rotated_at: NullableTimestamp(),
  }),
  publish_url: Type.String({ description: '`{ingest_url}/{stream_key}`' }),
  status: Type.Union([Type.Literal('idle'), Type.Literal('receiving')]),
  accepts_stream: Type.Boolean({ description: 'Whether an encoder may connect in the current status' }),
  current_session: Nullable(IngestSession),
  recommended: Type.Object({
    video_codec: Type.String(),
    audio_codec: Type.String(),
    keyframe_interval_seconds: Type.Integer(),
    max_bitrate_kbps: Type.Integer(),
  }),
});

export const IngestHealth = Type.Object({
  event_id: Type.String(),
  status: Type.Union([
    Type.Literal('idle'),
    Type.Literal('healthy'),
    Type.Literal('warning'),
    Type.Literal('unhealthy'),
  ]),
  reasons: Type.Array(
    Type.Object({
      code: Type.String(),
      severity: Type.Union([Type.Literal('warning'), Type.Literal('critical')]),
      message: Type.String(),
    }),
  ),
  session_id: Nullable(Type.String()),
  bitrate_kbps: Nullable(Type.Integer()),
  max_bitrate_kbps: Type.Integer(),
  frame_rate: Nullable(Type.Number()),
  keyframe_interval_seconds: Nullable(Type.Number()),
  dropped_frames: Type.Integer(),
  last_frame_at: NullableTimestamp(),
  seconds_since_last_frame: Nullable(Type.Integer()),
  checked_at: Timestamp(),
});

export const Recording = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  session_id: Type.String(),
  status: Type.Literal('ready'),
  format: Type.Union([Type.Literal('mp4'), Type.Literal('hls')], {
    description:
      "`mp4`: the connection made an MP4 in object storage (`size_bytes`, `duration_seconds` are the file's); `hls`: kept as its HLS segments only (ffmpeg could not make an MP4 of what the encoder sent)",
  }),
  content_type: Type.String(),
  download_url: Nullable(
    Type.String({ description: 'The MP4, for the same credentials as this list (null for `hls`)' }),
  ),
  duration_seconds: Type.Number(),
  size_bytes: Type.Integer(),
  segment_count: Type.Integer(),
  started_at: Timestamp(),
  ended_at: Timestamp(),
  expires_at: Timestamp(),
  created_at: Timestamp(),
});

export const RecordingList = Type.Object({
  recordings: Type.Array(Recording),
  page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
});

export const EventStats = Type.Object({
  event_id: Type.String(),
  status: Status,
  current_viewers: Type.Integer(),
  peak_viewers: Type.Integer(),
  peak_at: NullableTimestamp(),
  total_viewers: Type.Integer(),
  minutes_watched: Type.Number(),
  segments_served: Type.Integer(),
  bytes_served: Type.Integer(),
  playlist_requests: Type.Integer(),
  live_duration_seconds: Type.Integer(),
  measured_at: Timestamp(),
});
