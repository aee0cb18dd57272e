import type { Clock } from '../../kernel/clock.js';
import type { Store } from '../../kernel/store/store.js';
import { MediaRepo } from './media-repo.js';
import type { LiveEventsTable, LiveRecordingsTable } from './migrations.js';
import { joinPlaylist, sessionSegments } from './playlist.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/** An event's published replay, shaped like a video platform's asset playback. */
export interface ReplayPlayback {
  protocol: 'hls';
  hls_url: string;
  url: string;
  ready: boolean;
  duration_seconds: number;
  recording_count: number;
  published_at: string;
  expires_at: string;
}

/** Whether the event publishes a replay at all (the recordings decide whether one exists yet). */
export const replayWanted = (row: LiveEventsTable): boolean =>
  row.status === 'ended' && row.record_enabled === 1 && row.replay_enabled === 1 && row.deleted_at === null;

/**
 * Replays: when an event with `replay_enabled` has ended, the recordings of its encoder
 * connections are served as one HLS VOD playlist. Nothing is copied: the replay reads the
 * recordings where the ingest wrote them, so it is gone the moment they expire.
 */
export class LiveReplay {
  private readonly media: MediaRepo;

  constructor(
    store: Store,
    private readonly clock: Clock,
    private readonly liveUrl: () => string,
    private readonly sessionsDir: string,
  ) {
    this.media = MediaRepo.of(store);
  }

  /** The recordings a replay plays, or null when the event has no replay (now). */
  async recordings(row: LiveEventsTable): Promise<LiveRecordingsTable[] | null> {
    if (!replayWanted(row)) return null;
    const kept = await this.media.keptRecordings(row.id, this.clock.nowMs());
    return kept.length > 0 ? kept : null;
  }

  /** `replay_playback` of an event; `grant` is appended to the address for protected events. */
  async playback(row: LiveEventsTable, grant: string | null = null): Promise<ReplayPlayback | null> {
    const recs = await this.recordings(row);
    if (!recs) return null;
    const q = grant === null ? '' : `?grant=${encodeURIComponent(grant)}`;
    const url = `${this.liveUrl()}/replay/${row.id}/index.m3u8${q}`;
    return {
      protocol: 'hls',
      hls_url: url,
      url,
      ready: true,
      duration_seconds: Math.round(recs.reduce((n, r) => n + Number(r.duration_ms), 0)) / 1000,
      recording_count: recs.length,
      // Published when the last recording was kept (the event then became `ended`).
      published_at: iso(Math.max(...recs.map((r) => Number(r.created_at)))),
      expires_at: iso(Math.min(...recs.map((r) => Number(r.expires_at)))),
    };
  }

  /** The replay playlist: every recording in order, a discontinuity between connections. */
  async playlist(recs: LiveRecordingsTable[], query: string): Promise<string> {
    const parts = [];
    for (const r of recs)
      parts.push({
        sessionId: r.session_id,
        segments: await sessionSegments(this.sessionsDir, r.session_id),
      });
    return joinPlaylist(parts, { vod: true, ended: true, query });
  }
}
