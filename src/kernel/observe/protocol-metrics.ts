import { Counter, Histogram, Registry } from 'prom-client';

/**
 * The protocol planes' side of `/metrics` (S3, DNS, and the MQTT, RTMP and SSH servers the
 * next areas add): one histogram of request durations and one counter of bytes, labelled by
 * protocol, operation and outcome, so every plane reads alike on a dashboard. Operations and
 * outcomes are small fixed sets (S3 operation names, DNS query types and rcodes), never
 * customer data, so the series stay few.
 */
export class ProtocolMetrics {
  readonly registry = new Registry();
  private readonly duration: Histogram<'protocol' | 'operation' | 'outcome'>;
  private readonly bytes: Counter<'protocol' | 'operation' | 'direction'>;

  constructor() {
    this.duration = new Histogram({
      name: 'fjord_protocol_request_duration_seconds',
      help: 'Protocol-plane request duration by protocol, operation and outcome (S3 status, DNS rcode)',
      labelNames: ['protocol', 'operation', 'outcome'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
      registers: [this.registry],
    });
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
  ): void {
    this.duration.observe({ protocol, operation, outcome }, seconds);
    if (bytes.in) this.bytes.inc({ protocol, operation, direction: 'in' }, bytes.in);
    if (bytes.out) this.bytes.inc({ protocol, operation, direction: 'out' }, bytes.out);
  }
}
