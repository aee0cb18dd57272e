import { randomBytes } from 'node:crypto';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { JobContext } from '../../kernel/jobs/queue.js';
import { fromJson } from '../../kernel/store/dialect.js';
import type { Store } from '../../kernel/store/store.js';
import type { InternalObjects } from '../storage/service.js';
import { AccessRepo } from './access-repo.js';
import { liveErrors } from './errors.js';
import { MediaRepo } from './media-repo.js';
import type { StreamMetrics } from './meter.js';
import type { LiveEventsTable, LiveIngestSessionsTable, LiveRecordingsTable } from './migrations.js';
import { mp4Key, type StoredMp4, storeMp4 } from './recording-file.js';
import { LiveRepo } from './repo.js';
import { type LiveService, SOFT_DELETE_DAYS } from './service.js';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const DAY_MS = 86_400_000;
/** A viewer who fetched a segment this recently is watching now. */
export const CURRENT_VIEWER_MS = 30_000;
/** No frame for this long while an encoder is connected: the stream is stalled. */
export const STALL_MS = 5_000;
/** Keyframes further apart than this make segments long and start-up slow. */
export const MAX_KEYFRAME_INTERVAL_S = 4;
export const FINALISE_ATTEMPTS = 30;

/** Each segment's duration in a playlist, by file name. */
export function segmentDurations(playlist: string): Map<string, number> {
  const out = new Map<string, number>();
  let pending: number | null = null;
  for (const line of playlist.split('\n').map((l) => l.trim())) {
    const m = /^#EXTINF:([\d.]+)/.exec(line);
    if (m) pending = Number(m[1]);
    else if (line && !line.startsWith('#') && pending !== null) {
      out.set(line, pending);
      pending = null;
    }
  }
  return out;
}

/**
 * Ingest sessions, what the encoder sends (ingest, health), recordings and viewing statistics of
 * events. The ingest writes sessions; the HLS routes count viewers; a job finalises recordings.
 */
export class LiveMedia {
  readonly repo: MediaRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly live: LiveService,
    private readonly sessionsDir: string,
    /** The internal bucket `live-recordings`: each recording's MP4. */
    private readonly files: InternalObjects,
    private readonly log: Logger,
    private readonly downloadUrl: (eventId: string, recordingId: string) => string,
  ) {
    this.repo = MediaRepo.of(store);
  }

  // --- sessions, ingest and health ------------------------------------------------------------

  sessionView(row: LiveIngestSessionsTable) {
    const m = fromJson<StreamMetrics | null>(row.metrics, null);
    const end = row.ended_at ?? this.clock.nowMs();
    return {
      id: row.id,
      event_id: row.event_id,
      status: (row.ended_at === null ? 'active' : 'ended') as 'active' | 'ended',
      started_at: iso(row.started_at)!,
      ended_at: iso(row.ended_at),
      end_reason: row.end_reason,
      duration_seconds: Math.max(0, Math.round((end - row.started_at) / 1000)),
      bytes_received: row.bytes_received,
      video: m?.video ?? null,
      audio: m?.audio ?? null,
      bitrate_kbps: m?.bitrate_kbps ?? null,
      frame_rate: m?.frame_rate ?? null,
      keyframe_interval_seconds: m?.keyframe_interval_seconds ?? null,
      dropped_frames: m?.dropped_frames ?? 0,
      last_frame_at: iso(row.last_frame_at),
    };
  }

  async sessions(customerId: string, eventId: string, page: number, perPage: number) {
    await this.live.load(customerId, eventId);
    const { rows, total } = await this.repo.listSessions(eventId, perPage, (page - 1) * perPage);
    return { sessions: rows.map((r) => this.sessionView(r)), page, per_page: perPage, total };
  }

  private async current(row: LiveEventsTable) {
    const session = row.ingest_session_id ? await this.repo.session(row.ingest_session_id) : undefined;
    return session ? this.sessionView(session) : null;
  }

  async ingest(customerId: string, eventId: string) {
    const row = await this.live.load(customerId, eventId);
    const view = this.live.view(row);
    const session = await this.current(row);
    return {
      event_id: row.id,
      ingest_url: view.ingest_url,
      protocol: 'rtmp' as const,
      stream_key: { prefix: row.stream_key_prefix, rotated_at: iso(row.stream_key_rotated_at) },
      publish_url: `${view.ingest_url}/{stream_key}`,
      status: session ? ('receiving' as const) : ('idle' as const),
      accepts_stream: ['ready', 'rehearsal', 'live'].includes(row.status),
      current_session: session,
      recommended: {
        video_codec: 'h264',
        audio_codec: 'aac',
        keyframe_interval_seconds: 2,
        max_bitrate_kbps: row.max_bitrate_kbps,
      },
    };
  }

  async health(customerId: string, eventId: string) {
    const row = await this.live.load(customerId, eventId);
    const s = await this.current(row);
    const now = this.clock.nowMs();
    const reasons: { code: string; severity: 'warning' | 'critical'; message: string }[] = [];
    const since = s
      ? s.last_frame_at
        ? now - Date.parse(s.last_frame_at)
        : now - Date.parse(s.started_at)
      : 0;
    if (s) {
      if (since > STALL_MS)
        reasons.push({
          code: 'no_frames',
          severity: 'critical',
          message: `No frame received for ${Math.round(since / 1000)} s.`,
        });
      if (s.bitrate_kbps !== null && s.bitrate_kbps > row.max_bitrate_kbps)
        reasons.push({
          code: 'bitrate_over_limit',
          severity: 'critical',
          message: `Bitrate ${s.bitrate_kbps} kbit/s is above the event's ${row.max_bitrate_kbps}; a stream that stays above it is cut.`,
        });
      if (s.keyframe_interval_seconds !== null && s.keyframe_interval_seconds > MAX_KEYFRAME_INTERVAL_S)
        reasons.push({
          code: 'keyframe_interval_too_long',
          severity: 'warning',
          message: `Keyframes ${s.keyframe_interval_seconds} s apart; set the encoder to 2 s.`,
        });
      if (s.video && !s.audio)
        reasons.push({ code: 'no_audio', severity: 'warning', message: 'The stream has no audio track.' });
      if (s.audio && !s.video)
        reasons.push({ code: 'no_video', severity: 'critical', message: 'The stream has no video track.' });
      if (s.dropped_frames > 0)
        reasons.push({
          code: 'dropped_frames',
          severity: 'warning',
          message: `${s.dropped_frames} video frames missing from the stream's timestamps.`,
        });
    }
    const status = !s
      ? 'idle'
      : reasons.some((r) => r.severity === 'critical')
        ? 'unhealthy'
        : reasons.length > 0
          ? 'warning'
          : 'healthy';
    return {
      event_id: row.id,
      status: status as 'idle' | 'healthy' | 'warning' | 'unhealthy',
      reasons,
      session_id: s?.id ?? null,
      bitrate_kbps: s?.bitrate_kbps ?? null,
      max_bitrate_kbps: row.max_bitrate_kbps,
      frame_rate: s?.frame_rate ?? null,
      keyframe_interval_seconds: s?.keyframe_interval_seconds ?? null,
      dropped_frames: s?.dropped_frames ?? 0,
      last_frame_at: s?.last_frame_at ?? null,
      seconds_since_last_frame: s ? Math.round(since / 1000) : null,
      checked_at: iso(now)!,
    };
  }

  // --- recordings -----------------------------------------------------------------------------

  recordingView(row: LiveRecordingsTable) {
    return {
      id: row.id,
      event_id: row.event_id,
      session_id: row.session_id,
      status: row.status as 'ready',
      format: (row.object_key ? 'mp4' : 'hls') as 'mp4' | 'hls',
      content_type: row.object_key ? 'video/mp4' : 'application/vnd.apple.mpegurl',
      download_url: row.object_key ? this.downloadUrl(row.event_id, row.id) : null,
      duration_seconds: Math.round(row.duration_ms) / 1000,
      size_bytes: row.size_bytes,
      segment_count: row.segment_count,
      started_at: iso(row.started_at)!,
      ended_at: iso(row.ended_at)!,
      expires_at: iso(row.expires_at)!,
      created_at: iso(row.created_at)!,
    };
  }

  async recordings(customerId: string, eventId: string, page: number, perPage: number) {
    await this.live.load(customerId, eventId);
    const { rows, total } = await this.repo.listRecordings(eventId, perPage, (page - 1) * perPage);
    return { recordings: rows.map((r) => this.recordingView(r)), page, per_page: perPage, total };
  }

  /**
   * The job after a stop with recording on: once no encoder is connected and every ffmpeg of the
   * event has finished its playlist, the event is `processing` while the HLS of each connection
   * made during the live period is measured and kept as a recording, then `ended`.
   */
  async finalise(eventId: string, ctx: JobContext): Promise<void> {
    const started = await this.store.unitOfWork({ locks: [`live:event:${eventId}`] }, async ({ tx }) => {
      const repo = LiveRepo.over(tx);
      const row = await repo.byId(eventId);
      if (!row || (row.status !== 'ending' && row.status !== 'processing')) return null;
      if (row.ingest_session_id) {
        if (ctx.attempt < FINALISE_ATTEMPTS) throw new Error('the encoder is still connected');
      }
      if (row.status === 'ending')
        await repo.update(eventId, { status: 'processing', updated_at: this.clock.nowMs() });
      return row;
    });
    if (!started) return;
    const from = started.actual_start_at ?? started.created_at;
    const to = started.actual_end_at ?? this.clock.nowMs();
    const expiresAt = to + started.retention_days * DAY_MS;
    const sessions = await this.repo.sessionsBetween(eventId, from, to);
    for (const session of sessions) {
      const dir = join(this.sessionsDir, session.id);
      const running = await stat(join(dir, 'ffmpeg.pid')).then(
        () => true,
        () => false,
      );
      if (running && ctx.attempt < FINALISE_ATTEMPTS)
        throw new Error('an ffmpeg is still writing its playlist');
      const playlist = await readFile(join(dir, 'index.m3u8'), 'utf8').catch(() => '');
      const segments = segmentDurations(playlist);
      if (segments.size === 0) continue;
      let size = 0;
      for (const name of segments.keys()) size += (await stat(join(dir, name)).catch(() => null))?.size ?? 0;
      let durationMs = [...segments.values()].reduce((n, d) => n + d * 1000, 0);
      const mp4 = await this.mp4Of(started, session.id, dir, [...segments.keys()]);
      if (mp4) {
        size = mp4.sizeBytes;
        durationMs = mp4.durationMs;
      }
      await this.repo.insertRecording({
        id: newId(),
        event_id: eventId,
        customer_id: started.customer_id,
        session_id: session.id,
        status: 'ready',
        duration_ms: Math.round(durationMs),
        size_bytes: size,
        segment_count: segments.size,
        started_at: session.started_at,
        ended_at: session.ended_at ?? to,
        expires_at: expiresAt,
        created_at: this.clock.nowMs(),
        object_key: mp4?.key ?? null,
      });
    }
    await this.store.unitOfWork({ locks: [`live:event:${eventId}`] }, async ({ tx }) => {
      const repo = LiveRepo.over(tx);
      const row = await repo.byId(eventId);
      if (row?.status === 'processing')
        await repo.update(eventId, { status: 'ended', updated_at: this.clock.nowMs() });
    });
  }

  /**
   * The connection's MP4 in the internal bucket, or null when ffmpeg cannot make one of what the
   * encoder sent: the recording is then kept as its HLS only (the replay plays either way), and
   * the reason is logged. A retried finalisation writes the same key again.
   */
  private async mp4Of(row: LiveEventsTable, sessionId: string, dir: string, segments: string[]) {
    const key = mp4Key(row.customer_id, row.id, sessionId);
    return storeMp4(this.files, key, dir, segments).catch((err: Error): StoredMp4 | null => {
      this.log.warn(
        { event_id: row.id, session_id: sessionId, err: err.message },
        'live: no MP4 of a recording',
      );
      return null;
    });
  }

  /** A recording's MP4, for download (404 when it has none or is gone). */
  async download(customerId: string, eventId: string, recordingId: string) {
    const row = await this.live.load(customerId, eventId);
    const rec = await this.repo.recording(row.id, recordingId);
    if (!rec?.object_key || rec.expires_at <= this.clock.nowMs()) throw liveErrors.recordingNotFound();
    return {
      body: await this.files.get(rec.object_key),
      size: Number(rec.size_bytes),
      filename: `${row.slug}-${new Date(Number(rec.started_at)).toISOString().replace(/[:.]/g, '-')}.mp4`,
    };
  }

  /** A finalisation whose worker died on its last attempt: the event is `failed`, not stuck. */
  async finaliseAbandoned(eventId: string): Promise<void> {
    await this.store.unitOfWork({ locks: [`live:event:${eventId}`] }, async ({ tx }) => {
      const repo = LiveRepo.over(tx);
      const row = await repo.byId(eventId);
      if (row && (row.status === 'ending' || row.status === 'processing'))
        await repo.update(eventId, { status: 'failed', updated_at: this.clock.nowMs() });
    });
  }

  /**
   * The hourly clean-up, on the clock: recordings past `retention_days` (their files too),
   * events soft-deleted 30 days ago with everything they kept, and old failed attempts and grants.
   */
  async purge(): Promise<void> {
    const now = this.clock.nowMs();
    for (const rec of await this.repo.expiredRecordings(now)) {
      if (rec.object_key) await this.files.delete(rec.object_key);
      await rm(join(this.sessionsDir, rec.session_id), { recursive: true, force: true });
      await this.repo.deleteRecording(rec.id);
    }
    const events = LiveRepo.of(this.store);
    for (const id of await events.deletedBefore(now - SOFT_DELETE_DAYS * DAY_MS)) {
      for (const rec of await this.repo.eventRecordings(id))
        if (rec.object_key) await this.files.delete(rec.object_key);
      const { rows } = await this.repo.listSessions(id, 100_000, 0);
      for (const s of rows) await rm(join(this.sessionsDir, s.id), { recursive: true, force: true });
      await this.store.unitOfWork({ locks: [`live:event:${id}`] }, async ({ tx }) => {
        await MediaRepo.over(tx).deleteEvent(id);
        await AccessRepo.over(tx).deleteEvent(id);
        await LiveRepo.over(tx).delete(id);
      });
    }
    await AccessRepo.of(this.store).forgetOld(now - DAY_MS);
  }

  // --- viewers --------------------------------------------------------------------------------

  /** Random key of an event's viewer hashes. */
  async viewerSalt(eventId: string): Promise<string> {
    return (await this.repo.stats(eventId, () => randomBytes(16).toString('base64'))).viewer_salt;
  }

  async countPlaylist(eventId: string): Promise<void> {
    await this.viewerSalt(eventId);
    await this.repo.countPlaylist(eventId);
  }

  /** One segment served: the viewer's counters grow, and the peak when more watch than ever. */
  async countSegment(eventId: string, viewer: string, bytes: number, seconds: number): Promise<void> {
    const now = this.clock.nowMs();
    await this.repo.countSegment(eventId, viewer, now, bytes, Math.round(seconds * 1000));
    const current = await this.repo.viewersSince(eventId, now - CURRENT_VIEWER_MS);
    await this.repo.raisePeak(eventId, current, now);
  }

  async stats(customerId: string, eventId: string) {
    const row = await this.live.load(customerId, eventId);
    const now = this.clock.nowMs();
    const stats = await this.repo.stats(eventId, () => randomBytes(16).toString('base64'));
    const totals = await this.repo.viewerTotals(eventId);
    const start = row.actual_start_at;
    return {
      event_id: row.id,
      status: row.status as ReturnType<LiveService['view']>['status'],
      current_viewers: await this.repo.viewersSince(eventId, now - CURRENT_VIEWER_MS),
      peak_viewers: stats.peak_viewers,
      peak_at: iso(stats.peak_at),
      total_viewers: totals.viewers,
      minutes_watched: Math.round(totals.watchedMs / 600) / 100,
      segments_served: totals.segments,
      bytes_served: totals.bytes,
      playlist_requests: Number(stats.playlist_requests),
      live_duration_seconds: start === null ? 0 : Math.round(((row.actual_end_at ?? now) - start) / 1000),
      measured_at: iso(now)!,
    };
  }
}
