/**
 * What the app's instances wrote and what the ingress measured: logs and metrics. Apart from
 * service.ts because they only read (the driver's output, the in-process metrics), never write.
 */
import { isoOf } from '../../kernel/clock.js';
import type { AppsDriver, HealthCheck, LogLine } from './drivers/driver.js';
import { settleRevision } from './lifecycle.js';
import { type AppMetrics, METRICS_MINUTES } from './metrics.js';
import type { AppsRepo } from './repo.js';
import { type Loaded, parse } from './state.js';

/**
 * The last lines the app's instances wrote (serving and deploying revisions). A driver that runs
 * nothing has no output: the lines then tell what its deploys did, marked simulated.
 */
export async function appLogs(repo: AppsRepo, driver: AppsDriver, s: Loaded, now: number, lines: number) {
  const numbers = new Map<string, number>();
  for (const r of [s.serving, s.pending, s.latest]) if (r) numbers.set(r.id, r.number);
  let out: LogLine[];
  if (driver.logs) {
    out = await driver.logs(
      [s.serving?.id, s.pending?.id].filter((x): x is string => !!x),
      lines,
    );
  } else {
    out = [];
    for (const r of (await repo.revisions(s.app.id)).slice(0, 5).reverse()) {
      const v = settleRevision(r, now);
      numbers.set(v.id, v.number);
      const at = (time: number, text: string, stream: 'stdout' | 'stderr' = 'stdout') =>
        out.push({ time, revisionId: v.id, stream, text });
      at(v.created_at, `[simulated] pulling ${v.image}`);
      at(v.created_at, `[simulated] starting an instance listening on port ${v.port}`);
      if (v.ready_at !== null)
        at(v.ready_at, `[simulated] health check GET ${parse<HealthCheck>(v.health_check)!.path} passed`);
      if (v.failed_at !== null) at(v.failed_at, `[simulated] ${v.failure_reason}`, 'stderr');
    }
    out = out.filter((l) => l.time <= now).slice(-lines);
  }
  return {
    lines: out.map((l) => ({
      time: isoOf(l.time)!,
      revision_id: l.revisionId,
      revision_number: numbers.get(l.revisionId) ?? null,
      stream: l.stream,
      text: l.text,
    })),
    simulated: driver.simulated,
  };
}

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
