import { type ChildProcess, spawn } from 'node:child_process';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.mjs';
import type { RtmpIngest } from '../../src/areas/live/ingest.js';
import { ConsoleBrowser, consoleBrowserFound } from '../helpers/console-browser.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { connectDevice, type DeviceCreds } from '../helpers/iot.js';

// fjord-test: one store (postgres). One pass runs it: Chromium on the console is its subject; the
// API under the pages is tested on both stores in the integration tier.

/**
 * The console's IoT, live events and usage pages in Chromium: a device registered on its page
 * receives telemetry from MQTT.js and the live chart draws it without a reload; an alarm rule made
 * with the condition editor raises an alarm that is acknowledged on its page; the password is
 * rotated on the page and the new one logs in; a `tenant_only` event made on its page plays the
 * ffmpeg test stream in the console's player. Each change is checked through the API; axe-core
 * on each page; any script error, CSP refusal or request to another origin fails the suite.
 */
const found = consoleBrowserFound('console-iot-live');

let t: TestFjord;
let a: TestCustomer;
let b: ConsoleBrowser;
let page: ConsoleBrowser['page'];
let origin: string;
let ffmpeg: ChildProcess | null = null;
const opened: MqttClient[] = [];

beforeAll(async () => {
  if (!found) return;
  await buildConsole();
  t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_MQTT_PORT: '0', FJORD_RTMP_PORT: '0' });
  a = await t.customer();
  await t.fjord.start(['api', 'mqtt', 'rtmp', 'worker']); // the worker sends the SMS the usage page prices
  origin = new URL(t.kernel.baseUrl()).origin;
  b = await ConsoleBrowser.open(() => [origin]);
  page = b.page;
  await b.signIn(origin, a.pat);
}, 120_000);
afterAll(async () => {
  ffmpeg?.kill('SIGKILL');
  await Promise.all(opened.map((c) => c.endAsync(true).catch(() => {})));
  await b?.close();
  await t?.close();
});

const shot = (name: string) => b.shot(name, { fullPage: true });
const accessible = (name: string) => b.accessible(name);
const api = (url: string) => t.request('GET', url, { key: a.pat });
const heading = () => page.getByRole('heading', { level: 1 }).textContent();

const openArea = (name: string) => b.openArea(name);

describe.skipIf(!found)('the console’s IoT, live events and usage pages in Chromium', () => {
  let creds: DeviceCreds;

  it('registers a device on its page and draws telemetry from MQTT.js live, without a reload', async () => {
    await openArea('IoT');
    await page.getByLabel('Name').fill('Boiler room');
    await page.getByLabel('Device id').fill('boiler-1');
    await page.getByRole('button', { name: 'Register device' }).click();
    const password = await page.locator('output[aria-label="MQTT password"]').textContent();
    const d = (await api('/v1/iot/devices/boiler-1')).body;
    expect(d.name).toBe('Boiler room');
    creds = { ...(await shownSettings()), password: password! };
    await accessible('iot devices');
    await page.getByRole('button', { name: 'Done' }).click();

    await page.getByRole('link', { name: 'Boiler room' }).click();
    await expect.poll(heading).toBe('Device: Boiler room');
    await page.getByText('Live: new points appear').waitFor();
    const marker = page.url();
    const client = await connectDevice(creds, opened);
    for (const [i, temp] of [20.5, 21.25, 22.75].entries())
      await client.publishAsync(
        `${creds.topic_root}/telemetry`,
        JSON.stringify({ ts: Date.now() - (2 - i) * 20_000, values: { temp, humidity: 40 + i } }),
        { qos: 1 },
      );
    // The points arrive over the page's event stream: the chart has them, and the latest value shows.
    await page.locator('td[data-key=temp]', { hasText: '22.75' }).waitFor();
    await expect
      .poll(() => page.getByRole('img', { name: /^Live telemetry of boiler-1/ }).getAttribute('data-points'))
      .toBe('3');
    expect(page.url()).toBe(marker); // the same page, never reloaded
    expect((await api('/v1/iot/devices/boiler-1/telemetry/latest')).body.values.temp.value).toBe(22.75);
    await page.getByText('Online', { exact: true }).first().waitFor();
    await shot('iot-device-live');
    await accessible('iot device');
  });

  it('rotates the password on the page: the new one logs in', async () => {
    await page.getByRole('button', { name: 'Rotate password' }).click();
    const fresh = await page.locator('output[aria-label="MQTT password"]').textContent();
    expect(fresh).not.toBe(creds.password);
    await connectDevice({ ...creds, password: fresh! }, opened);
    await page.getByRole('button', { name: 'Done' }).click();
    creds.password = fresh!;
  });

  it('makes an alarm rule in the condition editor; the alarm it raises is acknowledged and resolved on its page', async () => {
    await page
      .getByRole('navigation', { name: 'IoT pages' })
      .getByRole('link', { name: 'Alarm rules' })
      .click();
    await expect.poll(heading).toBe('Alarm rules');
    await page.getByLabel('Name', { exact: true }).fill('Too hot');
    await page.getByLabel('Severity').selectOption('critical');
    await page.getByLabel('Key 1').fill('temp');
    await page.getByLabel('Operator 1').selectOption('>');
    await page.getByLabel('Value 1').fill('30');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByText('The rule Too hot was created.').waitFor();
    const rules = (await api('/v1/iot/rules')).body.rules;
    expect(rules.map((r: { severities: unknown }) => r.severities)).toEqual([
      {
        critical: {
          type: 'simple',
          filters: [{ key: 'temp', source: 'telemetry', operator: '>', value: 30 }],
        },
      },
    ]);
    await page.getByRole('cell', { name: 'critical: temp > 30' }).waitFor();
    await shot('iot-rules');
    await accessible('iot rules');

    const client = opened[opened.length - 1]!;
    await client.publishAsync(`${creds.topic_root}/telemetry`, JSON.stringify({ temp: 35 }), { qos: 1 });
    await expect.poll(async () => (await api('/v1/iot/alarms')).body.alarms.length).toBe(1);
    await page.getByRole('navigation', { name: 'IoT pages' }).getByRole('link', { name: 'Alarms' }).click();
    await page.getByRole('link', { name: 'Too hot' }).click();
    await page.getByRole('button', { name: 'Acknowledge' }).click();
    await page
      .getByRole('list', { name: 'Alarm timeline' })
      .getByText('acknowledged', { exact: true })
      .waitFor();
    const alarm = (await api('/v1/iot/alarms')).body.alarms[0];
    expect(alarm).toMatchObject({ status: 'acknowledged', acknowledged: true });
    await shot('iot-alarm');
    await accessible('iot alarm');
    await page.getByRole('button', { name: 'Resolve' }).click();
    await page.getByRole('button', { name: 'Reopen' }).waitFor();
    expect((await api(`/v1/iot/alarms/${alarm.id}`)).body.status).toBe('resolved');
  });

  it('shows notifications with "Send test", groups, profiles and datapoints, accessible', async () => {
    const nav = page.getByRole('navigation', { name: 'IoT pages' });
    await nav.getByRole('link', { name: 'Notifications' }).click();
    await expect.poll(heading).toBe('Notifications');
    await accessible('iot notifications');
    for (const [link, title] of [
      ['Groups', 'Device groups'],
      ['Profiles', 'Device profiles'],
      ['Datapoints', 'Datapoints'],
    ] as const) {
      await nav.getByRole('link', { name: link }).click();
      await expect.poll(heading).toBe(title);
      await accessible(title);
    }
  });

  it('creates a tenant_only event, shows its stream key once, and plays the ffmpeg stream in the player', async () => {
    await openArea('Live events');
    await page.locator('#createLiveEvent-name').fill('Town hall');
    await page.getByLabel('Who may watch').selectOption('tenant_only');
    await page.locator('#createLiveEvent-auto_start_on_ingest').check();
    await page.getByRole('button', { name: 'Create event' }).click();
    const key = (await page.locator('output[aria-label="Stream key"]').textContent())!;
    const events = (await api('/v1/live-events/events')).body.events;
    expect(events.map((e: { name: string; visibility_mode: string }) => [e.name, e.visibility_mode])).toEqual(
      [['Town hall', 'tenant_only']],
    );
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('link', { name: 'Town hall' }).click();
    await expect.poll(heading).toBe('Live event: Town hall');
    await page.getByText('ffmpeg -re -i input.mp4').waitFor();
    push(key, 60);
    // The watch view answers to the console's session; hls.js plays the stream in the video element.
    await page.waitForFunction(
      () => {
        const v = (
          globalThis as unknown as { document: { querySelector(s: string): { currentTime: number } | null } }
        ).document.querySelector('video.player');
        return !!v && v.currentTime > 1;
      },
      undefined,
      { timeout: 45_000 },
    );
    expect((await api(`/v1/live-events/events/${events[0].id}`)).body.status).toBe('live');
    await page.getByText('Playing live.').waitFor();
    await page.getByRole('cell', { name: 'active' }).first().waitFor();
    await shot('live-event-playing');
    await accessible('live event');
    ffmpeg?.kill('SIGKILL');
    ffmpeg = null;
  }, 90_000);

  it('shows this month’s usage and cost per area and per day, in the account’s currency', async () => {
    const profile = { name: 'n', sender_id: '+4791000041' };
    expect((await t.request('POST', '/v1/sms/sender-profiles', { key: a.pat, body: profile })).status).toBe(
      201,
    );
    const sent = await t.request('POST', '/v1/sms/send', {
      key: a.pat,
      body: { to: ['+4791230000'], message: 'hi' },
    });
    expect(sent.status, sent.text).toBeLessThan(300);
    // Billed once handed to the network (the worker's job).
    await expect
      .poll(async () => (await api('/v1/sms/usage')).body.cost, { timeout: 20_000 })
      .toBeGreaterThan(0);
    const sms = (await api('/v1/sms/usage')).body;
    await openArea('Usage and costs');
    await page.getByRole('row', { name: /IoT/ }).waitFor();
    expect(await page.getByRole('row', { name: /IoT/ }).textContent()).toContain('1 devices');
    await page
      .getByRole('row', { name: new RegExp(`SMS.*${sms.cost.toFixed(2)} ${sms.currency}`) })
      .waitFor();
    await page
      .getByRole('img', {
        name: new RegExp(`^Cost per day this month: SMS \\(${sms.currency}\\) ${sms.cost.toFixed(2)}`),
      })
      .waitFor();
    await shot('usage');
    await accessible('usage');
  });

  it('saw no script error, CSP refusal or request to another origin', () => {
    expect(b.problems).toEqual([]);
  });
});

/** The device's MQTT login as the page shows it beside the password. */
async function shownSettings(): Promise<Omit<DeviceCreds, 'password'>> {
  const value = async (term: string) =>
    (await page
      .locator('dl[aria-label="MQTT settings"] div', {
        has: page.locator('dt', { hasText: new RegExp(`^${term}$`) }),
      })
      .locator('dd')
      .textContent())!;
  return {
    username: await value('username'),
    client_id: await value('client id'),
    port: Number(await value('port')),
    topic_root: await value('topic root'),
  };
}

/** ffmpeg publishing a test picture and tone to the event's stream key. */
function push(key: string, seconds: number) {
  const rtmpPort = (t.fjord.areas.get('live')!.servers![0] as RtmpIngest).port();
  ffmpeg = spawn(
    'ffmpeg',
    [
      ...['-hide_banner', '-loglevel', 'error', '-re'],
      ...['-f', 'lavfi', '-i', `testsrc=size=320x240:rate=25:duration=${seconds}`],
      ...['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p'],
      ...['-c:a', 'aac', '-f', 'flv', `rtmp://127.0.0.1:${rtmpPort}/live/${key}`],
    ],
    { stdio: 'ignore' },
  );
}
