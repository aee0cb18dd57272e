import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import type { JobQueue } from '../../kernel/jobs/queue.js';
import { toJson } from '../../kernel/store/dialect.js';
import type { Store } from '../../kernel/store/store.js';
import { hashStreamKey } from './event-fields.js';
import { ALLOWED } from './lifecycle.js';
import { MediaRepo } from './media-repo.js';
import type { StreamMetrics } from './meter.js';
import type { LiveEventsTable } from './migrations.js';
import { FINALISE_JOB, RECONNECT_JOB, windowOf } from './reconnect.js';
import { LiveRepo } from './repo.js';

/**
 * The RTMP ingest's reports of encoder connections (ingest.ts calls these): a publish checked
 * against the event's stream key and state, the stream's measurements while it runs, and its
 * end, which starts the reconnect window or the recording's finalising. Apart from the service,
 * which is the API's view of events.
 */
export class IngestSessions {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly jobs: JobQueue,
    private readonly repo: LiveRepo,
  ) {}

  /**
   * The ingest's check when an encoder publishes: the event the key belongs to, when it may
   * receive a stream now and no other encoder is sending to it. `auto_start_on_ingest` moves a
   * `ready` event to `live`. Null refuses the encoder.
   */
  async ingestStarted(streamKey: string, sessionId: string): Promise<string | null> {
    const found = await this.repo.byStreamKeyHash(hashStreamKey(streamKey));
    if (!found) return null;
    // A suspended customer's stream keys stop working, as its API keys do (identity.isActive).
    if (!(await this.identity.isActive(found.customer_id))) return null;
    return this.store.unitOfWork({ locks: [`live:event:${found.id}`] }, async ({ tx }) => {
      const repo = LiveRepo.over(tx);
      const row = await repo.get(found.customer_id, found.id);
      if (!row || row.stream_key_hash !== found.stream_key_hash) return null;
      if (!(ALLOWED.ingest as readonly string[]).includes(row.status) || row.ingest_session_id) return null;
      const now = this.clock.nowMs();
      const changes: Partial<LiveEventsTable> = {
        ingest_session_id: sessionId,
        ingest_started_at: now,
        last_session_id: sessionId,
        // An encoder back within the reconnect window: the event goes on as if it never left.
        disconnected_at: null,
        updated_at: now,
      };
      if (row.status === 'ready' && row.auto_start_on_ingest === 1) {
        changes.status = 'live';
        changes.actual_start_at = row.actual_start_at ?? now;
      }
      await repo.update(row.id, changes);
      await MediaRepo.over(tx).insertSession({
        id: sessionId,
        event_id: row.id,
        customer_id: row.customer_id,
        started_at: now,
        ended_at: null,
        end_reason: null,
        bytes_received: 0,
        metrics: null,
        last_frame_at: null,
        updated_at: now,
      });
      return row.id;
    });
  }

  /**
   * The ingest's periodic report of a session: what ffmpeg measures of the stream, stored on the
   * session so every process can show it. Answers whether the stream may go on (the event was
   * stopped: no) and the event's bitrate limit.
   */
  async ingestProgress(
    eventId: string,
    sessionId: string,
    metrics: StreamMetrics,
    bytes: number,
    lastFrameAt: number | null,
  ): Promise<{ accept: boolean; maxBitrateKbps: number }> {
    await MediaRepo.of(this.store).updateSession(sessionId, {
      metrics: toJson(metrics),
      bytes_received: bytes,
      last_frame_at: lastFrameAt,
      updated_at: this.clock.nowMs(),
    });
    const row = await this.repo.byId(eventId);
    const accept =
      !!row &&
      row.deleted_at === null &&
      row.ingest_session_id === sessionId &&
      (ALLOWED.ingest as readonly string[]).includes(row.status);
    return { accept, maxBitrateKbps: row?.max_bitrate_kbps ?? 0 };
  }

  /**
   * Called when the ingest starts: sessions still marked open were cut by a crash or a restart of
   * the ingest (one process runs the rtmp role), so no event stays blocked by a dead encoder.
   */
  async ingestRestarted(): Promise<void> {
    await this.repo.clearSessions();
    await MediaRepo.of(this.store).endOpenSessions(this.clock.nowMs(), 'ingest_restarted');
  }

  /**
   * The ingest's report that an encoder connection ended, with why and how many bytes it sent.
   * A stopped event waiting for its encoder to leave has its recordings finalised now. A `live`
   * event stays live for its reconnect window: a job on the clock moves it on as a stop would
   * unless an encoder connects again before.
   */
  async ingestEnded(
    eventId: string,
    sessionId: string,
    reason: string,
    bytes: number,
    metrics?: StreamMetrics,
    lastFrameAt?: number | null,
  ): Promise<void> {
    const wake = await this.store.unitOfWork({ locks: [`live:event:${eventId}`] }, async ({ tx }) => {
      const now = this.clock.nowMs();
      const media = MediaRepo.over(tx);
      const session = await media.session(sessionId);
      if (session && session.ended_at === null)
        await media.updateSession(sessionId, {
          ended_at: now,
          end_reason: reason,
          bytes_received: Math.max(bytes, session.bytes_received),
          ...(metrics ? { metrics: toJson(metrics) } : {}),
          ...(lastFrameAt ? { last_frame_at: lastFrameAt } : {}),
          updated_at: now,
        });
      const repo = LiveRepo.over(tx);
      const row = await repo.byId(eventId);
      if (!row || row.ingest_session_id !== sessionId) return null;
      const dropped = row.status === 'live' ? { disconnected_at: now } : {};
      await repo.update(eventId, {
        ingest_session_id: null,
        ingest_started_at: null,
        ...dropped,
        updated_at: now,
      });
      if (row.status === 'live') {
        await this.jobs.enqueue(
          RECONNECT_JOB,
          { event_id: eventId },
          { db: tx, runAt: now + windowOf(row) * 1000 },
        );
        // A window of 0 is over at once: the job need not wait for its next poll.
        return windowOf(row) === 0 ? RECONNECT_JOB : null;
      }
      if (row.status !== 'ending') return null;
      await this.jobs.enqueue(FINALISE_JOB, { event_id: eventId }, { db: tx });
      return FINALISE_JOB;
    });
    if (wake) this.jobs.wake(wake);
  }
}
