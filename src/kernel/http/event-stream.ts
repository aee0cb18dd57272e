import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/**
 * Takes the response over from Fastify and opens a Server-Sent Events stream on it (200, the
 * headers Fastify's hooks set, such as `x-request-id`, kept). No caching, and no buffering by a
 * proxy in front (`x-accel-buffering: no`), so each event reaches the client as it is written.
 */
export function openEventStream(reply: FastifyReply): ServerResponse {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
  });
  return res;
}
