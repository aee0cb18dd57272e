import { describe, expect, it } from 'vitest';
import { useBroker } from '../helpers/mqtt-fixture.js';

/**
 * The group commit's telemetry writes (telemetry-writes.ts): many messages from several devices
 * share transactions, with row counts that are no multiple of the statement sizes, and still
 * every point is stored once, a PUBACK means the message is readable, the hourly counters add up,
 * and each device's battery and signal are the newest values it sent.
 */
const broker = useBroker();

describe('telemetry written in shared transactions', () => {
  it('stores every point of concurrent messages once, acknowledged only when readable', async () => {
    const devices = await Promise.all(
      ['batch-a', 'batch-b', 'batch-c'].map(async (id) => {
        const creds = await broker.device(id);
        return { id, creds, client: await broker.connect(creds) };
      }),
    );
    const perDevice = 150;
    const start = Date.now() - 60_000;
    await Promise.all(
      devices.map(async (d, di) => {
        const sends: Promise<unknown>[] = [];
        for (let i = 0; i < perDevice; i++) {
          // Message i carries i % 7 + 1 points (no multiple of any statement size), its own ts.
          const values: Record<string, number | string | boolean> = { seq: i };
          for (let k = 1; k < (i % 7) + 1; k++) values[`k${k}`] = k % 2 ? `s${i}` : i % 2 === 0;
          values['battery'] = 100 - i / 10 - di;
          values['rssi'] = -40 - i;
          const payload = JSON.stringify({ ts: start + i, values });
          sends.push(d.client.publishAsync(`${d.creds.topic_root}/telemetry`, payload, { qos: 1 }));
        }
        // One message acknowledged: readable through the API at once, without waiting.
        await sends[0];
        const first = await broker.t.request('GET', `/v1/iot/devices/${d.id}/telemetry?keys=seq&limit=1000`, {
          key: broker.a.pat,
        });
        expect(first.status).toBe(200);
        expect(JSON.stringify(first.body)).toContain('"value":0');
        await Promise.all(sends);
      }),
    );
    for (const [di, d] of devices.entries()) {
      const seq = await broker.t.request('GET', `/v1/iot/devices/${d.id}/telemetry?keys=seq&limit=1000`, {
        key: broker.a.pat,
      });
      expect(seq.status).toBe(200);
      const values = pointsOf(seq.body).map((p) => p.value);
      expect(values.sort((x, y) => Number(x) - Number(y))).toEqual(
        Array.from({ length: perDevice }, (_, i) => i),
      );
      const device = await broker.t.request('GET', `/v1/iot/devices/${d.id}`, { key: broker.a.pat });
      expect(device.body.battery_level).toBe(Math.round(100 - (perDevice - 1) / 10 - di));
      expect(device.body.signal_strength).toBe(-40 - (perDevice - 1));
      expect(device.body.messages_24h).toBe(perDevice);
    }
    const stats = await broker.t.request('GET', '/v1/iot/stats', { key: broker.a.pat });
    // Points per message: seq, battery, rssi, and i % 7 more.
    let points = 0;
    for (let i = 0; i < perDevice; i++) points += 3 + (i % 7);
    expect(stats.body.last_24h.points).toBe(points * devices.length);
  });
});

/** The raw points of a telemetry answer, whichever key they are grouped under. */
function pointsOf(body: unknown): { value: unknown }[] {
  const out: { value: unknown }[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === 'object') {
      if ('value' in v && 'ts' in v) out.push(v as { value: unknown });
      else for (const x of Object.values(v)) walk(x);
    }
  };
  walk(body);
  return out;
}
