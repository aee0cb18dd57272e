import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamMetrics } from '../../src/areas/live/meter.js';
import type { LiveService } from '../../src/areas/live/service.js';
import { expectTenantIsolation } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';

/**
 * Viewer access (passwords, watch tokens, access grants), HLS counted for stats, sessions, health
 * and recordings. Encoder sessions are played by the service calls the ingest makes, with HLS
 * files written where ffmpeg writes them (live-events-ingest.test.ts pushes a real stream).
 */
let t: TestFjord;
let a: TestCustomer;
let live: LiveService;
let sessionsDir: string;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_RATE_LIMITS: JSON.stringify({ 'live-events': { points: 10_000, duration: 60 } }),
    FJORD_LIMITS: JSON.stringify({ 'live.tokens_per_event': 12, 'live.events': 100 }),
  });
  a = await t.customer();
  live = t.fjord.areas.get('live')!.service as LiveService;
  sessionsDir = join(t.kernel.config.dataDir, 'live', 'sessions');
});
afterAll(() => t.close());

const create = async (body: Record<string, unknown>) => {
  const r = await t.request('POST', '/v1/live-events/events', { key: a.pat, body });
  expect(r.status).toBe(201);
  return r.body;
};
const get = (id: string, what: string, key = a.pat) =>
  t.request('GET', `/v1/live-events/events/${id}/${what}`, { key });
const post = (id: string, what: string, body?: unknown) =>
  t.request('POST', `/v1/live-events/events/${id}/${what}`, { key: a.pat, body });
const viewer = (slug: string, what: string, body: unknown, ip = '203.0.113.7') =>
  t.fjord.http
    .inject({
      method: 'POST',
      url: `/v1/live-events/watch/${slug}/${what}`,
      payload: body as object,
      remoteAddress: ip,
    })
    .then((r) => ({ status: r.statusCode, headers: r.headers, body: r.json(), text: r.body }));
const code = (r: { body: { detail?: { code: string }; error?: { code: string } } }) =>
  r.body.detail?.code ?? r.body.error?.code;

/** An encoder session as the ingest reports it, with `segments` two-second segments on disk. */
async function session(key: string, sid: string, segments: number, opts: { end?: boolean } = {}) {
  const eventId = await live.sessions.ingestStarted(key, sid);
  expect(eventId).not.toBeNull();
  const dir = join(sessionsDir, sid);
  await mkdir(dir, { recursive: true });
  let playlist = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n';
  for (let i = 0; i < segments; i++) {
    const name = `seg${String(i).padStart(5, '0')}.ts`;
    await writeFile(join(dir, name), Buffer.alloc(1880 * (i + 1), 0x47));
    playlist += `#EXTINF:2.000000,\n${name}\n`;
  }
  if (opts.end) playlist += '#EXT-X-ENDLIST\n';
  await writeFile(join(dir, 'index.m3u8'), playlist);
  return eventId!;
}

const metrics = (over: Partial<StreamMetrics> = {}): StreamMetrics => ({
  video: { codec: 'h264', width: 1280, height: 720 },
  audio: { codec: 'aac', sample_rate: 48000, channels: 'stereo' },
  bitrate_kbps: 2500,
  frame_rate: 30,
  keyframe_interval_seconds: 2,
  video_frames: 300,
  audio_frames: 470,
  dropped_frames: 0,
  media_seconds: 10,
  ...over,
});

describe('watch tokens', () => {
  it('shows the token once, keeps a hash, lists with status, and holds the per-event limit', async () => {
    const e = await create({ name: 'token show', visibility_mode: 'token' });
    const expires = new Date(t.kernel.clock.nowMs() + 3_600_000).toISOString();
    const made = await post(e.id, 'tokens', { name: 'Alice', expires_at: expires, max_uses: 2 });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      event_id: e.id,
      name: 'Alice',
      status: 'active',
      max_uses: 2,
      use_count: 0,
      last_used_at: null,
      expires_at: expires,
    });
    expect(made.body.token).toMatch(/^wt_[A-Za-z0-9]{32}$/);
    expect(made.body.token.startsWith(made.body.token_prefix)).toBe(true);
    const list = await get(e.id, 'tokens');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, per_page: 20, total: 1 });
    expect(list.body.tokens[0].token).toBeUndefined();
    expect(JSON.stringify(list.body)).not.toContain(made.body.token);

    const past = new Date(t.kernel.clock.nowMs() - 1000).toISOString();
    expect((await post(e.id, 'tokens', { expires_at: past })).status).toBe(422);
    expect((await post(e.id, 'tokens', { max_uses: 0 })).status).toBe(422);
    expect((await post('no-such-event', 'tokens', {})).status).toBe(404);

    // 12 per event in this run: one made above, 11 more fit.
    await expectLimitHolds({
      room: 11,
      attempts: 20,
      send: () => post(e.id, 'tokens', {}),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });
});

describe('viewer access', () => {
  it('verifies a password, logs and limits failures, and issues a grant', async () => {
    const e = await create({ name: 'members only', visibility_mode: 'password', password: 'open sesame' });
    await post(e.id, 'live/start');
    const wrong = await viewer(e.slug, 'verify-password', { password: 'guess' });
    expect(wrong.status).toBe(200);
    expect(wrong.body).toEqual({
      verified: false,
      reason: 'invalid',
      access_grant: null,
      access_grant_expires_at: null,
      watch_state: 'access_required',
      playback_mode: 'none',
      live_playback: null,
      replay_playback: null,
    });
    const audit = await t.kernel.store.db
      .selectFrom('audit_events' as never)
      .selectAll()
      .where('resource_id' as never, '=', e.id as never)
      .where('action' as never, '=', 'live_event.viewer_access_failed' as never)
      .execute();
    expect(audit).toHaveLength(1);

    const right = await viewer(e.slug, 'verify-password', { password: 'open sesame' });
    expect(right.body).toMatchObject({ verified: true, reason: null, watch_state: 'live' });
    expect(right.body.access_grant).toMatch(/^ag_/);
    expect(Date.parse(right.body.access_grant_expires_at) - t.kernel.clock.nowMs()).toBeGreaterThan(590_000);

    // Ten failures per address in ten minutes; another address is not affected.
    for (let i = 0; i < 9; i++)
      expect((await viewer(e.slug, 'verify-password', { password: `no ${i}` })).status).toBe(200);
    const limited = await viewer(e.slug, 'verify-password', { password: 'open sesame' });
    expect(limited.status).toBe(429);
    expect(code(limited)).toBe('too_many_attempts');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(
      (await viewer(e.slug, 'verify-password', { password: 'open sesame' }, '198.51.100.9')).body.verified,
    ).toBe(true);
    await t.advance(601);
    expect((await viewer(e.slug, 'verify-password', { password: 'open sesame' })).body.verified).toBe(true);
  });

  it('holds the failure limit when guesses arrive together', async () => {
    const e = await create({ name: 'guessing race', visibility_mode: 'password', password: 'right one' });
    const replies = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        viewer(e.slug, 'verify-password', { password: `wrong ${i}` }, '192.0.2.50'),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(15);
  });

  it('refuses the wrong kind of check, drafts and unknown grants', async () => {
    const pub = await create({ name: 'open door' });
    expect(code(await viewer(pub.slug, 'verify-password', { password: 'x' }))).toBe('visibility_public');
    expect(code(await viewer(pub.slug, 'verify-token', { token: 'wt_x' }))).toBe('visibility_public');
    const draft = await create({
      name: 'draft door',
      draft: true,
      visibility_mode: 'password',
      password: 'pass',
    });
    expect((await viewer(draft.slug, 'verify-password', { password: 'pass' })).status).toBe(404);
    expect((await viewer(pub.slug, 'consume-grant', { access_grant: 'ag_nope' })).status).toBe(404);
    expect((await viewer(pub.slug, 'consume-grant', { access_grant: 'nope' })).status).toBe(422);
    expect((await viewer(pub.slug, 'verify-password', {})).status).toBe(422);
  });

  it('follows the access grant table: verify, consume once, already consumed, expired', async () => {
    const e = await create({ name: 'ticketed', visibility_mode: 'token' });
    const tok = (await post(e.id, 'tokens', { max_uses: 2 })).body;
    const other = await create({ name: 'other ticketed', visibility_mode: 'token' });
    expect((await viewer(other.slug, 'verify-token', { token: tok.token })).body).toMatchObject({
      verified: false,
      reason: 'invalid',
    });

    const v1 = await viewer(e.slug, 'verify-token', { token: tok.token });
    expect(v1.body).toMatchObject({ verified: true, watch_state: 'not_started' });
    const v2 = await viewer(e.slug, 'verify-token', { token: tok.token });
    const v3 = await viewer(e.slug, 'verify-token', { token: tok.token });
    // Verifying never counts a use.
    expect((await get(e.id, 'tokens')).body.tokens[0].use_count).toBe(0);

    const c1 = await viewer(e.slug, 'consume-grant', { access_grant: v1.body.access_grant });
    expect(c1.body).toMatchObject({ consumed: true, already_consumed: false });
    const again = await viewer(e.slug, 'consume-grant', { access_grant: v1.body.access_grant });
    expect(again.body).toMatchObject({ consumed: true, already_consumed: true });
    expect((await get(e.id, 'tokens')).body.tokens[0]).toMatchObject({ use_count: 1, status: 'active' });
    // A grant of another event's slug is not found there.
    expect((await viewer(other.slug, 'consume-grant', { access_grant: v2.body.access_grant })).status).toBe(
      404,
    );

    expect((await viewer(e.slug, 'consume-grant', { access_grant: v2.body.access_grant })).status).toBe(200);
    expect((await get(e.id, 'tokens')).body.tokens[0]).toMatchObject({ use_count: 2, status: 'exhausted' });
    // The token's uses are spent: the third grant cannot start playback, and the token no longer verifies.
    const c3 = await viewer(e.slug, 'consume-grant', { access_grant: v3.body.access_grant });
    expect([c3.status, code(c3)]).toEqual([403, 'token_exhausted']);
    expect((await viewer(e.slug, 'verify-token', { token: tok.token })).body).toMatchObject({
      verified: false,
      reason: 'exhausted',
    });

    const tok2 = (await post(e.id, 'tokens', {})).body;
    const late = await viewer(e.slug, 'verify-token', { token: tok2.token });
    await t.advance(601);
    const expired = await viewer(e.slug, 'consume-grant', { access_grant: late.body.access_grant });
    expect([expired.status, code(expired)]).toEqual([403, 'grant_expired']);
    // A consumed grant stays consumed after its time.
    expect(
      (await viewer(e.slug, 'consume-grant', { access_grant: v1.body.access_grant })).body,
    ).toMatchObject({
      already_consumed: true,
    });
    expect(
      (await get(e.id, 'tokens')).body.tokens.find((x: { id: string }) => x.id === tok2.id).use_count,
    ).toBe(0);

    const short = (
      await post(e.id, 'tokens', { expires_at: new Date(t.kernel.clock.nowMs() + 60_000).toISOString() })
    ).body;
    await t.advance(61);
    expect((await viewer(e.slug, 'verify-token', { token: short.token })).body).toMatchObject({
      verified: false,
      reason: 'expired',
    });
  });

  it('counts a token use once when grants are consumed together', async () => {
    const e = await create({ name: 'race ticket', visibility_mode: 'token' });
    const tok = (await post(e.id, 'tokens', { max_uses: 3 })).body;
    const grants: string[] = [];
    for (let i = 0; i < 12; i++)
      grants.push((await viewer(e.slug, 'verify-token', { token: tok.token })).body.access_grant);
    await expectLimitHolds({
      room: 3,
      attempts: 12,
      send: (i) =>
        t.request('POST', `/v1/live-events/watch/${e.slug}/consume-grant`, {
          body: { access_grant: grants[i] },
        }),
      refusal: { status: 403, code: 'token_exhausted' },
    });
    expect((await get(e.id, 'tokens')).body.tokens[0].use_count).toBe(3);
  });
});

describe('HLS, stats and sessions', () => {
  it('serves a protected event only with a consumed grant, and counts viewers without addresses', async () => {
    const e = await create({
      name: 'paid show',
      visibility_mode: 'password',
      password: 'ticket',
      auto_start_on_ingest: true,
    });
    await session(e.stream_key, `s-${e.id}`, 3);
    const hls = (q = '') => t.fjord.http.inject({ method: 'GET', url: `/live/hls/${e.id}/index.m3u8${q}` });
    expect((await hls()).statusCode).toBe(403);
    const v = await viewer(e.slug, 'verify-password', { password: 'ticket' });
    const url = new URL(v.body.live_playback.hls_url);
    expect(url.pathname).toBe(`/live/hls/${e.id}/index.m3u8`);
    expect(url.searchParams.get('grant')).toBe(v.body.access_grant);
    // Not before playback starts (consume-grant), so a use cannot be skipped.
    expect((await hls(url.search)).statusCode).toBe(403);
    const watch = async (q: string) =>
      (await t.fjord.http.inject({ method: 'GET', url: `/v1/live-events/watch/${e.slug}${q}` })).json();
    // The watch view takes the viewer's grant only once it is consumed (the page polls with it).
    expect(await watch(`?grant=${v.body.access_grant}`)).toMatchObject({
      watch_state: 'access_required',
      live_playback: null,
    });
    await viewer(e.slug, 'consume-grant', { access_grant: v.body.access_grant });
    expect(await watch(`?grant=${v.body.access_grant}`)).toMatchObject({
      watch_state: 'live',
      live_playback: { hls_url: v.body.live_playback.hls_url },
      access_grant: null,
    });
    expect((await watch('?grant=ag_forged')).watch_state).toBe('access_required');
    const playlist = await hls(url.search);
    expect(playlist.statusCode).toBe(200);
    expect(playlist.body).toContain(`seg00000.ts${url.search}`);
    const seg = await t.fjord.http.inject({
      method: 'GET',
      url: `/live/hls/${e.id}/seg00001.ts${url.search}`,
    });
    expect(seg.statusCode).toBe(200);
    expect(seg.headers['cache-control']).toMatch(/^private/);
    expect(
      (await t.fjord.http.inject({ method: 'GET', url: `/live/hls/${e.id}/seg00001.ts?grant=ag_x` }))
        .statusCode,
    ).toBe(403);

    const stats = await get(e.id, 'stats');
    expect(stats.body).toMatchObject({
      event_id: e.id,
      status: 'live',
      current_viewers: 1,
      peak_viewers: 1,
      total_viewers: 1,
      segments_served: 1,
      bytes_served: 3760,
      playlist_requests: 1,
      minutes_watched: 0.03,
    });
  });

  it('counts public viewers per address and browser, current and peak on the clock', async () => {
    t.freezeClock(); // Durations and minutes watched are checked to the second.
    const e = await create({ name: 'free show', auto_start_on_ingest: true });
    await session(e.stream_key, `s-${e.id}`, 3);
    const fetch = (file: string, ua: string) =>
      t.fjord.http.inject({ method: 'GET', url: `/live/hls/${e.id}/${file}`, headers: { 'user-agent': ua } });
    for (const ua of ['viewer-a', 'viewer-b'])
      for (const f of ['seg00000.ts', 'seg00001.ts']) expect((await fetch(f, ua)).statusCode).toBe(200);
    await t.advance(10);
    expect((await get(e.id, 'stats')).body).toMatchObject({
      current_viewers: 2,
      peak_viewers: 2,
      total_viewers: 2,
      segments_served: 4,
      bytes_served: 2 * (1880 + 3760),
      minutes_watched: 0.13,
      live_duration_seconds: 10,
    });
    await t.advance(60);
    await fetch('seg00002.ts', 'viewer-c');
    const later = (await get(e.id, 'stats')).body;
    expect(later).toMatchObject({ current_viewers: 1, peak_viewers: 2, total_viewers: 3 });
    const rows = await t.kernel.store.db
      .selectFrom('live_viewers' as never)
      .selectAll()
      .where('event_id' as never, '=', e.id as never)
      .execute();
    expect(JSON.stringify(rows)).not.toContain('127.0.0.1');
  });

  it('records sessions with their end, reason and bytes, and health with reasons', async () => {
    t.freezeClock(); // Durations and stalls are checked to the second.
    const e = await create({ name: 'health check', auto_start_on_ingest: true, max_bitrate_kbps: 3000 });
    expect((await get(e.id, 'health')).body).toMatchObject({ status: 'idle', reasons: [], session_id: null });
    const idle = await get(e.id, 'ingest');
    expect(idle.body).toMatchObject({
      event_id: e.id,
      ingest_url: e.ingest_url,
      protocol: 'rtmp',
      stream_key: { prefix: e.stream_key.slice(0, 7), rotated_at: null },
      publish_url: `${e.ingest_url}/{stream_key}`,
      status: 'idle',
      accepts_stream: true,
      current_session: null,
      recommended: {
        video_codec: 'h264',
        audio_codec: 'aac',
        keyframe_interval_seconds: 2,
        max_bitrate_kbps: 3000,
      },
    });

    const sid = `s-${e.id}`;
    await session(e.stream_key, sid, 1);
    const now = t.kernel.clock.nowMs();
    await live.sessions.ingestProgress(e.id, sid, metrics(), 5_000_000, now);
    expect((await get(e.id, 'health')).body).toMatchObject({
      status: 'healthy',
      reasons: [],
      session_id: sid,
      bitrate_kbps: 2500,
      frame_rate: 30,
      keyframe_interval_seconds: 2,
    });
    expect((await get(e.id, 'ingest')).body.current_session).toMatchObject({
      id: sid,
      status: 'active',
      video: { codec: 'h264', width: 1280, height: 720 },
      audio: { codec: 'aac', sample_rate: 48000, channels: 'stereo' },
      bytes_received: 5_000_000,
    });

    await live.sessions.ingestProgress(
      e.id,
      sid,
      metrics({ bitrate_kbps: 4000, keyframe_interval_seconds: 6, audio: null, dropped_frames: 3 }),
      6_000_000,
      now,
    );
    const bad = (await get(e.id, 'health')).body;
    expect(bad.status).toBe('unhealthy');
    expect(bad.reasons.map((r: { code: string }) => r.code).sort()).toEqual([
      'bitrate_over_limit',
      'dropped_frames',
      'keyframe_interval_too_long',
      'no_audio',
    ]);
    await t.advance(10);
    const stalled = (await get(e.id, 'health')).body;
    expect(stalled.reasons.map((r: { code: string }) => r.code)).toContain('no_frames');
    expect(stalled.seconds_since_last_frame).toBe(10);

    await live.sessions.ingestEnded(e.id, sid, 'encoder_disconnected', 7_000_000);
    const list = await get(e.id, 'sessions');
    expect(list.body).toMatchObject({ total: 1, page: 1 });
    expect(list.body.sessions[0]).toMatchObject({
      id: sid,
      status: 'ended',
      end_reason: 'encoder_disconnected',
      bytes_received: 7_000_000,
      duration_seconds: 10,
    });
    expect((await get(e.id, 'health')).body.status).toBe('idle');
    // A new key shows a new prefix and when it was rotated.
    await post(e.id, 'live/stop');
    const rotated = (await post(e.id, 'stream-key/rotate')).body;
    const key = (await get(e.id, 'ingest')).body.stream_key;
    expect(key.prefix).toBe(rotated.stream_key.slice(0, 7));
    expect(Math.abs(Date.parse(key.rotated_at) - t.kernel.clock.nowMs())).toBeLessThan(60_000);
  });

  it('keeps recordings of the live period after the stop, and removes them after retention_days', async () => {
    const e = await create({ name: 'recorded show', auto_start_on_ingest: true, retention_days: 3 });
    const sid = `s-${e.id}`;
    await session(e.stream_key, sid, 3, { end: true });
    expect((await post(e.id, 'live/stop')).body.status).toBe('ending');
    // Stopped while the encoder still sends: the ingest cuts it at its next report.
    expect(await live.sessions.ingestProgress(e.id, sid, metrics(), 1000, null)).toMatchObject({
      accept: false,
    });
    await t.advance(1);
    expect((await t.request('GET', `/v1/live-events/events/${e.id}`, { key: a.pat })).body.status).toBe(
      'ending',
    );
    await live.sessions.ingestEnded(e.id, sid, 'event_stopped', 1000);
    await t.advance(3);
    const detail = (await t.request('GET', `/v1/live-events/events/${e.id}`, { key: a.pat })).body;
    expect(detail).toMatchObject({ status: 'ended', recording_count: 1 });
    const recs = await get(e.id, 'recordings');
    expect(recs.body).toMatchObject({ total: 1, page: 1, per_page: 20 });
    expect(recs.body.recordings[0]).toMatchObject({
      event_id: e.id,
      session_id: sid,
      status: 'ready',
      format: 'hls',
      duration_seconds: 6,
      segment_count: 3,
      size_bytes: 1880 + 3760 + 5640,
    });
    const expiresAt = Date.parse(recs.body.recordings[0].expires_at);
    expect(expiresAt - Date.parse(detail.actual_end_at)).toBe(3 * 86_400_000);
    expect((await get(e.id, 'sessions')).body.sessions[0].end_reason).toBe('event_stopped');

    await t.advance(3 * 86400 + 3600);
    expect((await get(e.id, 'recordings')).body.total).toBe(0);
    expect(existsSync(join(sessionsDir, sid))).toBe(false);
  });

  it('ends without recordings when nothing was streamed, and keeps customers apart', async () => {
    const e = await create({ name: 'silent show' });
    await post(e.id, 'live/start');
    await post(e.id, 'live/stop');
    await t.advance(1);
    expect((await t.request('GET', `/v1/live-events/events/${e.id}`, { key: a.pat })).body).toMatchObject({
      status: 'ended',
      recording_count: 0,
    });
    const b = await t.customer();
    await expectTenantIsolation(t, { key: a.pat }, { key: b.pat }, [
      ...['recordings', 'tokens', 'stats', 'ingest', 'health', 'sessions'].map((w) => ({
        method: 'GET' as const,
        url: `/v1/live-events/events/${e.id}/${w}`,
      })),
      { method: 'POST' as const, url: `/v1/live-events/events/${e.id}/tokens`, body: {} },
    ]);
  });
});
