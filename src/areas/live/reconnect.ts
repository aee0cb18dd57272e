import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { Clock } from '../../kernel/clock.js';
import type { JobQueue } from '../../kernel/jobs/queue.js';
import type { Store } from '../../kernel/store/store.js';
import { statusAfterStop } from './lifecycle.js';
import { MediaRepo } from './media-repo.js';
import type { LiveEventsTable } from './migrations.js';
import { LiveRepo } from './repo.js';

/** The job that ends a live event whose encoder did not come back within its reconnect window. */
export const RECONNECT_JOB = 'live.events.reconnect-window';
/** The job that finalises an event's recordings after it stops (`ending` → `processing` → `ended`). */
export const FINALISE_JOB = 'live.recordings.finalise';
/** The window of events made before it could be set per event. */
export const DEFAULT_RECONNECT_WINDOW_S = 60;
export const windowOf = (row: LiveEventsTable): number =>
  row.reconnect_window_seconds ?? DEFAULT_RECONNECT_WINDOW_S;

/**
 * The reconnect window: a live event whose encoder dropped waits for it (the ingest sets
 * `disconnected_at` and enqueues the job), and its live HLS spans every connection of the period.
 */
export class LiveReconnect {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly jobs: JobQueue,
    private readonly audit: AuditTrail,
  ) {}

  /**
   * The reconnect window of a live event has passed: when no encoder came back, the event moves on
   * as a stop would (`ending`, or `ended` without a recording), its live period ending when the
   * encoder dropped. A drop followed by a reconnect leaves the job nothing to do.
   */
  async windowPassed(eventId: string): Promise<void> {
    const moved = await this.store.unitOfWork({ locks: [`live:event:${eventId}`] }, async ({ tx }) => {
      const repo = LiveRepo.over(tx);
      const row = await repo.byId(eventId);
      if (!row || row.deleted_at !== null || row.status !== 'live' || row.ingest_session_id) return null;
      if (row.disconnected_at === null) return null;
      const now = this.clock.nowMs();
      if (now < row.disconnected_at + windowOf(row) * 1000) return null;
      const next = statusAfterStop('live', row.record_enabled === 1);
      if (next === 'ending') await this.jobs.enqueue(FINALISE_JOB, { event_id: row.id }, { db: tx });
      await repo.update(row.id, {
        status: next,
        actual_end_at: row.disconnected_at,
        disconnected_at: null,
        updated_at: now,
      });
      return row;
    });
    if (!moved) return;
    this.jobs.wake(FINALISE_JOB);
    await this.audit.record({
      customerId: moved.customer_id,
      area: 'live-events',
      action: 'live_event.reconnect_window_passed',
      resourceType: 'live_event',
      resourceId: moved.id,
      actor: { kind: 'system', id: null },
    });
  }

  /**
   * The encoder connections of the event's live HLS: those of its live period (several when the
   * encoder reconnected), or else its latest one.
   */
  async liveSessions(row: LiveEventsTable): Promise<string[]> {
    if (row.actual_start_at !== null) {
      const to = row.actual_end_at ?? this.clock.nowMs();
      const found = await MediaRepo.of(this.store).sessionsBetween(row.id, row.actual_start_at, to);
      if (found.length > 0) return found.map((s) => s.id);
    }
    return row.last_session_id ? [row.last_session_id] : [];
  }
}
