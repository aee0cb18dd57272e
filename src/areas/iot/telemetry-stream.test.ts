import { describe, expect, it } from 'vitest';
import { type IotEvent, TelemetryStream } from './telemetry-stream.js';

const point: IotEvent = { kind: 'telemetry', customer_id: 'c', device_id: 'd', key: 'temp', value: 1, ts: 5 };
const message: IotEvent = { kind: 'message', customer_id: 'c', device_id: 'd', values: { temp: 1 }, at: 5 };

describe('the telemetry stream', () => {
  it('gives one event per point only to the listeners that ask for them', () => {
    const stream = new TelemetryStream();
    const all: string[] = [];
    const live: string[] = [];
    expect(stream.wantsMessagesOf('c')).toBe(false);
    const stopAll = stream.subscribe((e) => all.push(e.kind));
    expect([stream.wantsMessagesOf('c'), stream.wantsPoints]).toEqual([true, false]);
    const stopLive = stream.subscribe((e) => live.push(e.kind), { points: true });
    expect(stream.wantsPoints).toBe(true);
    stream.emit(point);
    stream.emit(message);
    expect(all).toEqual(['message']);
    expect(live).toEqual(['telemetry', 'message']);
    stopLive();
    expect(stream.wantsPoints).toBe(false);
    stopAll();
    expect(stream.wantsMessagesOf('c')).toBe(false);
  });

  it('asks each listener whether it wants a customer’s messages before one is built', () => {
    const stream = new TelemetryStream();
    const asked: string[] = [];
    stream.subscribe(() => {}, {
      wantsMessagesOf: (customer) => {
        asked.push(customer);
        return customer === 'with-rules';
      },
    });
    expect(stream.wantsMessagesOf('with-rules')).toBe(true);
    expect(stream.wantsMessagesOf('without')).toBe(false);
    stream.subscribe(() => {}, { points: true });
    // A listener that names no customers wants every customer's messages.
    expect(stream.wantsMessagesOf('without')).toBe(true);
    expect(asked).toEqual(['with-rules', 'without', 'without']);
  });

  it('keeps a listener that throws from the others', () => {
    const errors: unknown[] = [];
    const stream = new TelemetryStream((err) => errors.push(err));
    const seen: string[] = [];
    stream.subscribe(() => {
      throw new Error('boom');
    });
    stream.subscribe((e) => seen.push(e.kind));
    stream.emit(message);
    expect(seen).toEqual(['message']);
    expect(errors).toHaveLength(1);
  });
});
