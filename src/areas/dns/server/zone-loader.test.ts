import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exampleZone, MemoryZoneSource } from '../../../../test/e2e/dns-fixtures.js';
import { DnsEngine } from './engine.js';
import { ZoneLoader } from './zone-loader.js';
import type { Zone } from './zone-view.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('ZoneLoader', () => {
  it('keeps trying when the store is away at start', async () => {
    vi.useFakeTimers();
    const source = new MemoryZoneSource();
    source.put(exampleZone());
    const loadAll = source.loadAll.bind(source);
    let failures = 2;
    source.loadAll = async () => {
      if (failures-- > 0) throw new Error('store unavailable');
      return loadAll();
    };
    const engine = new DnsEngine();
    const loader = new ZoneLoader(source, engine, pino({ level: 'silent' }), Date.now, () => {});
    await loader.start();
    expect(engine.zones.size).toBe(0);
    await vi.advanceTimersByTimeAsync(5000);
    expect(engine.zones.size).toBe(0);
    await vi.advanceTimersByTimeAsync(5000);
    await loader.settled();
    expect([...engine.zones.keys()]).toEqual(['example.test']);
    loader.stop();
  });

  it('notifies on a new serial or a new zone, not at the first load, and drops removed zones', async () => {
    const source = new MemoryZoneSource();
    source.put(exampleZone());
    const engine = new DnsEngine();
    const notified: string[] = [];
    const loader = new ZoneLoader(source, engine, pino({ level: 'silent' }), Date.now, (z: Zone) =>
      notified.push(`${z.snapshot.apex}/${z.snapshot.soa.serial}`),
    );
    await loader.start();
    expect(notified).toEqual([]);
    const changed = exampleZone();
    changed.soa.serial++;
    source.put(changed);
    source.put(exampleZone('other.test'));
    await loader.settled();
    expect(notified).toEqual(['example.test/2026112202', 'other.test/2026112201']);
    source.put({ ...exampleZone('other.test'), status: 'disabled' });
    await loader.settled();
    expect([...engine.zones.keys()]).toEqual(['example.test']);
    source.remove('example.test');
    await loader.enqueue('*');
    expect(engine.zones.size).toBe(0);
    loader.stop();
  });
});
