import type { Logger } from 'pino';
import type { LlmUpstreamSettings } from '../../config/llm-settings.js';
import { AppError } from '../../kernel/errors.js';
import type { ModelEntry } from './catalogue.js';

export interface UpstreamAnswer {
  status: number;
  headers: Headers;
  /** Read it to the end or cancel it; the client's abort signal aborts it too. */
  body: ReadableStream<Uint8Array> | null;
  upstream: LlmUpstreamSettings;
  upstreamModel: string;
}

/** Attempts per route before moving to the next one: the first plus one retry. */
const ATTEMPTS_PER_ROUTE = 2;
const BACKOFF_MS = 150;

/**
 * Calls the first route of `model` that answers, LiteLLM-style: a connection error, a timeout
 * before the answer starts, or a 5xx is retried once after a short backoff and then moves to the
 * next route. Once an answer has started (headers received) it is the answer: nothing is retried
 * mid-stream, so a client never sees two answers spliced. A 4xx is the upstream refusing the
 * request itself and is returned as it is (no other route would accept it either).
 */
export async function callUpstream(
  model: ModelEntry,
  path: string,
  bodyFor: (upstreamModel: string) => unknown,
  clientSignal: AbortSignal,
  log: Logger,
): Promise<UpstreamAnswer> {
  let lastProblem = 'no route';
  for (const route of model.routes) {
    for (let attempt = 1; attempt <= ATTEMPTS_PER_ROUTE; attempt++) {
      if (clientSignal.aborted)
        throw new AppError('bad_request', 'client_closed', 'The client closed the request.');
      const controller = new AbortController();
      const onClientAbort = () => controller.abort(clientSignal.reason);
      clientSignal.addEventListener('abort', onClientAbort, { once: true });
      const timer = setTimeout(() => controller.abort(new Error('timeout')), model.timeoutMs);
      try {
        const res = await fetch(`${route.upstream.url}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(route.upstream.api_key ? { authorization: `Bearer ${route.upstream.api_key}` } : {}),
          },
          body: JSON.stringify(bodyFor(route.model)),
          signal: controller.signal,
        });
        clearTimeout(timer);
        if (res.status >= 500) {
          lastProblem = `${route.upstream.name} answered ${res.status}`;
          await res.body?.cancel().catch(() => {});
          clientSignal.removeEventListener('abort', onClientAbort);
        } else {
          // The client's abort keeps reaching the upstream for as long as the body streams.
          return {
            status: res.status,
            headers: res.headers,
            body: res.body,
            upstream: route.upstream,
            upstreamModel: route.model,
          };
        }
      } catch (err) {
        clearTimeout(timer);
        clientSignal.removeEventListener('abort', onClientAbort);
        if (clientSignal.aborted)
          throw new AppError('bad_request', 'client_closed', 'The client closed the request.');
        lastProblem = controller.signal.aborted
          ? `${route.upstream.name} did not answer within ${model.timeoutMs} ms`
          : `${route.upstream.name}: ${(err as Error).message}`;
      }
      log.warn(
        { model: model.id, upstream: route.upstream.name, attempt, problem: lastProblem },
        'llm upstream failed',
      );
      if (attempt < ATTEMPTS_PER_ROUTE) await new Promise((r) => setTimeout(r, BACKOFF_MS * attempt));
    }
  }
  throw new AppError(
    'bad_gateway',
    'upstream_unavailable',
    `No upstream of ${model.id} could answer (${lastProblem}).`,
  );
}
