import { Type } from '@sinclair/typebox';
import { presentedCredential } from '../../kernel/auth/authenticate.js';
import { publicAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { LiveAccess } from './access.js';
import { liveErrors } from './errors.js';
import type { LiveMedia } from './media.js';
import { joinPlaylist, sessionSegments } from './playlist.js';
import { allowed, serveSegment } from './routes-replay.js';
import {
  ConsumeGrantBody,
  ConsumeResult,
  SlugParams,
  VerifyPasswordBody,
  VerifyResult,
  VerifyTokenBody,
  WatchView,
} from './schemas.js';
import type { LiveService } from './service.js';

const FILE = /^(index\.m3u8|seg\d{5}\.ts)$/;
const VIEWER_TAG = 'Live events (viewer)';

/**
 * The viewer side: the watch view, password and token checks that issue access grants, and the
 * HLS playlists and segments, straight from the ingest's session directory, counted for stats.
 */
export function hlsRoutes(live: LiveService, viewers: LiveAccess, media: LiveMedia, sessionsDir: string) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/watch/:slug',
      operationId: 'getLiveEventWatchView',
      tag: VIEWER_TAG,
      summary: 'What a watch or embed page shows for an event (no authentication)',
      description:
        "Polled every 10 seconds by the watch page. `live_playback` is present only when the event is live and the viewer may watch it, `replay_playback` once an ended event's replay is published. `grant`, a consumed access grant, stands for the password or token it was issued for. On a `token` event, `token` is checked like verify-token and a valid one answers with an `access_grant` (the playback addresses carry it). A `tenant_only` event answers only to a personal access token or Fjord login of its own customer as `Authorization: Bearer` (403 otherwise). Drafts and unknown slugs answer 404.",
      access: publicAccess,
      params: SlugParams,
      query: Type.Object({
        token: Type.Optional(Type.String({ maxLength: 200 })),
        grant: Type.Optional(
          Type.String({
            maxLength: 200,
            description:
              'A consumed access grant of this viewer: while it lets them play, the answer carries playback addresses with it (the watch page sends it on every poll).',
          }),
        ),
      }),
      response: { 200: WatchView },
      errors: [403, 404, 429],
      handler: async ({ params, query, raw }) =>
        viewers.watch(params.slug, {
          token: query.token,
          grant: query.grant,
          bearer: presentedCredential(raw.headers),
          address: raw.ip,
        }) as never,
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/live-events/watch/:slug/verify-password',
      operationId: 'verifyLiveEventPassword',
      tag: VIEWER_TAG,
      summary: "Check a viewer's password; a correct one gets an access grant (`ag_…`)",
      description:
        "A wrong password answers 200 with `verified: false` and is logged (the audit trail of the event's customer); after 10 failed attempts from one address in 10 minutes the endpoint answers 429 with `Retry-After`. 409 when the event is not a `password` event.",
      access: publicAccess,
      params: SlugParams,
      body: VerifyPasswordBody,
      response: { 200: VerifyResult },
      errors: [404, 409, 429],
      handler: async ({ params, body, raw }) => viewers.verifyPassword(params.slug, body.password, raw.ip),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/live-events/watch/:slug/verify-token',
      operationId: 'verifyLiveEventToken',
      tag: VIEWER_TAG,
      summary: 'Check a watch token; a valid one gets an access grant (`use_count` is not changed)',
      description:
        'An unknown, expired or used-up token answers 200 with `verified: false` and a `reason`. Unknown tokens count as failed attempts (10 per address in 10 minutes, then 429). 409 when the event is not a `token` event.',
      access: publicAccess,
      params: SlugParams,
      body: VerifyTokenBody,
      response: { 200: VerifyResult },
      errors: [404, 409, 429],
      handler: async ({ params, body, raw }) => viewers.verifyToken(params.slug, body.token, raw.ip),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/live-events/watch/:slug/consume-grant',
      operationId: 'consumeLiveEventGrant',
      tag: VIEWER_TAG,
      summary: 'Playback starts: consume an access grant (idempotent)',
      description:
        "The first call counts one use of the grant's watch token and makes the grant the viewer's playback pass; later calls answer `already_consumed: true` and count nothing. 403 `grant_expired` for a grant past `access_grant_expires_at` (verify again), 403 `token_expired`/`token_exhausted` when its token can no longer start playback.",
      access: publicAccess,
      params: SlugParams,
      body: ConsumeGrantBody,
      response: { 200: ConsumeResult },
      errors: [403, 404],
      handler: async ({ params, body }) => viewers.consumeGrant(params.slug, body.access_grant),
    }),
    defineRoute({
      method: 'GET',
      url: '/live/hls/:event_id/:file',
      operationId: 'getLiveEventHls',
      tag: VIEWER_TAG,
      summary: 'An HLS playlist (`index.m3u8`) or segment (`segNNNNN.ts`) of an event',
      description:
        "Public events need nothing; `password` and `token` events need `grant`, a consumed access grant (the playlist then names its segments with the grant). The playlist is not cached (it grows while the event is live); segments never change and may be cached for a day. Each segment served is counted in the event's stats.",
      access: publicAccess,
      idempotency: false,
      params: Type.Object({ event_id: Type.String(), file: Type.String() }),
      query: Type.Object({ grant: Type.Optional(Type.String({ maxLength: 200 })) }),
      response: { 200: Type.String() },
      produces: 'application/vnd.apple.mpegurl',
      errors: [403, 404],
      handler: async ({ params, query, reply, raw }) => {
        const row = FILE.test(params.file) ? await live.playbackEvent(params.event_id) : null;
        if (!row) throw liveErrors.eventNotFound(params.event_id);
        const grantId = await allowed(viewers, row, query.grant);
        const ctx = { viewers, media, sessionsDir };
        if (!params.file.endsWith('.m3u8'))
          return serveSegment(ctx, row, row.last_session_id!, params.file, grantId, raw, reply);
        const q = query.grant ? `?grant=${encodeURIComponent(query.grant)}` : '';
        // Segments are named `{session_id}/segNNNNN.ts`: after a reconnect the same file names
        // come again from the new connection, and a player must never mix them up.
        const parts = [];
        for (const id of await live.reconnect.liveSessions(row))
          parts.push({ sessionId: id, segments: await sessionSegments(sessionsDir, id) });
        if (parts.every((p) => p.segments.length === 0)) throw liveErrors.eventNotFound(params.event_id);
        // Open while an encoder sends or a live event waits for one to reconnect.
        const ended = row.status !== 'live' && row.ingest_session_id === null;
        const body = joinPlaylist(parts, { vod: false, ended, query: q });
        reply.header('content-type', 'application/vnd.apple.mpegurl');
        reply.header('cache-control', 'no-cache');
        await media.countPlaylist(row.id);
        return body;
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/live/hls/:event_id/:session_id/:file',
      operationId: 'getLiveEventHlsSessionSegment',
      tag: VIEWER_TAG,
      summary: 'A segment of one encoder connection, named by a live playlist that spans reconnects',
      description:
        "When the encoder reconnected during the live period, the live playlist names segments `{session_id}/segNNNNN.ts`. Access, caching and counting as the event's other HLS.",
      access: publicAccess,
      idempotency: false,
      params: Type.Object({ event_id: Type.String(), session_id: Type.String(), file: Type.String() }),
      query: Type.Object({ grant: Type.Optional(Type.String({ maxLength: 200 })) }),
      response: { 200: Type.String() },
      produces: 'video/mp2t',
      errors: [403, 404],
      handler: async ({ params, query, reply, raw }) => {
        const row = await live.playbackEvent(params.event_id);
        const session = row ? await media.repo.session(params.session_id) : undefined;
        if (!row || session?.event_id !== row.id) throw liveErrors.eventNotFound(params.event_id);
        const grantId = await allowed(viewers, row, query.grant);
        return serveSegment(
          { viewers, media, sessionsDir },
          row,
          session.id,
          params.file,
          grantId,
          raw,
          reply,
        );
      },
    }),
  ];
}
