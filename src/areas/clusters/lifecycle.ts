/**
 * The cluster state machine on the kernel clock. Creation walks the provisioning steps in order
 * with these durations (about four and a half minutes in all, like DOKS or Gardener shoots), then
 * the cluster runs; a deletion is confirmed after DELETE_SECONDS. The state is derived from the
 * stored timestamps and the clock, so an emulator clock advance finishes it at once and no job can
 * leave it half-moved.
 */
export const PROVISIONING_STEPS = [
  ['validate', 5],
  ['network', 20],
  ['gateway', 30],
  ['peering', 15],
  ['cluster', 90],
  ['wait', 60],
  ['access', 10],
  ['ptr', 10],
  ['backup', 20],
  ['activate', 5],
] as const;
export const PROVISIONING_SECONDS = PROVISIONING_STEPS.reduce((s, [, d]) => s + d, 0);
/** Final backup, node drain and teardown before removal is confirmed. */
export const DELETE_SECONDS = 120;

/** An upgrade: the pre-upgrade backup, then control plane and nodes one at a time. */
export const UPGRADE_BACKUP_SECONDS = 30;
export const UPGRADE_SECONDS = UPGRADE_BACKUP_SECONDS + 240;

export interface Phase {
  status: 'provisioning' | 'running' | 'upgrading' | 'deleting' | 'error' | 'degraded' | 'suspended';
  provisioning_step: string | null;
  running_since: number | null;
}

interface Timeline {
  created_at: number;
  delete_requested_at: number | null;
  upgrade_to: string | null;
  upgrade_started_at: number | null;
  /** An injected fault (operator API, simulated driver): see `faulted`. */
  fault?: string | null;
  fault_step?: string | null;
  fault_at?: number | null;
}

/** A degraded cluster still serves: what needs a running cluster works on it too. */
export const serves = (status: Phase['status']): boolean => status === 'running' || status === 'degraded';

const upgradeDone = (row: Timeline, now: number) =>
  row.upgrade_started_at === null || now >= row.upgrade_started_at + UPGRADE_SECONDS * 1000;

/** The version the cluster runs: the upgrade's target once the upgrade has finished. */
export function versionOf(row: Timeline & { version: string }, now: number): string {
  return row.upgrade_to !== null && upgradeDone(row, now) ? row.upgrade_to : row.version;
}

export function phaseOf(row: Timeline, now: number): Phase {
  return faulted(row, now, clockPhase(row, now));
}

/** The state the clock alone gives. */
function clockPhase(row: Timeline, now: number): Phase {
  const readyAt = row.created_at + PROVISIONING_SECONDS * 1000;
  const runningSince = now >= readyAt ? readyAt : null;
  if (row.delete_requested_at !== null)
    return { status: 'deleting', provisioning_step: null, running_since: runningSince };
  if (runningSince !== null && !upgradeDone(row, now))
    return { status: 'upgrading', provisioning_step: null, running_since: runningSince };
  if (runningSince !== null)
    return { status: 'running', provisioning_step: null, running_since: runningSince };
  let at = row.created_at;
  for (const [step, seconds] of PROVISIONING_STEPS) {
    at += seconds * 1000;
    if (now < at) return { status: 'provisioning', provisioning_step: step, running_since: null };
  }
  return { status: 'running', provisioning_step: null, running_since: readyAt };
}

/** Start of a provisioning step (ms), from the creation time. */
function stepStart(created: number, step: string): number {
  let at = created;
  for (const [name, seconds] of PROVISIONING_STEPS) {
    if (name === step) return at;
    at += seconds * 1000;
  }
  return at;
}

/**
 * An injected fault over the clock's state: `error` stops the cluster (at a provisioning step
 * when one is named, once the clock reaches it); `degraded` marks a running or upgrading cluster;
 * `suspended` holds any cluster. A deletion goes on whatever the fault.
 */
function faulted(row: Timeline, now: number, phase: Phase): Phase {
  if (!row.fault || phase.status === 'deleting') return phase;
  if (row.fault === 'error') {
    // Named step: provisioning runs until the clock reaches it (a step already passed fails now).
    if (row.fault_step && now < stepStart(row.created_at, row.fault_step)) return phase;
    return { status: 'error', provisioning_step: row.fault_step ?? null, running_since: null };
  }
  if (row.fault === 'degraded')
    return phase.status === 'running' || phase.status === 'upgrading'
      ? { ...phase, status: 'degraded' }
      : phase;
  return { ...phase, status: 'suspended' };
}

/** One step of a cluster's timeline: when it starts and ends on the clock, and where it stands. */
export interface TimelineStep {
  name: string;
  starts_at: number;
  ends_at: number;
  state: 'done' | 'current' | 'pending' | 'failed';
}

/**
 * The cluster's long operation as steps on the clock — provisioning's ten steps, or an upgrade's
 * backup and roll, or a deletion — each done, current, pending or failed, and the milliseconds
 * until the next one changes (null when nothing is moving), so a watcher can look again exactly
 * then instead of polling. Derived from the same timestamps as `phaseOf`.
 */
export function timelineOf(
  row: Timeline,
  now: number,
): {
  operation: 'provision' | 'upgrade' | 'delete';
  steps: TimelineStep[];
  next_change_in_ms: number | null;
} {
  const phase = phaseOf(row, now);
  const steps: { name: string; starts_at: number; ends_at: number }[] = [];
  let operation: 'provision' | 'upgrade' | 'delete' = 'provision';
  if (row.delete_requested_at !== null) {
    operation = 'delete';
    steps.push({
      name: 'teardown',
      starts_at: row.delete_requested_at,
      ends_at: row.delete_requested_at + DELETE_SECONDS * 1000,
    });
  } else if (row.upgrade_started_at !== null) {
    operation = 'upgrade';
    const backupEnds = row.upgrade_started_at + UPGRADE_BACKUP_SECONDS * 1000;
    steps.push({ name: 'backup', starts_at: row.upgrade_started_at, ends_at: backupEnds });
    steps.push({
      name: 'upgrade',
      starts_at: backupEnds,
      ends_at: row.upgrade_started_at + UPGRADE_SECONDS * 1000,
    });
  } else {
    let at = row.created_at;
    for (const [name, seconds] of PROVISIONING_STEPS) {
      steps.push({ name, starts_at: at, ends_at: at + seconds * 1000 });
      at += seconds * 1000;
    }
  }
  const failedStep = phase.status === 'error' ? phase.provisioning_step : null;
  const held = phase.status === 'error' || phase.status === 'suspended';
  let failedSeen = false;
  const out = steps.map((s): TimelineStep => {
    let state: TimelineStep['state'] = now >= s.ends_at ? 'done' : now >= s.starts_at ? 'current' : 'pending';
    if (failedStep === s.name) {
      state = 'failed';
      failedSeen = true;
    } else if (failedSeen || (held && state !== 'done')) state = 'pending';
    return { ...s, state };
  });
  const upcoming = held ? null : steps.flatMap((s) => [s.starts_at, s.ends_at]).find((t) => t > now);
  return {
    operation,
    steps: out,
    next_change_in_ms: upcoming === undefined || upcoming === null ? null : upcoming - now,
  };
}
