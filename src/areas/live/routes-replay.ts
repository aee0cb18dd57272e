import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { publicAccess } from '../../kernel/auth/principal.js';
import { AppError } from '../../kernel/errors.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { LiveAccess } from './access.js';
import { liveErrors } from './errors.js';
import type { LiveMedia } from './media.js';
import type { LiveEventsTable } from './migrations.js';
import { sessionSegments } from './playlist.js';
import type { LiveService } from './service.js';

const SEGMENT = /^seg\d{5}\.ts$/;
const VIEWER_TAG = 'Live events (viewer)';
const GrantQuery = Type.Object({ grant: Type.Optional(Type.String({ maxLength: 200 })) });

const accessRequired = () =>
  new AppError('forbidden', 'access_required', 'This event needs a consumed access grant (`grant`).');

/** 403 unless the viewer may play the event (public, or a consumed grant); the viewer's grant id. */
export async function allowed(viewers: LiveAccess, row: LiveEventsTable, grant: string | undefined) {
  const grantId = await viewers.mayPlay(row, grant);
  if (grantId === false) throw accessRequired();
  return grantId;
}

/**
 * One segment of a session, with the caching of the event's HLS (immutable; `private` unless the
 * event is public), counted in the event's stats as one viewer's watching.
 */
export async function serveSegment(
  ctx: { viewers: LiveAccess; media: LiveMedia; sessionsDir: string },
  row: LiveEventsTable,
  sessionId: string,
  file: string,
  grantId: string | null,
  raw: FastifyRequest,
  reply: FastifyReply,
): Promise<Buffer> {
  const body = SEGMENT.test(file)
    ? await readFile(join(ctx.sessionsDir, sessionId, file)).catch(() => null)
    : null;
  if (!body) throw liveErrors.eventNotFound(row.id);
  reply.header('content-type', 'video/mp2t');
  const scope = row.visibility_mode === 'public' ? 'public' : 'private';
  reply.header('cache-control', `${scope}, max-age=86400, immutable`);
  // A viewer is the grant they play with, or a keyed hash of address and browser.
  const viewer =
    grantId ?? (await ctx.viewers.clientKey(row.id, `${raw.ip}|${raw.headers['user-agent'] ?? ''}`));
  const seconds = (await sessionSegments(ctx.sessionsDir, sessionId)).find((s) => s.file === file)?.seconds;
  await ctx.media.countSegment(row.id, viewer, body.length, seconds ?? 0);
  return body;
}

/**
 * The replay of an ended event: one HLS VOD playlist over its recordings, and their segments,
 * under the access rules of its live HLS. Gone (404) once the recordings expire.
 */
export function replayRoutes(live: LiveService, viewers: LiveAccess, media: LiveMedia, sessionsDir: string) {
  const replayOf = async (eventId: string) => {
    const row = await live.repo.byId(eventId);
    const recs = row ? await live.replay.recordings(row) : null;
    if (!row || !recs) throw liveErrors.eventNotFound(eventId);
    return { row, recs };
  };
  return [
    defineRoute({
      method: 'GET',
      url: '/live/replay/:event_id/index.m3u8',
      operationId: 'getLiveEventReplayPlaylist',
      tag: VIEWER_TAG,
      summary: "The replay of an ended event: an HLS VOD playlist over the event's recordings",
      description:
        'One playlist over every encoder connection of the live period, in order, with `#EXT-X-DISCONTINUITY` between them. Public events need nothing; other events need `grant`, a consumed access grant (the playlist then names its segments with it). 404 when there is no published replay (not ended, replay off, or the recordings expired).',
      access: publicAccess,
      idempotency: false,
      params: Type.Object({ event_id: Type.String() }),
      query: GrantQuery,
      response: { 200: Type.String() },
      produces: 'application/vnd.apple.mpegurl',
      errors: [403, 404],
      handler: async ({ params, query, reply }) => {
        const { row, recs } = await replayOf(params.event_id);
        await allowed(viewers, row, query.grant);
        await media.countPlaylist(row.id);
        reply.header('content-type', 'application/vnd.apple.mpegurl');
        // The replay disappears with its recordings: caches must ask again.
        reply.header('cache-control', 'no-cache');
        return live.replay.playlist(recs, query.grant ? `?grant=${encodeURIComponent(query.grant)}` : '');
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/live/replay/:event_id/:session_id/:file',
      operationId: 'getLiveEventReplaySegment',
      tag: VIEWER_TAG,
      summary: 'A segment (`segNNNNN.ts`) of a recording in an event’s replay',
      description:
        "Named by the replay playlist. Segments never change and may be cached for a day; each one served is counted in the event's stats.",
      access: publicAccess,
      idempotency: false,
      params: Type.Object({ event_id: Type.String(), session_id: Type.String(), file: Type.String() }),
      query: GrantQuery,
      response: { 200: Type.String() },
      produces: 'video/mp2t',
      errors: [403, 404],
      handler: async ({ params, query, reply, raw }) => {
        const { row, recs } = await replayOf(params.event_id);
        if (!recs.some((r) => r.session_id === params.session_id)) throw liveErrors.eventNotFound(row.id);
        const grantId = await allowed(viewers, row, query.grant);
        return serveSegment(
          { viewers, media, sessionsDir },
          row,
          params.session_id,
          params.file,
          grantId,
          raw,
          reply,
        );
      },
    }),
  ];
}
