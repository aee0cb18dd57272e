import { describe, expect, it } from 'vitest';
import { dailyPrices } from '../../src/areas/clusters/catalogue.js';
import { nextRun, parseCron } from '../../src/areas/clusters/cron.js';
import { type ClusterDriver, SimulatedClusterDriver } from '../../src/areas/clusters/drivers/driver.js';

/** The pure parts: cron in a time zone across clock changes, the driver's address pool, daily prices. */
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe('backup schedules', () => {
  it('runs at local wall time, an hour late on the day clocks spring forward, once when they fall back', () => {
    const cron = parseCron('30 2 * * *');
    const runs = (from: string, n: number) => {
      const out: (string | null)[] = [];
      let at: number | null = Date.parse(from);
      for (let i = 0; i < n && at !== null; i++) {
        at = nextRun(cron, 'Europe/Oslo', at);
        out.push(iso(at));
      }
      return out;
    };
    // 29 March 2026: 02:00 CET becomes 03:00 CEST, so 02:30 does not exist; it runs at 03:30.
    expect(runs('2026-03-27T12:00:00Z', 3)).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:30:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    // 25 October 2026: 02:30 happens twice; it runs once, at the second (standard-time) one.
    expect(runs('2026-10-24T12:00:00Z', 2)).toEqual(['2026-10-25T01:30:00.000Z', '2026-10-26T01:30:00.000Z']);
  });

  it('reads lists, ranges, steps, names and either-day matching; refuses bad fields', () => {
    const at = (text: string, from: string) => iso(nextRun(parseCron(text), 'UTC', Date.parse(from)));
    // Thursday 26 November 2026.
    expect(at('0 3 * * mon-fri', '2026-11-27T12:00:00Z')).toBe('2026-11-30T03:00:00.000Z');
    expect(at('15 */6 * * *', '2026-11-26T07:00:00Z')).toBe('2026-11-26T12:15:00.000Z');
    expect(at('0 0 1 jan,jul *', '2026-11-26T00:00:00Z')).toBe('2027-01-01T00:00:00.000Z');
    expect(at('0 0 13 * 5', '2026-11-26T00:00:00Z')).toBe('2026-11-27T00:00:00.000Z');
    expect(at('0 0 * * 7', '2026-11-26T00:00:00Z')).toBe('2026-11-29T00:00:00.000Z');
    expect(at('0 0 29 2 *', '2026-11-26T00:00:00Z')).toBe('2028-02-29T00:00:00.000Z');
    expect(nextRun(parseCron('0 0 31 2 *'), 'UTC', Date.parse('2026-11-26T00:00:00Z'))).toBeNull();
    for (const bad of [
      '* * * *',
      '60 * * * *',
      '0 24 * * *',
      '0 0 0 * *',
      '0 0 * 13 *',
      '5-1 * * * *',
      '*/0 * * * *',
      'x * * * *',
    ])
      expect(() => parseCron(bad), bad).toThrow();
  });
});

describe('simulated driver', () => {
  it('hands out the lowest free floating address and answers capacity when none is left', async () => {
    const driver: ClusterDriver = new SimulatedClusterDriver({ floatingRanges: ['198.51.100.0/30'] });
    const inUse = new Set<string>();
    const next = () => driver.allocateAddress({ clusterId: 'c', region: 'no', inUse });
    inUse.add(await next());
    expect([...inUse]).toEqual(['198.51.100.1']);
    inUse.add(await next());
    await expect(next()).rejects.toMatchObject({ code: 'capacity', kind: 'unavailable' });
    inUse.delete('198.51.100.1');
    expect(await next()).toBe('198.51.100.1');
  });

  it('times backups and restores longer with volumes, and counts what they hold', async () => {
    const driver: ClusterDriver = new SimulatedClusterDriver();
    expect(await driver.startBackup({ clusterId: 'c', namespaces: null, includeVolumes: false })).toEqual({
      seconds: 30,
      itemsCount: 48,
    });
    expect(
      await driver.startBackup({ clusterId: 'c', namespaces: ['a', 'b'], includeVolumes: true }),
    ).toEqual({
      seconds: 90,
      itemsCount: 24,
    });
    expect(
      await driver.startRestore({ clusterId: 'c', backup: 'b', namespaces: null, includeVolumes: true }),
    ).toEqual({
      seconds: 120,
    });
  });
});

describe('daily prices', () => {
  it('are the monthly price × 12 / 365 after the region multiplier, rounded half up in minor units', () => {
    // 30 NOK a month: 3000 øre × 12 / 365 = 98.63 → 99 øre; EUR 2.61 → 8.58 → 9 cents.
    expect(dailyPrices('k8s-ip-floating', 1)).toEqual({
      NOK: 0.99,
      SEK: 0.99,
      DKK: 0.64,
      EUR: 0.09,
      USD: 0.09,
    });
    // Denmark (× 1.05): 3150 øre → 103.56 → 104.
    expect(dailyPrices('k8s-ip-floating', 1.05).NOK).toBe(1.04);
  });
});
