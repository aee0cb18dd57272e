import type { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Registry } from 'prom-client';
import { type HistogramSeries, KeyedHistogram } from '../observe/keyed-histogram.js';

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

  /**
   * What a route keeps to record its requests: its series by method and status, so that the
   * common case builds no label key (`routeOptions` alone, a getter that builds an object, was
   * a measurable share of a small request).
   */
  forRoute(url: string | null): RouteSeries {
    return { route: url ?? 'unmatched', byMethod: new Map() };
  }

  /** The series of requests that matched no route. */
  readonly unmatched: RouteSeries = this.forRoute(null);

  /** Records a finished request of the route `of` (`forRoute`, or `unmatched`). */
  end(req: FastifyRequest, reply: FastifyReply, of: RouteSeries): void {
    const status = reply.statusCode;
    let byStatus = of.byMethod.get(req.method);
    if (!byStatus) {
      byStatus = new Map();
      of.byMethod.set(req.method, byStatus);
    }
    const kept = byStatus.get(status);
    const series = kept ?? this.duration.seriesOf([req.method, of.route, statusText(status)]);
    const counted = this.duration.observeIn(series, reply.elapsedTime / 1000);
    if (counted !== kept) byStatus.set(status, counted);
    if (status === 401 || status === 403) this.authFailures.inc({ reason: String(status) });
  }
}

export interface RouteSeries {
  readonly route: string;
  readonly byMethod: Map<string, Map<number, HistogramSeries>>;
}
