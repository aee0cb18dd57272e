import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type {
  LiveIngestSessionsTable,
  LiveRecordingsTable,
  LiveStatsTable,
  LiveTables,
} from './migrations.js';

/** Queries on ingest sessions, recordings and viewing statistics. */
export class MediaRepo {
  constructor(private readonly db: Kysely<LiveTables>) {}

  static of(store: Store): MediaRepo {
    return new MediaRepo(store.typed<LiveTables>());
  }

  static over(tx: AnyDb): MediaRepo {
    return new MediaRepo(tx);
  }

  async insertSession(row: LiveIngestSessionsTable): Promise<void> {
    await this.db.insertInto('live_ingest_sessions').values(row).execute();
  }

  async session(id: string): Promise<LiveIngestSessionsTable | undefined> {
    return this.db.selectFrom('live_ingest_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async updateSession(id: string, changes: Partial<LiveIngestSessionsTable>): Promise<void> {
    await this.db.updateTable('live_ingest_sessions').set(changes).where('id', '=', id).execute();
  }

  async listSessions(
    eventId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: LiveIngestSessionsTable[]; total: number }> {
    const q = this.db.selectFrom('live_ingest_sessions').where('event_id', '=', eventId);
    const [rows, total] = await Promise.all([
      q.selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      q.select((e) => e.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }

  /** Sessions of an event that overlap [from, to]: what a recording keeps. */
  async sessionsBetween(eventId: string, from: number, to: number): Promise<LiveIngestSessionsTable[]> {
    return this.db
      .selectFrom('live_ingest_sessions')
      .selectAll()
      .where('event_id', '=', eventId)
      .where('started_at', '<=', to)
      .where((e) => e.or([e('ended_at', 'is', null), e('ended_at', '>=', from)]))
      .orderBy('started_at')
      .execute();
  }

  /** Sessions still open (the ingest that had them stopped): ended with `reason`. */
  async endOpenSessions(at: number, reason: string): Promise<void> {
    await this.db
      .updateTable('live_ingest_sessions')
      .set({ ended_at: at, end_reason: reason, updated_at: at })
      .where('ended_at', 'is', null)
      .execute();
  }

  async insertRecording(row: LiveRecordingsTable): Promise<void> {
    await this.db
      .insertInto('live_recordings')
      .values(row)
      .onConflict((oc) => oc.column('session_id').doNothing())
      .execute();
  }

  async listRecordings(
    eventId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: LiveRecordingsTable[]; total: number }> {
    const q = this.db.selectFrom('live_recordings').where('event_id', '=', eventId);
    const [rows, total] = await Promise.all([
      q.selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      q.select((e) => e.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }

  async countRecordings(eventId: string): Promise<number> {
    const r = await this.db
      .selectFrom('live_recordings')
      .select((e) => e.fn.countAll<string | number>().as('n'))
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** The recordings of an event still within their retention, oldest first: what its replay plays. */
  async keptRecordings(eventId: string, now: number): Promise<LiveRecordingsTable[]> {
    return this.db
      .selectFrom('live_recordings')
      .selectAll()
      .where('event_id', '=', eventId)
      .where('expires_at', '>', now)
      .orderBy('started_at')
      .orderBy('id')
      .execute();
  }

  async expiredRecordings(before: number): Promise<LiveRecordingsTable[]> {
    return this.db.selectFrom('live_recordings').selectAll().where('expires_at', '<=', before).execute();
  }

  async recording(eventId: string, id: string): Promise<LiveRecordingsTable | undefined> {
    return this.db
      .selectFrom('live_recordings')
      .selectAll()
      .where('event_id', '=', eventId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async eventRecordings(eventId: string): Promise<LiveRecordingsTable[]> {
    return this.db.selectFrom('live_recordings').selectAll().where('event_id', '=', eventId).execute();
  }

  async deleteRecording(id: string): Promise<void> {
    await this.db.deleteFrom('live_recordings').where('id', '=', id).execute();
  }

  /** The event's stats row, made with a fresh viewer key the first time. */
  async stats(eventId: string, salt: () => string): Promise<LiveStatsTable> {
    const found = await this.db
      .selectFrom('live_stats')
      .selectAll()
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    if (found) return found;
    await this.db
      .insertInto('live_stats')
      .values({
        event_id: eventId,
        viewer_salt: salt(),
        peak_viewers: 0,
        peak_at: null,
        playlist_requests: 0,
      })
      .onConflict((oc) => oc.column('event_id').doNothing())
      .execute();
    return this.db
      .selectFrom('live_stats')
      .selectAll()
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
  }

  async countPlaylist(eventId: string): Promise<void> {
    await this.db
      .updateTable('live_stats')
      .set((e) => ({ playlist_requests: e('playlist_requests', '+', 1) }))
      .where('event_id', '=', eventId)
      .execute();
  }

  /** One segment served to a viewer: the viewer's row is made or grown. */
  async countSegment(eventId: string, viewer: string, at: number, bytes: number, ms: number): Promise<void> {
    await this.db
      .insertInto('live_viewers')
      .values({ event_id: eventId, viewer, first_at: at, last_at: at, segments: 1, bytes, watched_ms: ms })
      .onConflict((oc) =>
        oc.columns(['event_id', 'viewer']).doUpdateSet((e) => ({
          last_at: at,
          segments: e('live_viewers.segments', '+', 1),
          bytes: e('live_viewers.bytes', '+', bytes),
          watched_ms: e('live_viewers.watched_ms', '+', ms),
        })),
      )
      .execute();
  }

  async viewersSince(eventId: string, since: number): Promise<number> {
    const r = await this.db
      .selectFrom('live_viewers')
      .select((e) => e.fn.countAll<string | number>().as('n'))
      .where('event_id', '=', eventId)
      .where('last_at', '>=', since)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Raises the peak when `current` is above it (one statement: concurrent requests cannot lower it). */
  async raisePeak(eventId: string, current: number, at: number): Promise<void> {
    await this.db
      .updateTable('live_stats')
      .set({ peak_viewers: current, peak_at: at })
      .where('event_id', '=', eventId)
      .where('peak_viewers', '<', current)
      .execute();
  }

  async viewerTotals(eventId: string) {
    const r = await this.db
      .selectFrom('live_viewers')
      .select((e) => [
        e.fn.countAll<string | number>().as('viewers'),
        e.fn.sum<string | number | null>('segments').as('segments'),
        e.fn.sum<string | number | null>('bytes').as('bytes'),
        e.fn.sum<string | number | null>('watched_ms').as('watched_ms'),
      ])
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    return {
      viewers: Number(r.viewers),
      segments: Number(r.segments ?? 0),
      bytes: Number(r.bytes ?? 0),
      watchedMs: Number(r.watched_ms ?? 0),
    };
  }

  async deleteEvent(eventId: string): Promise<void> {
    for (const table of ['live_ingest_sessions', 'live_recordings', 'live_viewers', 'live_stats'] as const)
      await this.db.deleteFrom(table).where('event_id', '=', eventId).execute();
  }
}
