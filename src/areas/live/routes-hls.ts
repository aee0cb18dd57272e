import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { publicAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import { liveErrors } from './errors.js';
import { SlugParams, WatchView } from './schemas.js';
import type { LiveService } from './service.js';

const FILE = /^(index\.m3u8|seg\d{5}\.ts)$/;

/** HLS playlists and segments, straight from the ingest's session directory. */
export function hlsRoutes(live: LiveService, sessionsDir: string) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/watch/:slug',
      operationId: 'getLiveEventWatchView',
      tag: 'Live events (viewer)',
      summary: 'What a watch or embed page shows for an event (no authentication)',
      description:
        'Polled every 10 seconds by the watch page. `live_playback` is present only when the event is live and public; drafts and unknown slugs answer 404.',
      access: publicAccess,
      params: SlugParams,
      response: { 200: WatchView },
      errors: [404],
      handler: async ({ params }) => live.watch(params.slug) as never,
    }),
    defineRoute({
      method: 'GET',
      url: '/live/hls/:event_id/:file',
      operationId: 'getLiveEventHls',
      tag: 'Live events (viewer)',
      summary: 'An HLS playlist (`index.m3u8`) or segment (`segNNNNN.ts`) of a public event',
      description:
        'The playlist is not cached (it grows while the event is live); segments never change and may be cached for a day.',
      access: publicAccess,
      idempotency: false,
      params: Type.Object({ event_id: Type.String(), file: Type.String() }),
      response: { 200: Type.String() },
      produces: 'application/vnd.apple.mpegurl',
      errors: [404],
      handler: async ({ params, reply }) => {
        const session = FILE.test(params.file) ? await live.playbackSession(params.event_id) : null;
        if (!session) throw liveErrors.eventNotFound(params.event_id);
        const body = await readFile(join(sessionsDir, session, params.file)).catch(() => null);
        if (!body) throw liveErrors.eventNotFound(params.event_id);
        const playlist = params.file.endsWith('.m3u8');
        reply.header('content-type', playlist ? 'application/vnd.apple.mpegurl' : 'video/mp2t');
        reply.header('cache-control', playlist ? 'no-cache' : 'public, max-age=86400, immutable');
        return body;
      },
    }),
  ];
}
