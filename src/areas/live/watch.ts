import type { LiveEventsTable } from './migrations.js';
import type { ReplayPlayback } from './replay.js';

export const WATCH_STATES = [
  'not_started',
  'access_required',
  'live',
  'rehearsal_hidden',
  'processing_replay',
  'replay_available',
  'ended_no_replay',
  'cancelled',
] as const;
export type WatchState = (typeof WATCH_STATES)[number];

/**
 * What a viewer sees for each status. While an event is `ending` or `processing` with recording
 * and replay on, the viewer is told a replay is on its way; once `ended` it is
 * `replay_available` when its recordings were published (and not yet expired). An event that needs
 * access shows `access_required` while it is live or has a replay, so the page asks for the
 * password or token; before the start it still counts down.
 */
export function watchState(row: LiveEventsTable, hasAccess: boolean, hasReplay = false): WatchState {
  switch (row.status) {
    case 'scheduled':
    case 'ready':
      return 'not_started';
    case 'rehearsal':
      return 'rehearsal_hidden';
    case 'live':
      return hasAccess ? 'live' : 'access_required';
    case 'ending':
    case 'processing':
      return row.record_enabled === 1 && row.replay_enabled === 1 ? 'processing_replay' : 'ended_no_replay';
    case 'cancelled':
      return 'cancelled';
    case 'ended':
      if (!hasReplay) return 'ended_no_replay';
      return hasAccess ? 'replay_available' : 'access_required';
    default:
      // failed
      return 'ended_no_replay';
  }
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * The public watch view. Playback addresses only when the viewer may see them: public events, or
 * a viewer who verified a password or token (`grant`: the HLS address then carries the grant;
 * `replay` must already carry it too).
 */
export function watchView(
  row: LiveEventsTable,
  hlsUrl: string,
  nowMs: number,
  grant: string | null = null,
  replay: ReplayPlayback | null = null,
) {
  const requiresAuth = row.visibility_mode !== 'public';
  const state = watchState(row, !requiresAuth || grant !== null, replay !== null);
  if (grant !== null) hlsUrl = `${hlsUrl}?grant=${encodeURIComponent(grant)}`;
  const live = state === 'live' && row.last_session_id !== null;
  const replaying = state === 'replay_available';
  return {
    event_id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    status: row.status,
    watch_state: state,
    visibility_mode: row.visibility_mode,
    requires_auth: requiresAuth,
    auth_type: requiresAuth ? row.visibility_mode : null,
    scheduled_start_at: iso(row.scheduled_start_at),
    scheduled_end_at: iso(row.scheduled_end_at),
    actual_start_at: iso(row.actual_start_at),
    actual_end_at: iso(row.actual_end_at),
    replay_published_at: replay?.published_at ?? null,
    timezone: row.timezone,
    countdown_enabled:
      state === 'not_started' && row.scheduled_start_at !== null && row.scheduled_start_at > nowMs,
    playback_mode: live ? 'live' : replaying ? 'replay' : 'none',
    live_playback: live ? { hls_url: hlsUrl, protocol: 'hls' } : null,
    replay_playback: replaying ? replay : null,
    access_grant: null as string | null,
    access_grant_expires_at: null as string | null,
    embed_enabled: row.embed_enabled === 1,
    banner_url: null,
    logo_url: null,
  };
}
