import type { FastifyReply } from 'fastify';

/**
 * Aborted when the client goes away before the answer is complete (the response closes without
 * having finished): a handler passes it to the upstream calls and streams it starts, so they end
 * with the client. One listener per response, gone with it — never on the keep-alive socket.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client closed'));
  });
  return controller.signal;
}
