import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RtmpIngest } from '../../src/areas/live/ingest.js';
import { mp4Key } from '../../src/areas/live/recording-file.js';
import type { StorageService } from '../../src/areas/storage/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * A real encoder (ffmpeg pushing lavfi test picture and tone over RTMP): what the ingest's ffmpeg
 * measures shows in ingest, health and sessions; a stop cuts the encoder and keeps its HLS as a
 * recording that ffprobe reads; a stream above the event's bitrate is cut.
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

/** ffmpeg publishing `seconds` of test source; `noise` makes a high bitrate. */
function push(key: string, seconds: number, opts: { noise?: boolean } = {}) {
  const video = `testsrc=size=320x240:rate=25:duration=${seconds}${opts.noise ? ',noise=alls=100:allf=t' : ''}`;
  const ff = spawn(
    'ffmpeg',
    [
      ...['-hide_banner', '-loglevel', 'error', '-re'],
      ...['-f', 'lavfi', '-i', video],
      ...['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-c:a', 'aac', '-f', 'flv'],
      `rtmp://127.0.0.1:${port}/live/${key}`,
    ],
    { stdio: 'ignore' },
  );
  return { done: once(ff, 'exit').then(([code]) => code as number), kill: () => ff.kill('SIGKILL') };
}

const get = (id: string, what: string) =>
  t.request('GET', `/v1/live-events/events/${id}/${what}`, { key: a.pat });

/** Polls `what` until `ok` holds (the encoder is real: no fixed sleep decides). */
async function until(id: string, what: string, ok: (body: never) => boolean, tries = 150) {
  for (let i = 0; i < tries; i++) {
    const r = await get(id, what);
    if (r.status === 200 && ok(r.body as never)) return r.body;
    await sleep(100);
  }
  throw new Error(`${what} never became as expected: ${JSON.stringify((await get(id, what)).body)}`);
}

async function create(body: Record<string, unknown>) {
  const r = await t.request('POST', '/v1/live-events/events', { key: a.pat, body });
  expect(r.status).toBe(201);
  return r.body;
}

describe('measured ingest', () => {
  it('shows what the encoder sends, counts viewers, and keeps the stream as a recording', async () => {
    const e = await create({ name: 'measured', auto_start_on_ingest: true });
    const pushed = push(e.stream_key, 6);
    type Ingest = {
      current_session: { frame_rate: number | null; keyframe_interval_seconds: number | null } | null;
    };
    const ingest = await until(
      e.id,
      'ingest',
      (b: Ingest) => !!b.current_session?.frame_rate && b.current_session.keyframe_interval_seconds !== null,
    );
    expect(ingest).toMatchObject({
      status: 'receiving',
      current_session: {
        status: 'active',
        video: { codec: 'h264', width: 320, height: 240 },
        audio: { codec: 'aac', sample_rate: 44100 },
      },
    });
    const s = (ingest as { current_session: Record<string, number> }).current_session;
    expect(s['frame_rate']).toBeGreaterThan(23);
    expect(s['frame_rate']).toBeLessThan(27);
    expect(s['keyframe_interval_seconds']).toBeCloseTo(1, 1);
    expect(s['bitrate_kbps']).toBeGreaterThan(10);
    expect(s['bytes_received']).toBeGreaterThan(0);
    const health = (await get(e.id, 'health')).body;
    expect(health).toMatchObject({ status: 'healthy', reasons: [], session_id: s['id'] });
    expect(Date.parse(health.last_frame_at)).toBeGreaterThan(t.kernel.clock.nowMs() - 5000);

    // A viewer fetches the playlist and a segment: counted.
    let playlist = '';
    for (let i = 0; i < 100 && !playlist.includes('.ts'); i++) {
      const r = await t.fjord.http.inject({ method: 'GET', url: `/live/hls/${e.id}/index.m3u8` });
      playlist = r.statusCode === 200 ? r.body : '';
      if (!playlist.includes('.ts')) await sleep(100);
    }
    const segment = playlist.split('\n').find((l) => l.endsWith('.ts'))!;
    const seg = await t.fjord.http.inject({ method: 'GET', url: `/live/hls/${e.id}/${segment}` });
    expect(seg.statusCode).toBe(200);
    expect((await get(e.id, 'stats')).body).toMatchObject({
      current_viewers: 1,
      peak_viewers: 1,
      total_viewers: 1,
      segments_served: 1,
      bytes_served: seg.rawPayload.length,
    });

    expect(await pushed.done).toBe(0);
    const sessions = await until(
      e.id,
      'sessions',
      (b: { sessions: { status: string }[] }) => b.sessions[0]?.status === 'ended',
    );
    expect((sessions as { sessions: unknown[] }).sessions[0]).toMatchObject({
      end_reason: 'encoder_disconnected',
      video: { codec: 'h264' },
    });

    const stopped = await t.request('POST', `/v1/live-events/events/${e.id}/live/stop`, { key: a.pat });
    expect(stopped.body.status).toBe('ending');
    let status = 'ending';
    for (let i = 0; i < 40 && status !== 'ended'; i++) {
      await t.advance(3);
      status = (await t.request('GET', `/v1/live-events/events/${e.id}`, { key: a.pat })).body.status;
      if (status !== 'ended') await sleep(100);
    }
    expect(status).toBe('ended');
    const rec = (await get(e.id, 'recordings')).body.recordings[0];
    expect(rec).toMatchObject({
      status: 'ready',
      format: 'mp4',
      content_type: 'video/mp4',
      session_id: s['id'],
    });
    expect(rec.duration_seconds).toBeGreaterThan(4.5);
    expect(rec.duration_seconds).toBeLessThan(7.5);
    // The kept HLS is a complete, readable stream of that length.
    const dir = join(t.kernel.config.dataDir, 'live', 'sessions', rec.session_id);
    const probe = spawnSync(
      'ffprobe',
      ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', join(dir, 'index.m3u8')],
      { encoding: 'utf8' },
    );
    expect(probe.status).toBe(0);
    expect(Math.abs(Number(probe.stdout.trim()) - rec.duration_seconds)).toBeLessThan(1);

    // The MP4 in object storage: its real size and length, both tracks, downloadable.
    expect(rec.download_url).toBe(
      `${t.kernel.baseUrl()}/v1/live-events/events/${e.id}/recordings/${rec.id}/download`,
    );
    const file = await t.request('GET', new URL(rec.download_url).pathname, { key: a.pat });
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('video/mp4');
    expect(file.raw.length).toBe(rec.size_bytes);
    const mp4 = join(t.kernel.config.dataDir, 'download.mp4');
    writeFileSync(mp4, file.raw);
    const streams = spawnSync(
      'ffprobe',
      [...['-v', 'error', '-show_entries', 'stream=codec_name:format=duration', '-of', 'json', mp4]],
      { encoding: 'utf8' },
    );
    const probed = JSON.parse(streams.stdout);
    expect(probed.streams.map((x: { codec_name: string }) => x.codec_name).sort()).toEqual(['aac', 'h264']);
    expect(Math.abs(Number(probed.format.duration) - rec.duration_seconds)).toBeLessThan(0.1);
    expect(Math.abs(rec.duration_seconds - Number(probe.stdout.trim()))).toBeLessThan(1);
    const bucket = (t.fjord.areas.get('storage')!.service as StorageService).internalBucket(
      'live-recordings',
    );
    expect((await bucket.usage()).objects).toBeGreaterThan(0);
    // Another customer cannot fetch it.
    const b = await t.customer();
    expect((await t.request('GET', new URL(rec.download_url).pathname, { key: b.pat })).status).toBe(404);

    // retention_days later (on the clock) the recording, its MP4 and its HLS are gone.
    await t.advance(7 * 86400 + 3600);
    expect((await get(e.id, 'recordings')).body.total).toBe(0);
    expect((await t.request('GET', new URL(rec.download_url).pathname, { key: a.pat })).status).toBe(404);
    await expect(bucket.get(mp4Key(a.id, e.id, rec.session_id))).rejects.toThrow();
    expect(existsSync(dir)).toBe(false);
  }, 90_000);

  it('cuts the encoder when the event is stopped', async () => {
    const e = await create({ name: 'cut on stop', auto_start_on_ingest: true, record_enabled: false });
    const pushed = push(e.stream_key, 30);
    try {
      await until(e.id, 'ingest', (b: { status: string }) => b.status === 'receiving');
      const stopped = await t.request('POST', `/v1/live-events/events/${e.id}/live/stop`, { key: a.pat });
      expect(stopped.body.status).toBe('ended');
      const sessions = await until(
        e.id,
        'sessions',
        (b: { sessions: { status: string }[] }) => b.sessions[0]?.status === 'ended',
      );
      expect((sessions as { sessions: unknown[] }).sessions[0]).toMatchObject({
        end_reason: 'event_stopped',
      });
      expect(await pushed.done).not.toBe(0);
    } finally {
      pushed.kill();
    }
  }, 60_000);

  it('cuts a stream that stays above the event’s max_bitrate_kbps', async () => {
    const e = await create({ name: 'too fast', auto_start_on_ingest: true, max_bitrate_kbps: 100 });
    const pushed = push(e.stream_key, 40, { noise: true });
    try {
      const over = await until(e.id, 'health', (b: { reasons: { code: string }[] }) =>
        b.reasons.some((r) => r.code === 'bitrate_over_limit'),
      );
      expect(over).toMatchObject({ status: 'unhealthy', max_bitrate_kbps: 100 });
      const sessions = await until(
        e.id,
        'sessions',
        (b: { sessions: { status: string }[] }) => b.sessions[0]?.status === 'ended',
        300,
      );
      expect((sessions as { sessions: { bitrate_kbps: number }[] }).sessions[0]).toMatchObject({
        end_reason: 'bitrate_exceeded',
      });
      expect(
        (sessions as { sessions: { bitrate_kbps: number }[] }).sessions[0]!.bitrate_kbps,
      ).toBeGreaterThan(100);
    } finally {
      pushed.kill();
    }
  }, 90_000);
});
