import type { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Registry } from 'prom-client';
import { KeyedHistogram } from '../observe/keyed-histogram.js';

const statusTexts: string[] = [];
/** A status as a label value, made once per status. */
const statusText = (status: number): string => (statusTexts[status] ??= String(status));

/** Prometheus metrics of one Fjord process; areas add their own to `registry`. */
export class HttpMetrics {
  readonly registry = new Registry();
  private readonly duration: KeyedHistogram<'method' | 'route' | 'status'>;
  readonly authFailures: Counter<'reason'>;

  constructor(withDefaults = true) {
    if (withDefaults) collectDefaultMetrics({ register: this.registry, prefix: 'fjord_' });
    this.duration = new KeyedHistogram(
      'fjord_http_request_duration_seconds',
      'API request duration by route and status',
      ['method', 'route', 'status'],
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      this.registry,
    );
    this.authFailures = new Counter({
      name: 'fjord_auth_failures_total',
      help: 'Requests refused with 401 or 403',
      labelNames: ['reason'],
      registers: [this.registry],
    });
  }

  end(req: FastifyRequest, reply: FastifyReply): void {
    const status = reply.statusCode;
    this.duration.observe(
      [req.method, req.routeOptions.url ?? 'unmatched', statusText(status)],
      reply.elapsedTime / 1000,
    );
    if (status === 401 || status === 403) this.authFailures.inc({ reason: String(status) });
  }
}
