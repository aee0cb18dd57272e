import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RtmpIngest } from '../../src/areas/live/ingest.js';
import { CHROMIUM, launchChromium } from '../helpers/chromium.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

// fjord-test: one store (sqlite). One pass runs it: the watch pages and the player in Chromium are
// its subject; live events' state is tested on both stores in the integration tier.

/**
 * The watch and embed pages in a real browser (Debian's Chromium, driven by playwright-core):
 * the countdown, the password form, then the live stream that ffmpeg pushes playing in the video
 * element, then the replay; a `token` event opened by a link with its token and by the access
 * code form; the embed page refusing when embedding is off. Screenshots are kept as artefacts
 * (`$FJORD_TEST_ARTIFACTS/live-pages`, by default under the system's temp directory).
 */
const found = existsSync(CHROMIUM);
if (!found) console.warn(`live-pages: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium)`);
const ARTEFACTS = join(
  process.env['FJORD_TEST_ARTIFACTS'] ?? join(tmpdir(), 'fjord-test-artifacts'),
  'live-pages',
);

let t: TestFjord;
let a: TestCustomer;
let rtmpPort: number;
let browser: Browser;
let ffmpeg: ChildProcess | null = null;

beforeAll(async () => {
  if (!found) return;
  t = await TestFjord.create({ FJORD_RTMP_PORT: '0', FJORD_API_PORT: '0' });
  a = await t.customer();
  await t.fjord.start(['api', 'rtmp']);
  rtmpPort = (t.fjord.areas.get('live')!.servers![0] as RtmpIngest).port();
  browser = await launchChromium();
  mkdirSync(ARTEFACTS, { recursive: true });
}, 60_000);
afterAll(async () => {
  ffmpeg?.kill('SIGKILL');
  await browser?.close();
  await t?.close();
});

/**
 * One ffmpeg publishing up to `seconds` of test picture and tone to every key (one encode, the
 * tee muxer); the test kills it once it has seen enough.
 */
function push(keys: string[], seconds: number) {
  const to = keys.map((k) => `[f=flv:onfail=ignore]rtmp://127.0.0.1:${rtmpPort}/live/${k}`).join('|');
  ffmpeg = spawn(
    'ffmpeg',
    [
      ...['-hide_banner', '-loglevel', 'error', '-re'],
      ...['-f', 'lavfi', '-i', `testsrc=size=320x240:rate=25:duration=${seconds}`],
      ...['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`],
      ...['-map', '0:v', '-map', '1:a', '-flags', '+global_header'],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p'],
      ...['-c:a', 'aac', '-f', 'tee', to],
    ],
    { stdio: 'ignore' },
  );
}

/** The little of the DOM these page functions read (the test is compiled without the DOM's types). */
interface Dom {
  document: {
    getElementById(id: string): { textContent: string; currentTime: number };
    querySelector(selector: string): { textContent: string };
  };
}
const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTEFACTS, `${name}.png`) });

describe.skipIf(!found)('watch and embed pages in Chromium', () => {
  it('counts down, asks for the password, plays the live stream, then the replay', async () => {
    const start = new Date(t.kernel.clock.nowMs() + 3600_000).toISOString();
    const e = await t.request('POST', '/v1/live-events/events', {
      key: a.pat,
      body: {
        name: 'Launch <day>',
        scheduled_start_at: start,
        visibility_mode: 'password',
        password: 'open sesame',
        auto_start_on_ingest: true,
      },
    });
    expect(e.status).toBe(201);
    expect(e.body.watch_url.startsWith(t.kernel.baseUrl())).toBe(true);

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    // Nothing the pages or hls.js do is refused by the pages' own Content-Security-Policy.
    page.on('console', (m) => m.text().includes('Content Security Policy') && errors.push(m.text()));
    const res = await page.goto(e.body.watch_url);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await page.textContent('h1')).toBe('Launch <day>'); // escaped, not markup
    await page.waitForSelector('#countdown', { state: 'visible' });
    await page.waitForFunction(() =>
      /^(00:59:\d\d|01:00:00)$/.test(
        (globalThis as unknown as Dom).document.getElementById('countdown-value').textContent,
      ),
    );
    expect(await page.textContent('#state')).toBe('The event has not started yet.');
    expect(await page.getAttribute('#state', 'aria-live')).toBe('polite');
    await shot(page, '1-countdown');

    // The start time comes (on the clock): the event is `ready`, the encoder takes it live.
    await t.advance(3600);
    expect((await t.request('GET', `/v1/live-events/events/${e.body.id}`, { key: a.pat })).body.status).toBe(
      'ready',
    );
    // A `token` event on the same encoder: a link with the token, and the access code form.
    const tk = await t.request('POST', '/v1/live-events/events', {
      key: a.pat,
      body: { name: 'Ticketed', visibility_mode: 'token', auto_start_on_ingest: true, record_enabled: false },
    });
    const code1 = (
      await t.request('POST', `/v1/live-events/events/${tk.body.id}/tokens`, { key: a.pat, body: {} })
    ).body.token;
    const code2 = (
      await t.request('POST', `/v1/live-events/events/${tk.body.id}/tokens`, { key: a.pat, body: {} })
    ).body.token;
    push([e.body.stream_key, tk.body.stream_key], 40);
    // The page's next poll (every 10 s) sees the event live and asks for the password.
    await page.waitForSelector('#password-form', { state: 'visible', timeout: 30_000 });
    expect(await page.isVisible('#countdown')).toBe(false);
    expect(await page.isVisible('#player')).toBe(false);
    expect(await page.textContent('label[for=password]')).toBe('Password');
    await shot(page, '2-password');

    await page.fill('#password', 'wrong');
    await page.click('#password-form button');
    await page.waitForFunction(
      () =>
        (globalThis as unknown as Dom).document.querySelector('#password-form [role=alert]').textContent !==
        '',
    );
    expect(await page.textContent('#password-form [role=alert]')).toBe('Wrong password.');

    await page.fill('#password', 'open sesame');
    await page.click('#password-form button');
    await page.waitForSelector('#player', { state: 'visible' });
    expect(await page.isVisible('#password-form')).toBe(false);
    // hls.js plays the live HLS (with the viewer's grant): the video's time advances.
    await page.waitForFunction(
      () => (globalThis as unknown as Dom).document.getElementById('player').currentTime > 1,
      null,
      { timeout: 30_000 },
    );
    const at = await page.evaluate(
      () => (globalThis as unknown as Dom).document.getElementById('player').currentTime,
    );
    await page.waitForFunction(
      (t0) => (globalThis as unknown as Dom).document.getElementById('player').currentTime > t0 + 0.5,
      at,
      { timeout: 15_000 },
    );
    expect(await page.textContent('#state')).toBe('Live now.');
    await shot(page, '3-live');

    const played = async (p: Page) => {
      await p.waitForSelector('#player', { state: 'visible', timeout: 30_000 });
      await p.waitForFunction(
        () => (globalThis as unknown as Dom).document.getElementById('player').currentTime > 1,
        null,
        { timeout: 30_000 },
      );
    };
    const linked = await browser.newPage();
    await linked.goto(`${tk.body.watch_url}?token=${code1}`);
    await played(linked);
    const asked = await browser.newPage();
    await asked.goto(tk.body.watch_url);
    await asked.waitForSelector('#token-form', { state: 'visible' });
    expect(await asked.textContent('label[for=token]')).toBe('Access code');
    await asked.fill('#token', code2);
    await asked.click('#token-form button');
    await played(asked);
    // Each token counted one use: playback started once with each.
    const tokens = await t.request('GET', `/v1/live-events/events/${tk.body.id}/tokens`, { key: a.pat });
    expect(tokens.body.tokens.map((x: { use_count: number }) => x.use_count)).toEqual([1, 1]);
    await linked.close();
    await asked.close();
    ffmpeg?.kill('SIGKILL');
    // The grant was counted as a viewer: segments went out with it.
    const stats = await t.request('GET', `/v1/live-events/events/${e.body.id}/stats`, { key: a.pat });
    expect(stats.body.segments_served).toBeGreaterThan(0);

    // Stopped, the recording is finalised on the clock; the page (reloaded: the viewer's grant is
    // kept for the tab) plays the replay.
    const event = `/v1/live-events/events/${e.body.id}`;
    expect((await t.request('POST', `${event}/live/stop`, { key: a.pat })).body.status).toBe('ending');
    let status = 'ending';
    for (let i = 0; i < 40 && status !== 'ended'; i++) {
      await t.advance(3);
      status = (await t.request('GET', event, { key: a.pat })).body.status;
      if (status !== 'ended') await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('ended');
    await page.reload();
    await page.waitForFunction(
      () =>
        (globalThis as unknown as Dom).document.getElementById('state').textContent ===
        'Replay of the event.',
    );
    expect(await page.isVisible('#password-form')).toBe(false);
    await page.waitForFunction(
      () => (globalThis as unknown as Dom).document.getElementById('player').currentTime > 1,
      null,
      { timeout: 30_000 },
    );
    await shot(page, '4-replay');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('refuses to be embedded when embedding is off, and serves the embed page otherwise', async () => {
    const off = await t.request('POST', '/v1/live-events/events', {
      key: a.pat,
      body: { name: 'No embeds', embed_enabled: false },
    });
    const page = await browser.newPage();
    const res = await page.goto(off.body.embed_url);
    expect(res?.status()).toBe(403);
    expect(await page.textContent('[role=status]')).toContain('Embedding is turned off for this event.');
    await shot(page, '5-embed-refused');

    const on = await t.request('POST', '/v1/live-events/events', {
      key: a.pat,
      body: { name: 'Embeds welcome' },
    });
    const ok = await page.goto(on.body.embed_url);
    expect(ok?.status()).toBe(200);
    expect(ok?.headers()['content-security-policy']).toContain('frame-ancestors *');
    await page.waitForFunction(
      () =>
        (globalThis as unknown as Dom).document.getElementById('state').textContent ===
        'The event has not started yet.',
    );
    // The player comes from Fjord, not a CDN.
    const player = await page.request.get(new URL('/live/assets/hls.min.js', on.body.embed_url).href);
    expect(player.status()).toBe(200);
    expect(player.headers()['content-type']).toContain('javascript');
    expect(await page.goto(`${t.kernel.baseUrl()}/live/watch/no-such-event`).then((r) => r?.status())).toBe(
      404,
    );
    await page.close();
  }, 60_000);
});
