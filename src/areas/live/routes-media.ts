import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../kernel/http/route.js';
import type { LiveAccess } from './access.js';
import type { LiveMedia } from './media.js';
import { access, rateLimit, TAG } from './routes.js';
import {
  CreatedWatchToken,
  CreateTokenBody,
  EventIdParams,
  EventStats,
  IngestHealth,
  IngestInfo,
  IngestSessionList,
  PageQuery,
  RecordingList,
  WatchTokenList,
} from './schemas.js';

/** An event's recordings, watch tokens, statistics, ingest, health and sessions. */
export function mediaRoutes(media: LiveMedia, viewers: LiveAccess) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/events/:event_id/recordings',
      operationId: 'listLiveEventRecordings',
      tag: TAG,
      summary: "List an event's recordings, newest first",
      description:
        'With `record_enabled`, each encoder connection made while the event was live is kept as a recording when the event stops (`ending` → `processing` → `ended`): an MP4 in object storage (`download_url`) and the HLS its replay plays, for `retention_days`.',
      access: access(false),
      rateLimit,
      params: EventIdParams,
      query: PageQuery,
      response: { 200: RecordingList },
      errors: [404],
      handler: async ({ principal, params, query }) =>
        media.recordings(principal.customerId, params.event_id, query.page ?? 1, query.per_page ?? 20),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/events/:event_id/recordings/:recording_id/download',
      operationId: 'downloadLiveEventRecording',
      tag: TAG,
      summary: "A recording's MP4",
      description:
        'The file itself (`video/mp4`, `Content-Disposition: attachment`). 404 for a recording kept as HLS only, or past its `expires_at`.',
      access: access(false),
      rateLimit,
      idempotency: false,
      params: Type.Object({ event_id: Type.String(), recording_id: Type.String() }),
      produces: 'video/mp4',
      response: { 200: Type.String({ description: 'The MP4 file' }) },
      errors: [404],
      handler: async ({ principal, params, reply }) => {
        const file = await media.download(principal.customerId, params.event_id, params.recording_id);
        return reply
          .header('content-type', 'video/mp4')
          .header('content-length', String(file.size))
          .header('content-disposition', `attachment; filename="${file.filename}"`)
          .send(file.body);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/live-events/events/:event_id/tokens',
      operationId: 'createLiveEventWatchToken',
      tag: TAG,
      summary: 'Create a watch token (the token is shown once)',
      description:
        'Viewers of a `token` event present it to verify-token. `expires_at` and `max_uses` are optional; a use is counted when a grant from the token is consumed (playback starts).',
      access: access(true),
      rateLimit,
      params: EventIdParams,
      body: CreateTokenBody,
      response: { 201: CreatedWatchToken },
      errors: [403, 404],
      handler: async ({ principal, params, body }) =>
        viewers.createToken(principal.customerId, params.event_id, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/events/:event_id/tokens',
      operationId: 'listLiveEventWatchTokens',
      tag: TAG,
      summary: "List an event's watch tokens, newest first (never their values)",
      access: access(false),
      rateLimit,
      params: EventIdParams,
      query: PageQuery,
      response: { 200: WatchTokenList },
      errors: [404],
      handler: async ({ principal, params, query }) =>
        viewers.listTokens(principal.customerId, params.event_id, query.page ?? 1, query.per_page ?? 20),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/events/:event_id/stats',
      operationId: 'getLiveEventStats',
      tag: TAG,
      summary: 'Viewing statistics, counted from the HLS segments Fjord serves',
      description:
        'A viewer is current while they fetched a segment in the last 30 seconds; viewers are counted without keeping their addresses.',
      access: access(false),
      rateLimit,
      params: EventIdParams,
      response: { 200: EventStats },
      errors: [404],
      handler: async ({ principal, params }) => media.stats(principal.customerId, params.event_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/events/:event_id/ingest',
      operationId: 'getLiveEventIngest',
      tag: TAG,
      summary: 'Where to stream (RTMP address, stream key prefix) and what the encoder sends now',
      access: access(false),
      rateLimit,
      params: EventIdParams,
      response: { 200: IngestInfo },
      errors: [404],
      handler: async ({ principal, params }) => media.ingest(principal.customerId, params.event_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/events/:event_id/health',
      operationId: 'getLiveEventHealth',
      tag: TAG,
      summary: 'Ingest health with reasons (bitrate, keyframes, audio, stalls, dropped frames)',
      access: access(false),
      rateLimit,
      params: EventIdParams,
      response: { 200: IngestHealth },
      errors: [404],
      handler: async ({ principal, params }) => media.health(principal.customerId, params.event_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/events/:event_id/sessions',
      operationId: 'listLiveEventSessions',
      tag: TAG,
      summary: 'Encoder connections, newest first: start, end, why it ended, bytes received',
      access: access(false),
      rateLimit,
      params: EventIdParams,
      query: PageQuery,
      response: { 200: IngestSessionList },
      errors: [404],
      handler: async ({ principal, params, query }) =>
        media.sessions(principal.customerId, params.event_id, query.page ?? 1, query.per_page ?? 20),
    }),
  ];
}
