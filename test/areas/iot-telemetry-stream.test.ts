import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { connectDevice, registerDevice } from '../helpers/iot.js';

/**
 * `GET /v1/iot/devices/{id}/telemetry/stream` over real HTTP: 404 as JSON before any stream, then
 * the device's own points (not another device's, not another customer's) as `telemetry` events
 * as MQTT.js publishes them, its connection as `state`, and `end` when the device is deleted.
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
const clients: MqttClient[] = [];
beforeAll(async () => {
  t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_MQTT_PORT: '0' });
  await t.fjord.start(['api', 'mqtt']);
  a = await t.customer();
  b = await t.customer();
});
afterAll(async () => {
  for (const c of clients) c.end(true);
  await t.close();
});

/** Reads SSE events from a fetch answer into `events` until the stream ends. */
async function collect(res: Response, events: { event: string; data: unknown }[]) {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const blocks = buffer.split('\n\n');
    buffer = blocks.pop() ?? '';
    for (const b of blocks) {
      const event = /^event: (.*)$/m.exec(b)?.[1];
      const data = /^data: (.*)$/m.exec(b)?.[1];
      if (event && data) events.push({ event, data: JSON.parse(data) });
    }
  }
}

describe('the telemetry stream', () => {
  it('answers 404 as JSON for a device that is not the caller’s', async () => {
    await registerDevice(t, b.pat, 'theirs');
    const res = await fetch(`${t.kernel.baseUrl()}/v1/iot/devices/theirs/telemetry/stream`, {
      headers: { 'x-api-key': a.pat },
    });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/json');
  });

  it('pushes the device’s points and state as they come, and ends when the device is deleted', async () => {
    const mine = await registerDevice(t, a.pat, 'streamed');
    const other = await registerDevice(t, a.pat, 'other');
    const theirs = await registerDevice(t, b.pat, 'theirs-2');
    // Aborted when the test ends, so a failure never leaves the stream holding the server open.
    const abort = new AbortController();
    onTestFinished(() => abort.abort());
    const res = await fetch(`${t.kernel.baseUrl()}/v1/iot/devices/streamed/telemetry/stream`, {
      headers: { 'x-api-key': a.pat },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events: { event: string; data: unknown }[] = [];
    const done = collect(res, events);
    // Another device of the same customer, and another customer's, send at the same time.
    for (const creds of [other, theirs]) {
      const c = await connectDevice(creds, clients);
      await c.publishAsync(`${creds.topic_root}/telemetry`, '{"temp": 99}', { qos: 1 });
    }
    const device = await connectDevice(mine, clients);
    await device.publishAsync(
      `${mine.topic_root}/telemetry`,
      JSON.stringify({ ts: 1_000, values: { temp: 21.5, ok: true } }),
      { qos: 1 },
    );
    // The connection's state and the points come from different paths (the session's bookkeeping,
    // the stored message): each arrives in its own order, not necessarily one before the other.
    await expect.poll(() => events.length).toBe(3);
    expect(events.filter((e) => e.event === 'state')).toEqual([
      { event: 'state', data: { is_online: true, at: expect.any(Number) } },
    ]);
    expect(events.filter((e) => e.event === 'telemetry')).toEqual([
      { event: 'telemetry', data: { key: 'temp', value: 21.5, ts: 1_000 } },
      { event: 'telemetry', data: { key: 'ok', value: true, ts: 1_000 } },
    ]);
    expect((await t.request('DELETE', '/v1/iot/devices/streamed', { key: a.pat })).status).toBe(204);
    await done; // the server ends the stream
    expect(events.at(-1)).toEqual({ event: 'end', data: { reason: 'deleted' } });
  });
});
