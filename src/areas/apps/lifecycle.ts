import type { AppsAppsTable, AppsRevisionsTable } from './migrations.js';

/**
 * The states of apps, revisions and instances as of `now`, computed from what was written and the
 * kernel clock: a deploy that started settles once its time is up, idle instances stop after the
 * idle timeout. Reads use these without writing; every write stores the settled state first,
 * inside the unit of work that holds the app's lock.
 */
export function settleRevision(row: AppsRevisionsTable, now: number): AppsRevisionsTable {
  if (
    row.status !== 'deploying' ||
    row.settles_at === null ||
    row.next_status === null ||
    now < row.settles_at
  )
    return row;
  const ready = row.next_status === 'ready';
  return {
    ...row,
    status: row.next_status,
    next_status: null,
    settles_at: null,
    ready_at: ready ? row.settles_at : null,
    failed_at: ready ? null : row.settles_at,
  };
}

/** Moves the traffic to the pending revision once it is healthy; forgets it once it failed. */
export function settleApp(
  app: AppsAppsTable,
  pending: AppsRevisionsTable | undefined,
  now: number,
): AppsAppsTable {
  if (!app.pending_revision_id || !pending) return app;
  const p = settleRevision(pending, now);
  if (p.status === 'deploying') return app;
  if (p.status === 'ready')
    return {
      ...app,
      serving_revision_id: p.id,
      pending_revision_id: null,
      traffic_moved_at: p.ready_at,
      updated_at: Math.max(app.updated_at, p.ready_at ?? 0),
    };
  return { ...app, pending_revision_id: null, updated_at: Math.max(app.updated_at, p.failed_at ?? 0) };
}

export type AppStatus = 'deploying' | 'running' | 'scaled_to_zero' | 'failed' | 'suspended';

export interface InstanceState {
  id: string;
  revision_id: string;
  revision_number: number;
  state: 'starting' | 'running';
  started_at: number;
}

/** When the app last saw traffic: its last request, or the moment its revision took the traffic. */
export function lastActive(app: AppsAppsTable): number {
  return Math.max(app.traffic_moved_at ?? 0, app.last_request_at ?? 0);
}

/** Whether a request came within the serving revision's idle timeout. */
export function isActive(app: AppsAppsTable, serving: AppsRevisionsTable, now: number): boolean {
  return now < lastActive(app) + serving.idle_timeout_seconds * 1000;
}

/**
 * The instances running at `now`: the serving revision keeps `min_instances`, plus one while a
 * request came within the idle timeout (with `min_instances` 0 that is the scale-to-zero rule);
 * a revision being deployed runs the one instance its health check is made against.
 */
export function instancesAt(
  app: AppsAppsTable,
  serving: AppsRevisionsTable | undefined,
  pending: AppsRevisionsTable | undefined,
  now: number,
  coldStartMs: number,
): InstanceState[] {
  const out: InstanceState[] = [];
  if (app.suspended_at !== null) return out;
  if (serving) {
    const count = Math.max(serving.min_instances, isActive(app, serving, now) ? 1 : 0);
    const base = app.traffic_moved_at ?? serving.ready_at ?? serving.created_at;
    for (let i = 0; i < count; i++) {
      // The first instance is the one a cold start (a wake, a rollback, a resume) brought up.
      const started = i === 0 && app.woke_at !== null && app.woke_at >= base ? app.woke_at : base;
      out.push({
        id: `${serving.id}-${i + 1}`,
        revision_id: serving.id,
        revision_number: serving.number,
        state: now < started + (started === app.woke_at ? coldStartMs : 0) ? 'starting' : 'running',
        started_at: started,
      });
    }
  }
  if (pending && pending.status === 'deploying') {
    out.push({
      id: `${pending.id}-1`,
      revision_id: pending.id,
      revision_number: pending.number,
      state: 'starting',
      started_at: pending.created_at,
    });
  }
  return out;
}

export function appStatus(
  app: AppsAppsTable,
  serving: AppsRevisionsTable | undefined,
  instances: InstanceState[],
): AppStatus {
  if (app.suspended_at !== null) return 'suspended';
  if (app.pending_revision_id) return 'deploying';
  if (!serving) return 'failed';
  return instances.some((i) => i.revision_id === serving.id) ? 'running' : 'scaled_to_zero';
}
