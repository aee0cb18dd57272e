import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RtmpIngest } from '../../src/areas/live/ingest.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * A real encoder (ffmpeg over RTMP) that drops and comes back: the event stays live within the
 * reconnect window and its HLS goes on over both connections; the replay of the ended event is
 * one VOD playlist that ffprobe reads, of the length streamed. Without a reconnect the window's
 * end moves the event on as a stop would.
 */
let t: TestFjord;
let a: TestCustomer;
let port: number;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_RTMP_PORT: '0',
    FJORD_RATE_LIMITS: JSON.stringify({ 'live-events': { points: 100_000, duration: 60 } }),
  });
  a = await t.customer();
  await t.fjord.start(['rtmp']);
  port = (t.fjord.areas.get('live')!.servers![0] as RtmpIngest).port();
});
afterAll(() => t.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function push(key: string, seconds: number) {
  const ff = spawn(
    'ffmpeg',
    [
      ...['-hide_banner', '-loglevel', 'error', '-re'],
      ...['-f', 'lavfi', '-i', `testsrc=size=320x240:rate=25:duration=${seconds}`],
      ...['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-c:a', 'aac', '-f', 'flv'],
      `rtmp://127.0.0.1:${port}/live/${key}`,
    ],
    { stdio: 'ignore' },
  );
  return { done: once(ff, 'exit').then(([code]) => code as number), kill: () => ff.kill('SIGKILL') };
}

const get = (id: string, what = '') =>
  t.request('GET', `/v1/live-events/events/${id}${what ? `/${what}` : ''}`, { key: a.pat });

async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, tries = 200): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await what();
    if (ok(v)) return v;
    await sleep(100);
  }
  throw new Error(`never became as expected: ${JSON.stringify(await what())}`);
}

type Sessions = { sessions: { id: string; status: string }[] };
const sessions = async (id: string) => (await get(id, 'sessions')).body as Sessions;
const status = async (id: string) => (await get(id)).body.status as string;
const inject = (url: string) => t.fjord.http.inject({ method: 'GET', url });

/** Advances the clock in small steps until the event reaches `want` (jobs run on the clock). */
async function advanceUntil(id: string, want: string, step = 3) {
  for (let i = 0; i < 60; i++) {
    if ((await status(id)) === want) return;
    await t.advance(step);
    await sleep(100);
  }
  expect(await status(id)).toBe(want);
}

describe('reconnect window', () => {
  it('keeps the event live across a dropped encoder, and publishes both connections as one replay', async () => {
    const created = await t.request('POST', '/v1/live-events/events', {
      key: a.pat,
      body: { name: 'flaky uplink', auto_start_on_ingest: true },
    });
    const e = created.body;
    expect(e.reconnect_window_seconds).toBe(60);
    const first = push(e.stream_key, 30);
    // Cut the encoder once a few segments are out.
    await until(
      () => inject(`/live/hls/${e.id}/index.m3u8`),
      (r) => r.statusCode === 200 && r.body.split('\n').filter((l) => l.endsWith('.ts')).length >= 2,
    );
    first.kill();
    await first.done;
    await until(
      () => sessions(e.id),
      (b) => b.sessions[0]?.status === 'ended',
    );
    expect(await status(e.id)).toBe('live');
    // Within the window the playlist stays open for players.
    expect((await inject(`/live/hls/${e.id}/index.m3u8`)).body).not.toContain('#EXT-X-ENDLIST');

    await t.advance(20);
    const second = push(e.stream_key, 3);
    expect(await second.done).toBe(0);
    const both = await until(
      () => sessions(e.id),
      (b) => b.sessions.length === 2 && b.sessions.every((s) => s.status === 'ended'),
    );
    expect(await status(e.id)).toBe('live');
    // One live stream over both connections, a discontinuity between them.
    const pl = (await inject(`/live/hls/${e.id}/index.m3u8`)).body;
    expect(pl.split('\n').filter((l) => l === '#EXT-X-DISCONTINUITY')).toHaveLength(1);
    const segs = pl.split('\n').filter((l) => l.endsWith('.ts'));
    const [newer, older] = both.sessions.map((s) => s.id);
    expect(segs[0]!.startsWith(`${older}/`)).toBe(true);
    expect(segs.at(-1)!.startsWith(`${newer}/`)).toBe(true);
    expect((await inject(`/live/hls/${e.id}/${segs.at(-1)}`)).statusCode).toBe(200);

    // No encoder for the window's 60 s: the event moves on as a stop would, then is finalised.
    await t.advance(61);
    await until(
      () => status(e.id),
      (s) => s !== 'live',
    );
    await advanceUntil(e.id, 'ended');
    const ended = (await get(e.id)).body;
    expect(ended.recording_count).toBe(2);
    const replay = ended.replay_playback;
    expect(replay).toMatchObject({ protocol: 'hls', ready: true, recording_count: 2 });

    // The replay, fetched as a player would, is one stream ffprobe reads, of the length streamed.
    const dir = await mkdtemp(join(tmpdir(), 'replay-'));
    try {
      const playlist = await inject(new URL(replay.hls_url).pathname);
      expect(playlist.statusCode).toBe(200);
      expect(playlist.body).toContain('#EXT-X-PLAYLIST-TYPE:VOD');
      expect(playlist.body).toContain('#EXT-X-ENDLIST');
      expect(playlist.body).toContain('#EXT-X-DISCONTINUITY');
      for (const seg of playlist.body.split('\n').filter((l) => l.endsWith('.ts'))) {
        const r = await inject(`/live/replay/${e.id}/${seg}`);
        expect(r.statusCode).toBe(200);
        await mkdir(dirname(join(dir, seg)), { recursive: true });
        await writeFile(join(dir, seg), r.rawPayload);
      }
      await writeFile(join(dir, 'index.m3u8'), playlist.body);
      const probe = spawnSync(
        'ffprobe',
        ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', join(dir, 'index.m3u8')],
        { encoding: 'utf8' },
      );
      expect(probe.status).toBe(0);
      const seconds = Number(probe.stdout.trim());
      expect(Math.abs(seconds - replay.duration_seconds)).toBeLessThan(1.5);
      expect(replay.duration_seconds).toBeGreaterThan(4);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('ends an event whose encoder does not come back within its window', async () => {
    const created = await t.request('POST', '/v1/live-events/events', {
      key: a.pat,
      body: { name: 'gone', auto_start_on_ingest: true, record_enabled: false, reconnect_window_seconds: 30 },
    });
    const e = created.body;
    expect(e.reconnect_window_seconds).toBe(30);
    const pushed = push(e.stream_key, 2);
    expect(await pushed.done).toBe(0);
    await until(
      () => sessions(e.id),
      (b) => b.sessions[0]?.status === 'ended',
    );
    // From here the clock moves only by advance: a loaded machine would cross 30 s on its own.
    t.freezeClock();
    await t.advance(29);
    await sleep(300);
    expect(await status(e.id)).toBe('live');
    await t.advance(2);
    await until(
      () => status(e.id),
      (s) => s === 'ended',
    );
    expect((await get(e.id)).body.actual_end_at).not.toBeNull();
  }, 60_000);
});
