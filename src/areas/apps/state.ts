/**
 * How the service reads an app: found by id or name, with its serving, pending and latest
 * revisions settled as of a time, and the instances the clock says run. Apart from service.ts so
 * the lifecycle, the views and the runtime side share one reading of the state.
 */
import type { AppsDriver } from './drivers/driver.js';
import { appsErrors } from './errors.js';
import {
  type AppStatus,
  appStatus,
  type InstanceState,
  instancesAt,
  settleApp,
  settleRevision,
} from './lifecycle.js';
import type { AppsAppsTable, AppsRevisionsTable } from './migrations.js';
import type { AppsRepo } from './repo.js';

export interface Loaded {
  app: AppsAppsTable;
  serving: AppsRevisionsTable | undefined;
  pending: AppsRevisionsTable | undefined;
  latest: AppsRevisionsTable | undefined;
}

export const parse = <T>(json: string | null): T | null => (json === null ? null : (JSON.parse(json) as T));

export async function findApp(repo: AppsRepo, customerId: string, idOrName: string) {
  const row = await repo.app(customerId, idOrName.trim().toLowerCase());
  if (!row) throw appsErrors.notFound();
  return row;
}

export async function findRevision(repo: AppsRepo, appId: string, ref: string) {
  const r = /^\d{1,9}$/.test(ref)
    ? await repo.revisionByNumber(appId, Number(ref))
    : await repo.revision(appId, ref);
  if (!r) throw appsErrors.revisionNotFound();
  return r;
}

/** The app with its serving, pending and latest revisions, settled as of `now`. */
export async function loadApp(repo: AppsRepo, raw: AppsAppsTable, now: number): Promise<Loaded> {
  const rawPending = raw.pending_revision_id
    ? await repo.revision(raw.id, raw.pending_revision_id)
    : undefined;
  const app = settleApp(raw, rawPending, now);
  const pendingSettled = rawPending ? settleRevision(rawPending, now) : undefined;
  const serving = app.serving_revision_id
    ? app.serving_revision_id === pendingSettled?.id
      ? pendingSettled
      : await repo.revision(raw.id, app.serving_revision_id)
    : undefined;
  const latestRaw = await repo.latestRevision(raw.id);
  const latest = latestRaw ? settleRevision(latestRaw, now) : undefined;
  return { app, serving, pending: app.pending_revision_id ? pendingSettled : undefined, latest };
}

export function instancesOf(driver: AppsDriver, s: Loaded, now: number): InstanceState[] {
  return instancesAt(s.app, s.serving, s.pending, now, driver.coldStartSeconds * 1000);
}

export function statusOf(driver: AppsDriver, s: Loaded, now: number): AppStatus {
  return appStatus(s.app, s.serving, instancesOf(driver, s, now));
}
