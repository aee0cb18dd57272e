import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mp4Key } from '../../src/areas/live/recording-file.js';
import type { LiveService } from '../../src/areas/live/service.js';
import type { StorageService } from '../../src/areas/storage/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * Replays, `tenant_only` viewing and the watch view's `?token=`. Encoder sessions are played by the
 * service calls the ingest makes, with HLS files written where ffmpeg writes them
 * (live-events-reconnect.test.ts pushes a real stream and reads the replay with ffprobe).
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let live: LiveService;
let sessionsDir: string;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_RATE_LIMITS: JSON.stringify({ 'live-events': { points: 10_000, duration: 60 } }),
  });
  a = await t.customer();
  b = await t.customer();
  live = t.fjord.areas.get('live')!.service as LiveService;
  sessionsDir = join(t.kernel.config.dataDir, 'live', 'sessions');
});
afterAll(() => t.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const create = async (body: Record<string, unknown>) => {
  const r = await t.request('POST', '/v1/live-events/events', { key: a.pat, body });
  expect(r.status).toBe(201);
  return r.body;
};
const post = (id: string, what: string, body?: unknown) =>
  t.request('POST', `/v1/live-events/events/${id}/${what}`, { key: a.pat, body });
const inject = (url: string, headers: Record<string, string> = {}) =>
  t.fjord.http.inject({ method: 'GET', url, headers, remoteAddress: '203.0.113.9' });
const watch = async (slug: string, q = '', headers: Record<string, string> = {}) => {
  const r = await inject(`/v1/live-events/watch/${slug}${q}`, headers);
  return { status: r.statusCode, body: r.json() };
};
const path = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

/** An encoder connection with `segments` two-second segments on disk, then its end. */
async function session(key: string, sid: string, segments: number) {
  const eventId = await live.sessions.ingestStarted(key, sid);
  expect(eventId).not.toBeNull();
  const dir = join(sessionsDir, sid);
  await mkdir(dir, { recursive: true });
  let playlist = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n';
  for (let i = 0; i < segments; i++) {
    const name = `seg${String(i).padStart(5, '0')}.ts`;
    await writeFile(join(dir, name), Buffer.alloc(1880, 0x47));
    playlist += `#EXTINF:2.000000,\n${name}\n`;
  }
  await writeFile(join(dir, 'index.m3u8'), `${playlist}#EXT-X-ENDLIST\n`);
  await live.sessions.ingestEnded(eventId!, sid, 'encoder_disconnected', 1000);
  return eventId!;
}

/** Live with two encoder connections (3 and 2 segments), stopped and finalised. */
async function endedWithRecordings(body: Record<string, unknown>, tag: string) {
  const e = await create({ name: `replay ${tag}`, auto_start_on_ingest: true, ...body });
  await session(e.stream_key, `s1${tag}`, 3);
  await session(e.stream_key, `s2${tag}`, 2);
  expect((await post(e.id, 'live/stop')).body.status).toBe('ending');
  let status = 'ending';
  for (let i = 0; i < 40 && status !== 'ended'; i++) {
    await t.advance(3);
    status = (await t.request('GET', `/v1/live-events/events/${e.id}`, { key: a.pat })).body.status;
    if (status !== 'ended') await sleep(50);
  }
  expect(status).toBe('ended');
  return e;
}

describe('replays', () => {
  it('publishes the recordings of an ended event as one HLS VOD playlist, until they expire', async () => {
    const e = await endedWithRecordings({}, 'pub');
    const w = await watch(e.slug);
    expect(w.body).toMatchObject({
      watch_state: 'replay_available',
      playback_mode: 'replay',
      live_playback: null,
      replay_playback: { protocol: 'hls', ready: true, duration_seconds: 10, recording_count: 2 },
    });
    expect(w.body.replay_published_at).toBe(w.body.replay_playback.published_at);
    const detail = await t.request('GET', `/v1/live-events/events/${e.id}`, { key: a.pat });
    expect(detail.body.replay_playback).toEqual(w.body.replay_playback);

    const pl = await inject(path(w.body.replay_playback.hls_url));
    expect(pl.statusCode).toBe(200);
    expect(pl.headers['content-type']).toContain('application/vnd.apple.mpegurl');
    const lines = pl.body.split('\n');
    expect(lines).toContain('#EXT-X-PLAYLIST-TYPE:VOD');
    expect(lines.filter((l) => l === '#EXT-X-DISCONTINUITY')).toHaveLength(1);
    expect(lines.at(-2)).toBe('#EXT-X-ENDLIST');
    const segs = lines.filter((l) => l.endsWith('.ts'));
    expect(segs).toEqual([
      's1pub/seg00000.ts',
      's1pub/seg00001.ts',
      's1pub/seg00002.ts',
      's2pub/seg00000.ts',
      's2pub/seg00001.ts',
    ]);
    const seg = await inject(`/live/replay/${e.id}/${segs[3]}`);
    expect(seg.statusCode).toBe(200);
    expect(seg.headers['content-type']).toBe('video/mp2t');
    // A session that is not one of this replay's recordings is not served.
    expect((await inject(`/live/replay/${e.id}/elsewhere/seg00000.ts`)).statusCode).toBe(404);

    // Retention (7 days by default): the hourly purge removes the recordings, and the replay.
    await t.advance(7 * 86400 + 3600);
    for (let i = 0; i < 50; i++) {
      if ((await watch(e.slug)).body.replay_playback === null) break;
      await sleep(50);
    }
    expect((await watch(e.slug)).body).toMatchObject({
      watch_state: 'ended_no_replay',
      playback_mode: 'none',
      replay_playback: null,
    });
    expect((await inject(path(w.body.replay_playback.hls_url))).statusCode).toBe(404);
  });

  it('publishes no replay with replay_enabled off', async () => {
    const e = await endedWithRecordings({ replay_enabled: false }, 'off');
    expect((await watch(e.slug)).body).toMatchObject({
      watch_state: 'ended_no_replay',
      replay_playback: null,
    });
    expect((await inject(`/live/replay/${e.id}/index.m3u8`)).statusCode).toBe(404);
  });

  it('plays the replay of a password event only with a consumed grant', async () => {
    const e = await endedWithRecordings({ visibility_mode: 'password', password: 'open sesame' }, 'pw');
    expect((await watch(e.slug)).body).toMatchObject({
      watch_state: 'access_required',
      replay_playback: null,
    });
    expect((await inject(`/live/replay/${e.id}/index.m3u8`)).statusCode).toBe(403);
    const v = await t.fjord.http.inject({
      method: 'POST',
      url: `/v1/live-events/watch/${e.slug}/verify-password`,
      payload: { password: 'open sesame' },
    });
    const verified = v.json();
    expect(verified).toMatchObject({
      verified: true,
      watch_state: 'replay_available',
      playback_mode: 'replay',
    });
    const url = path(verified.replay_playback.hls_url);
    expect(url).toContain(`?grant=${verified.access_grant}`);
    expect((await inject(url)).statusCode).toBe(403);
    await t.fjord.http.inject({
      method: 'POST',
      url: `/v1/live-events/watch/${e.slug}/consume-grant`,
      payload: { access_grant: verified.access_grant },
    });
    const pl = await inject(url);
    expect(pl.statusCode).toBe(200);
    const seg = pl.body.split('\n').find((l) => l.includes('.ts'))!;
    expect(seg).toContain(`?grant=${verified.access_grant}`);
    expect((await inject(`/live/replay/${e.id}/${seg}`)).statusCode).toBe(200);
    expect((await inject(`/live/replay/${e.id}/${seg.split('?')[0]}`)).statusCode).toBe(403);
  });
});

describe('MP4 recordings', () => {
  it('makes each connection an MP4 in the internal bucket, and purges it with a deleted event', async () => {
    const e = await create({ name: 'mp4 kept', auto_start_on_ingest: true });
    const sid = `mp4-${e.id}`;
    expect(await live.sessions.ingestStarted(e.stream_key, sid)).toBe(e.id);
    // The HLS the ingest's ffmpeg writes, written here by ffmpeg the same way (4 s, 2 s segments).
    const dir = join(sessionsDir, sid);
    await mkdir(dir, { recursive: true });
    execFileSync('ffmpeg', [
      ...['-v', 'error', '-nostdin', '-y'],
      ...['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=25:duration=4'],
      ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=4'],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac'],
      ...['-f', 'hls', '-hls_time', '2', '-hls_list_size', '0'],
      ...['-hls_segment_filename', join(dir, 'seg%05d.ts'), join(dir, 'index.m3u8')],
    ]);
    await live.sessions.ingestEnded(e.id, sid, 'encoder_disconnected', 1000);
    expect((await post(e.id, 'live/stop')).body.status).toBe('ending');
    let status = 'ending';
    for (let i = 0; i < 40 && status !== 'ended'; i++) {
      await t.advance(3);
      status = (await t.request('GET', `/v1/live-events/events/${e.id}`, { key: a.pat })).body.status;
      if (status !== 'ended') await sleep(50);
    }
    const rec = (await t.request('GET', `/v1/live-events/events/${e.id}/recordings`, { key: a.pat })).body
      .recordings[0];
    expect(rec).toMatchObject({ format: 'mp4', content_type: 'video/mp4', segment_count: 2 });
    expect(Math.abs(rec.duration_seconds - 4)).toBeLessThan(0.2);
    const file = await t.request('GET', path(rec.download_url), { key: a.pat });
    expect([file.status, file.raw.length]).toEqual([200, rec.size_bytes]);
    expect(file.raw.subarray(4, 8).toString()).toBe('ftyp'); // an MP4
    expect(file.headers['content-disposition']).toMatch(/^attachment; filename="mp4-kept-.*\.mp4"$/);
    // The replay plays the HLS as before.
    expect((await watch(e.slug)).body.replay_playback).toMatchObject({ recording_count: 1 });

    const bucket = (t.fjord.areas.get('storage')!.service as StorageService).internalBucket(
      'live-recordings',
    );
    const key = mp4Key(a.id, e.id, sid);
    await (await bucket.get(key)).resume();
    expect((await t.request('DELETE', `/v1/live-events/events/${e.id}`, { key: a.pat })).status).toBe(200);
    await t.advance(30 * 86400 + 3600);
    await expect(bucket.get(key)).rejects.toThrow();
  });
});

describe('tenant_only viewing and the watch page token', () => {
  it("lets only the event's own customer watch a tenant_only event, with a grant for its HLS", async () => {
    const e = await create({ name: 'all hands', visibility_mode: 'tenant_only', auto_start_on_ingest: true });
    await session(e.stream_key, 'tenant1', 2);
    const hls = `/live/hls/${e.id}/index.m3u8`;
    const refused: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${b.pat}` },
      { authorization: 'Bearer nonsense' },
    ];
    for (const headers of refused) {
      const r = await watch(e.slug, '', headers);
      expect(r.status).toBe(403);
      expect(r.body.error?.code ?? r.body.detail?.code).toBe('tenant_access_required');
    }
    expect((await inject(hls)).statusCode).toBe(403);
    const w = await watch(e.slug, '', { authorization: `Bearer ${a.pat}` });
    expect(w.status).toBe(200);
    expect(w.body).toMatchObject({ watch_state: 'live', playback_mode: 'live', auth_type: 'tenant_only' });
    expect(w.body.access_grant).toMatch(/^ag_/);
    const url = path(w.body.live_playback.hls_url);
    expect(url).toBe(`${hls}?grant=${w.body.access_grant}`);
    // The grant is a playback pass at once: nothing to count, so nothing to consume.
    const pl = await inject(url);
    expect(pl.statusCode).toBe(200);
    const seg = pl.body.split('\n').find((l) => l.includes('.ts'))!;
    expect((await inject(`/live/hls/${e.id}/${seg}`)).statusCode).toBe(200);
    expect((await inject(`/live/hls/${e.id}/${seg.split('?')[0]}`)).statusCode).toBe(403);
  });

  it('takes a watch token as the watch view’s token query parameter', async () => {
    const e = await create({ name: 'premiere', visibility_mode: 'token', auto_start_on_ingest: true });
    await session(e.stream_key, 'token1', 2);
    const token = (await post(e.id, 'tokens', { max_uses: 1 })).body.token;
    const wrong = await watch(e.slug, '?token=wt_nope');
    expect(wrong.body).toMatchObject({
      watch_state: 'access_required',
      access_grant: null,
      live_playback: null,
    });
    const w = await watch(e.slug, `?token=${encodeURIComponent(token)}`);
    expect(w.body).toMatchObject({ watch_state: 'live', playback_mode: 'live' });
    expect(w.body.access_grant).toMatch(/^ag_/);
    expect(Date.parse(w.body.access_grant_expires_at)).toBeGreaterThan(t.kernel.clock.nowMs());
    const url = path(w.body.live_playback.hls_url);
    // Like verify-token: the grant opens the HLS once consumed, which counts the token's one use.
    expect((await inject(url)).statusCode).toBe(403);
    const consumed = await t.fjord.http.inject({
      method: 'POST',
      url: `/v1/live-events/watch/${e.slug}/consume-grant`,
      payload: { access_grant: w.body.access_grant },
    });
    expect(consumed.json()).toMatchObject({ consumed: true, already_consumed: false });
    expect((await inject(url)).statusCode).toBe(200);
    const tokens = (await t.request('GET', `/v1/live-events/events/${e.id}/tokens`, { key: a.pat })).body;
    expect(tokens.tokens[0]).toMatchObject({ use_count: 1, status: 'exhausted' });
    expect((await watch(e.slug, `?token=${encodeURIComponent(token)}`)).body.access_grant).toBeNull();
  });
});
