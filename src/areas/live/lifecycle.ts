import { liveErrors } from './errors.js';
import type { EventStatus } from './schemas.js';

/**
 * Which status each management action accepts. A refused move is a 409 whose code names the
 * event's status (`event_live`, `event_ended`, …) and changes nothing.
 */
export const ALLOWED = {
  update: ['draft', 'scheduled', 'ready'],
  rehearsal: ['ready'],
  goLive: ['ready', 'rehearsal'],
  stop: ['live', 'rehearsal'],
  rotateKey: [
    'draft',
    'scheduled',
    'ready',
    'rehearsal',
    'ending',
    'ended',
    'processing',
    'failed',
    'cancelled',
  ],
  delete: ['draft', 'scheduled', 'ready', 'rehearsal', 'ended', 'failed', 'cancelled'],
  /** An encoder may push in these states (in `ready` only auto-start or a later live/start shows it). */
  ingest: ['ready', 'rehearsal', 'live'],
} as const satisfies Record<string, readonly EventStatus[]>;

export type Action = keyof typeof ALLOWED;

const VERBS: Record<Action, string> = {
  update: 'change the event',
  rehearsal: 'start a rehearsal',
  goLive: 'go live',
  stop: 'stop the event',
  rotateKey: 'rotate the stream key',
  delete: 'delete the event',
  ingest: 'receive a stream',
};

export function assertAllowed(action: Action, status: string): void {
  const allowed: readonly string[] = ALLOWED[action];
  if (!allowed.includes(status)) throw liveErrors.wrongState(VERBS[action], status, allowed);
}

/**
 * The status after stop: with a recording the event passes through `ending` and `processing` while
 * the recording is finalised; without one it is `ended` at once. A rehearsal that is stopped goes
 * back to `ready`: nothing was shown to viewers.
 */
export function statusAfterStop(status: string, recording: boolean): EventStatus {
  if (status === 'rehearsal') return 'ready';
  return recording ? 'ending' : 'ended';
}

/** The initial status: `draft` when asked, `scheduled` for a future start, else `ready`. */
export function initialStatus(draft: boolean, scheduledStartMs: number | null, nowMs: number): EventStatus {
  if (draft) return 'draft';
  if (scheduledStartMs !== null && scheduledStartMs > nowMs) return 'scheduled';
  return 'ready';
}
