/**
 * The logs route: the last lines as JSON, or with `follow=true` a Server-Sent Events stream that
 * curl (`-N`) and browsers read as they come. Apart from routes.ts for the stream's plumbing.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientGone } from '../../kernel/http/client-gone.js';
import { openEventStream } from '../../kernel/http/event-stream.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { AppLogReader } from './logs.js';
import { BUCKET, read, TAG } from './routes-common.js';
import { AppParams, LogsAnswer, LogsQuery } from './schemas.js';
import type { AppsService } from './service.js';

/** A comment line this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
/** Bytes written and not yet taken by a client past which its stream ends (`too_slow`). */
const MAX_UNSENT = 4 * 1024 * 1024;

export function logRoutes(apps: AppsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/apps/:app_id/logs',
      operationId: 'appsLogs',
      tag: TAG,
      summary: 'The last lines (stdout and stderr) of the app’s instances, oldest first, or a stream of them',
      description:
        'With `follow=true` the answer is `text/event-stream`: each line as a `data:` event (the JSON of a line), then, when the instances followed have stopped, an `end` event; the stream also ends when the client leaves. Errors (404, 422) come before the stream, as JSON.',
      access: read,
      rateLimit: BUCKET,
      params: AppParams,
      query: LogsQuery,
      response: { 200: LogsAnswer },
      errors: [404],
      handler: async ({ principal, params, query, reply, raw }) => {
        const reader = await apps.logs(principal.customerId, params.app_id, {
          tail: query.tail ?? query.lines ?? 100,
          since: query.since ?? null,
          instance: query.instance?.trim().toLowerCase() || null,
        });
        if (!query.follow) return reader.last();
        return stream(reader, raw, reply);
      },
    }),
  ];
}

async function stream(reader: AppLogReader, req: FastifyRequest, reply: FastifyReply) {
  const gone = clientGone(reply);
  // Ends the follow when the client leaves, or reads so slowly that its lines pile up in memory.
  const stop = new AbortController();
  gone.addEventListener('abort', () => stop.abort(), { once: true });
  const signal = stop.signal;
  let slow = false;
  const res = openEventStream(reply);
  res.flushHeaders();
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  try {
    const reason = await reader.follow((line) => {
      res.write(`data: ${JSON.stringify(line)}\n\n`);
      if (res.writableLength > MAX_UNSENT && !slow) {
        slow = true;
        stop.abort();
      }
    }, signal);
    if (!gone.aborted)
      res.write(`event: end\ndata: ${JSON.stringify({ reason: slow ? 'too_slow' : reason })}\n\n`);
  } catch (err) {
    // The answer has started: an error can only end the stream.
    req.log.warn({ err }, 'apps: a log stream ended early');
    if (!gone.aborted) res.write(`event: end\ndata: ${JSON.stringify({ reason: 'error' })}\n\n`);
  } finally {
    clearInterval(heartbeat);
    res.end();
  }
  return reply;
}
