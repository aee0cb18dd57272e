import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RtmpIngest } from '../../src/areas/live/ingest.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * A real encoder: ffmpeg pushes a few seconds of test picture and tone over RTMP with the event's
 * stream key; the event goes live on ingest and its HLS playlist and a segment are served.
 */
let t: TestFjord;
let a: TestCustomer;
let port: number;

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_RTMP_PORT: '0' });
  a = await t.customer();
  await t.fjord.start(['rtmp']);
  port = (t.fjord.areas.get('live')!.servers![0] as RtmpIngest).port();
});
afterAll(() => t.close());

/** ffmpeg publishing `seconds` of lavfi test source; resolves with its exit code. */
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
  return once(ff, 'exit').then(([code]) => code as number);
}

describe('RTMP ingest to HLS', () => {
  it('refuses an unknown key, takes the right one live and serves HLS', async () => {
    expect(await push('sk_not_a_key', 1)).not.toBe(0);

    const e = await t.request('POST', '/v1/live-events/events', {
      key: a.pat,
      body: { name: 'e2e', auto_start_on_ingest: true, record_enabled: false },
    });
    expect(e.status).toBe(201);
    const pushed = push(e.body.stream_key, 4);
    const hls = `/live/hls/${e.body.id}/index.m3u8`;
    // Wait on the playlist's first segment (the encoder is real; no fixed sleep decides).
    let playlist = '';
    for (let i = 0; i < 200 && !playlist.includes('.ts'); i++) {
      const r = await t.fjord.http.inject({ method: 'GET', url: hls });
      if (r.statusCode === 200) playlist = r.body;
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(playlist).toMatch(/^#EXTM3U/);
    const detail = await t.request('GET', `/v1/live-events/events/${e.body.id}`, { key: a.pat });
    expect(detail.body).toMatchObject({ status: 'live', ingest_status: 'receiving' });
    expect(detail.body.actual_start_at).not.toBeNull();

    const watch = await t.request('GET', `/v1/live-events/watch/${e.body.slug}`);
    expect(watch.body).toMatchObject({ watch_state: 'live', playback_mode: 'live' });
    expect(watch.body.live_playback).toEqual({ hls_url: e.body.hls_url, protocol: 'hls' });

    const segment = playlist.split('\n').find((l) => l.endsWith('.ts'))!;
    const seg = await t.fjord.http.inject({ method: 'GET', url: `/live/hls/${e.body.id}/${segment}` });
    expect(seg.statusCode).toBe(200);
    expect(seg.headers['content-type']).toBe('video/mp2t');
    expect(seg.rawPayload[0]).toBe(0x47); // MPEG-TS sync byte

    expect(await pushed).toBe(0);
    // The encoder left: the session closes, the event stays live until it is stopped.
    for (let i = 0; i < 100; i++) {
      const d = await t.request('GET', `/v1/live-events/events/${e.body.id}`, { key: a.pat });
      if (d.body.ingest_status === 'idle') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const after = await t.request('GET', `/v1/live-events/events/${e.body.id}`, { key: a.pat });
    expect(after.body).toMatchObject({ status: 'live', ingest_status: 'idle', current_session: null });
    expect(
      (await t.request('POST', `/v1/live-events/events/${e.body.id}/live/stop`, { key: a.pat })).body.status,
    ).toBe('ended');
  }, 60_000);
});
