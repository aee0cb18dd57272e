/**
 * What the ingress measured and the instances use: metrics. Apart from service.ts because it only
 * reads (the in-process metrics, the driver's stats), never writes. Logs are in logs.ts.
 */
import { isoOf } from '../../kernel/clock.js';
import type { AppsDriver } from './drivers/driver.js';
import { type AppMetrics, METRICS_MINUTES } from './metrics.js';
import type { Loaded } from './state.js';

/**
 * Requests and latency the ingress measured over the last `windowSeconds` of the clock, per
 * minute, and each running instance's CPU and memory now.
 */
export async function appMetrics(
  metrics: AppMetrics,
  driver: AppsDriver,
  s: Loaded,
  now: number,
  windowSeconds: number,
) {
  const toMinute = Math.floor(now / 60_000);
  const minutes = Math.min(METRICS_MINUTES, Math.ceil(windowSeconds / 60));
  const m = metrics.summary(s.app.id, toMinute - minutes, toMinute);
  const numbers = new Map([s.serving, s.pending].filter((r) => !!r).map((r) => [r!.id, r!.number]));
  const stats = (await driver.stats?.([...numbers.keys()])) ?? [];
  return {
    window_seconds: minutes * 60,
    requests: m.requests,
    errors: m.errors,
    latency_ms: m.latency,
    per_minute: m.perMinute.map((p) => ({
      minute: isoOf(p.minute * 60_000)!,
      requests: p.requests,
      errors: p.errors,
      latency_ms: { p50: p.p50, p95: p.p95 },
    })),
    instances: stats.map((i) => ({
      instance: i.instance,
      revision_number: numbers.get(i.revisionId) ?? null,
      cpu_percent: i.cpuPercent,
      memory_bytes: i.memoryBytes,
    })),
    simulated: driver.simulated,
  };
}
