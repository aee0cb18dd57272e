/** Minutes of per-app request figures kept (in process memory). */
export const METRICS_MINUTES = 60;
const SAMPLES_PER_MINUTE = 2000;

interface Minute {
  requests: number;
  errors: number;
  /** Latencies (ms) of up to SAMPLES_PER_MINUTE requests, for percentiles. */
  latencies: number[];
}

/**
 * Request counts and latencies per app and minute (of Fjord's clock), as the ingress saw them.
 * Kept in this process only, for the last hour: a cache that a restart loses, not a record.
 */
export class AppMetrics {
  private readonly apps = new Map<string, Map<number, Minute>>();

  record(appId: string, minute: number, status: number, latencyMs: number): void {
    let minutes = this.apps.get(appId);
    if (!minutes) {
      minutes = new Map();
      this.apps.set(appId, minutes);
    }
    let m = minutes.get(minute);
    if (!m) {
      m = { requests: 0, errors: 0, latencies: [] };
      minutes.set(minute, m);
      for (const k of minutes.keys()) if (k <= minute - METRICS_MINUTES) minutes.delete(k);
    }
    m.requests++;
    if (status >= 500) m.errors++;
    if (m.latencies.length < SAMPLES_PER_MINUTE) m.latencies.push(latencyMs);
  }

  /** Totals and per-minute figures of the minutes in (`fromMinute`, `toMinute`], oldest first. */
  summary(appId: string, fromMinute: number, toMinute: number) {
    const minutes = [...(this.apps.get(appId)?.entries() ?? [])]
      .filter(([k]) => k > fromMinute && k <= toMinute)
      .sort(([x], [y]) => x - y);
    const all = minutes.flatMap(([, m]) => m.latencies);
    return {
      requests: minutes.reduce((n, [, m]) => n + m.requests, 0),
      errors: minutes.reduce((n, [, m]) => n + m.errors, 0),
      latency: percentiles(all),
      perMinute: minutes.map(([k, m]) => ({
        minute: k,
        requests: m.requests,
        errors: m.errors,
        ...percentiles(m.latencies),
      })),
    };
  }

  forget(appId: string): void {
    this.apps.delete(appId);
  }
}

function percentiles(values: number[]) {
  if (!values.length) return { p50: null, p95: null };
  const sorted = [...values].sort((x, y) => x - y);
  const at = (q: number) =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100;
  return { p50: at(0.5), p95: at(0.95) };
}
