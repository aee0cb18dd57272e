/**
 * The JSON views of apps and revisions, with their status messages. Apart from service.ts because
 * they are presentation only: plain functions of the loaded state and the driver.
 */
import { isoOf } from '../../kernel/clock.js';
import { appPlanOf } from './catalogue.js';
import type { AppsDriver, HealthCheck } from './drivers/driver.js';
import { type AppStatus, appStatus } from './lifecycle.js';
import type { AppsAppsTable, AppsRevisionsTable } from './migrations.js';
import { instancesOf, type Loaded, parse } from './state.js';

export function note(driver: AppsDriver, message: string, simulatedNote = driver.note): string {
  return driver.simulated && simulatedNote ? `${message} ${simulatedNote}` : message;
}

export function appView(driver: AppsDriver, domain: string, s: Loaded, now: number) {
  const instances = instancesOf(driver, s, now);
  const status = appStatus(s.app, s.serving, instances);
  const running = s.serving ? instances.filter((i) => i.revision_id === s.serving!.id).length : 0;
  return {
    id: s.app.id,
    name: s.app.name,
    region: s.app.region,
    url: `https://${s.app.host_label}.${domain}`,
    status,
    status_message: note(driver, appMessage(s, status, running)),
    current_revision: s.serving
      ? { id: s.serving.id, number: s.serving.number, status: s.serving.status }
      : null,
    latest_revision: s.latest ? { id: s.latest.id, number: s.latest.number, status: s.latest.status } : null,
    min_instances: s.serving?.min_instances ?? 0,
    max_instances: s.serving?.max_instances ?? 0,
    instances_running: running,
    driver: driver.name,
    simulated: driver.simulated,
    created_at: isoOf(s.app.created_at)!,
    updated_at: isoOf(s.app.updated_at)!,
  };
}

function appMessage(s: Loaded, status: AppStatus, running: number): string {
  const failedLatest =
    s.latest && s.latest.status === 'failed'
      ? ` Revision ${s.latest.number} failed: ${s.latest.failure_reason}`
      : '';
  switch (status) {
    case 'suspended':
      return 'Suspended: no instance runs and requests are answered 503 until you resume the app.';
    case 'deploying':
      return s.serving
        ? `Revision ${s.pending?.number} is deploying; revision ${s.serving.number} keeps serving until it is healthy.`
        : `Revision ${s.pending?.number} is deploying.`;
    case 'failed':
      return `No revision serves.${failedLatest}`;
    case 'running':
      return `Revision ${s.serving!.number} serves with ${running} instance${running === 1 ? '' : 's'}.${
        failedLatest ? `${failedLatest} Revision ${s.serving!.number} keeps serving.` : ''
      }`;
    case 'scaled_to_zero':
      return `Revision ${s.serving!.number} serves; scaled to zero after ${s.serving!.idle_timeout_seconds} s without requests, the next request starts an instance.${
        failedLatest ? `${failedLatest} Revision ${s.serving!.number} keeps serving.` : ''
      }`;
  }
}

export function revisionView(driver: AppsDriver, r: AppsRevisionsTable, app: AppsAppsTable) {
  const serving = r.id === app.serving_revision_id;
  const message =
    r.status === 'deploying'
      ? 'Pulling the image and starting a first instance; traffic moves here once it passes its health check.'
      : r.status === 'failed'
        ? `${r.failure_reason} It never took traffic.`
        : serving
          ? 'Healthy; takes all traffic.'
          : 'Healthy; not serving (roll back to it to serve it again).';
  const plan = appPlanOf(r.plan_code)!;
  return {
    id: r.id,
    app_id: r.app_id,
    number: r.number,
    status: r.status,
    status_message: note(driver, message),
    serving,
    image: r.image,
    image_upload_id: r.image_upload_id,
    command: parse<string[]>(r.command),
    args: parse<string[]>(r.args),
    port: r.port,
    env: parse<Record<string, string>>(r.env)!,
    secret_names: parse<string[]>(r.secret_names)!,
    plan_code: r.plan_code,
    cpu: plan.cpu,
    memory_mb: plan.memory_mb,
    concurrency: r.concurrency,
    min_instances: r.min_instances,
    max_instances: r.max_instances,
    idle_timeout_seconds: r.idle_timeout_seconds,
    health_check: parse<HealthCheck>(r.health_check)!,
    created_at: isoOf(r.created_at)!,
    ready_at: isoOf(r.ready_at),
    failed_at: isoOf(r.failed_at),
  };
}
