import { Type } from '@sinclair/typebox';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import {
  CreatedLiveEvent,
  CreateEventBody,
  EventIdParams,
  ListEventsQuery,
  LiveEvent,
  LiveEventDetail,
  LiveEventList,
  LiveLimits,
  RotatedKey,
  UpdateEventBody,
} from './schemas.js';
import type { LiveService } from './service.js';

export const TAG = 'Live events';
export const rateLimit = ['live-events'];

/** An API key of the `live-events` service, a PAT with `live-events:read`/`:write`, or an OIDC token. */
export const access = (write: boolean): CustomerAccess => ({
  kind: 'customer',
  services: ['live-events'],
  scopes: [write ? 'live-events:write' : 'live-events:read'],
});

const Deleted = Type.Object({ id: Type.String(), deleted: Type.Boolean(), purge_after_days: Type.Integer() });

export function liveRoutes(live: LiveService) {
  const move = (
    url: string,
    operationId: string,
    summary: string,
    description: string,
    run: (customerId: string, actor: Parameters<LiveService['goLive']>[1], id: string) => Promise<unknown>,
  ) =>
    defineRoute({
      method: 'POST',
      url: `/v1/live-events/events/:event_id/${url}`,
      operationId,
      tag: TAG,
      summary,
      description,
      access: access(true),
      rateLimit,
      params: EventIdParams,
      response: { 200: LiveEvent },
      errors: [404, 409],
      handler: async ({ principal, params }) =>
        run(principal.customerId, principal.credential, params.event_id) as never,
    });

  return [
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/events',
      operationId: 'listLiveEvents',
      tag: TAG,
      summary: 'List live events, newest first',
      description:
        '`page` from 1 and `per_page` (default 20, at most 100); `status` filters. Deleted events are not listed.',
      access: access(false),
      rateLimit,
      query: ListEventsQuery,
      response: { 200: LiveEventList },
      handler: async ({ principal, query }) =>
        live.list(principal.customerId, query.status, query.page ?? 1, query.per_page ?? 20),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/live-events/events',
      operationId: 'createLiveEvent',
      tag: TAG,
      summary: 'Create a live event',
      description:
        'The answer carries `stream_key` (shown once) and the ingest, watch and embed addresses. The status is `draft` when `draft` is true, `scheduled` for a future `scheduled_start_at`, else `ready`. The first event activates the live events service.',
      access: access(true),
      rateLimit,
      body: CreateEventBody,
      response: { 201: CreatedLiveEvent },
      errors: [403, 409],
      handler: async ({ principal, body }) => live.create(principal.customerId, principal.credential, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/events/:event_id',
      operationId: 'getLiveEvent',
      tag: TAG,
      summary: 'Get a live event with its ingest status, current session and recording count',
      access: access(false),
      rateLimit,
      params: EventIdParams,
      response: { 200: LiveEventDetail },
      errors: [404],
      handler: async ({ principal, params }) => live.detail(principal.customerId, params.event_id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/live-events/events/:event_id',
      operationId: 'updateLiveEvent',
      tag: TAG,
      summary: 'Change an event (only in draft, scheduled or ready)',
      description: '`password` is required when switching `visibility_mode` to `password`.',
      access: access(true),
      rateLimit,
      params: EventIdParams,
      body: UpdateEventBody,
      response: { 200: LiveEvent },
      errors: [404, 409],
      handler: async ({ principal, params, body }) =>
        live.update(principal.customerId, principal.credential, params.event_id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/live-events/events/:event_id',
      operationId: 'deleteLiveEvent',
      tag: TAG,
      summary: 'Delete an event (soft delete; purged with its recordings after 30 days)',
      description: 'Refused while the event is `live`, `ending` or `processing`.',
      access: access(true),
      rateLimit,
      params: EventIdParams,
      response: { 200: Deleted },
      errors: [404, 409],
      handler: async ({ principal, params }) =>
        live.remove(principal.customerId, principal.credential, params.event_id),
    }),
    move(
      'rehearsal/start',
      'startLiveEventRehearsal',
      'Start a rehearsal (from ready)',
      'The encoder may stream; viewers see `rehearsal_hidden`.',
      (c, a, id) => live.startRehearsal(c, a, id),
    ),
    move('live/start', 'startLiveEvent', 'Go live (from ready or rehearsal)', '', (c, a, id) =>
      live.goLive(c, a, id),
    ),
    move(
      'live/stop',
      'stopLiveEvent',
      'Stop the event (from live or rehearsal)',
      'A live event with recording on goes to `ending` while the recording is finalised, without recording straight to `ended`; a stopped rehearsal goes back to `ready`.',
      (c, a, id) => live.stop(c, a, id),
    ),
    defineRoute({
      method: 'POST',
      url: '/v1/live-events/events/:event_id/stream-key/rotate',
      operationId: 'rotateLiveEventStreamKey',
      tag: TAG,
      summary: 'Issue a new stream key (never while live); the old one stops working at once',
      access: access(true),
      rateLimit,
      params: EventIdParams,
      response: { 200: RotatedKey },
      errors: [404, 409],
      handler: async ({ principal, params }) =>
        live.rotateKey(principal.customerId, principal.credential, params.event_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/live-events/limits',
      operationId: 'getLiveEventLimits',
      tag: TAG,
      summary: "The plan's live event limits",
      access: access(false),
      rateLimit,
      response: { 200: LiveLimits },
      handler: async ({ principal }) => live.planLimits(principal.customerId),
    }),
  ];
}
