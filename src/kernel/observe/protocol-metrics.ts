import type { Logger } from 'pino';
import { Counter, Registry } from 'prom-client';
import { KeyedHistogram } from './keyed-histogram.js';

/** Who and what a protocol request was about, for its log line (never a secret or a payload). */
export interface RequestContext {
  /** The customer it was served for, when known (an S3 key's owner, a DNS zone's owner). */
  customer?: string | null;
  /** The plane's own request id (S3's x-amz-request-id), to match a client's report. */
  id?: string;
}

/**
 * The protocol planes' side of `/metrics` and of the logs (S3, DNS, and the MQTT, RTMP and SSH
 * servers the next areas add): one histogram of request durations and one counter of bytes,
 * labelled by protocol, operation and outcome, so every plane reads alike on a dashboard; and a
 * structured `request` line per request, like the API's. Operations and outcomes are small fixed
 * sets (S3 operation names, DNS query types and rcodes), never customer data, so the series stay
 * few. A busy plane (DNS answers tens of thousands of queries a second) is sampled: at most
 * `linesPerSecond` request lines per protocol each second, then one line saying how many were
 * left out.
 */
export class ProtocolMetrics {
  readonly registry = new Registry();
  private readonly duration: KeyedHistogram<'protocol' | 'operation' | 'outcome'>;
  private readonly bytes: Counter<'protocol' | 'operation' | 'direction'>;
  private readonly windows = new Map<string, { second: number; lines: number; skipped: number }>();

  constructor(
    private readonly log: Logger | null = null,
    private readonly linesPerSecond = 100,
  ) {
    this.duration = new KeyedHistogram(
      'fjord_protocol_request_duration_seconds',
      'Protocol-plane request duration by protocol, operation and outcome (S3 status, DNS rcode)',
      ['protocol', 'operation', 'outcome'],
      [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
      this.registry,
    );
    this.bytes = new Counter({
      name: 'fjord_protocol_bytes_total',
      help: 'Protocol-plane bytes received and sent, by protocol and operation',
      labelNames: ['protocol', 'operation', 'direction'],
      registers: [this.registry],
    });
  }

  observe(
    protocol: string,
    operation: string,
    outcome: string,
    seconds: number,
    bytes: { in?: number; out?: number } = {},
    context: RequestContext = {},
  ): void {
    this.duration.observe([protocol, operation, outcome], seconds);
    if (bytes.in) this.bytes.inc({ protocol, operation, direction: 'in' }, bytes.in);
    if (bytes.out) this.bytes.inc({ protocol, operation, direction: 'out' }, bytes.out);
    if (this.log?.isLevelEnabled('info') && this.admit(protocol)) {
      this.log.info(
        {
          protocol,
          op: operation,
          outcome,
          ms: Math.round(seconds * 1e6) / 1000,
          bytes_in: bytes.in ?? 0,
          bytes_out: bytes.out ?? 0,
          ...(context.customer ? { customer: context.customer } : {}),
          ...(context.id ? { id: context.id } : {}),
        },
        'request',
      );
    }
  }

  /** Whether this request gets a line: the first `linesPerSecond` of each second per protocol. */
  private admit(protocol: string): boolean {
    const second = Math.floor(Date.now() / 1000);
    let w = this.windows.get(protocol);
    if (!w) {
      w = { second, lines: 0, skipped: 0 };
      this.windows.set(protocol, w);
    }
    if (w.second !== second) {
      if (w.skipped > 0)
        this.log?.info(
          { protocol, skipped: w.skipped, second: w.second },
          'request lines left out (sampling)',
        );
      w.second = second;
      w.lines = 0;
      w.skipped = 0;
    }
    if (w.lines < this.linesPerSecond) {
      w.lines++;
      return true;
    }
    w.skipped++;
    return false;
  }
}
