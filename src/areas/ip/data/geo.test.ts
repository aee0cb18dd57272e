import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { GeoData, geoFiles } from './geo.js';

const dir = mkdtempSync(join(tmpdir(), 'fjord-ip-data-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('uses files an operator drops into FJORD_IP_DATA_DIR within a minute, without a restart', async () => {
  let now = 1_000_000;
  const geo = new GeoData(dir, () => now);
  expect(await geo.source()).toBe('DB-IP City Lite (CC BY 4.0)');
  expect((await geo.lookup('193.212.1.10', 4))?.country).toBe('NO');

  // A MaxMind-named file appears (here the shipped IPv4 data under that name).
  symlinkSync(geoFiles(null).v4, join(dir, 'GeoLite2-City.mmdb'));
  now += 30_000;
  expect(await geo.source()).toBe('DB-IP City Lite (CC BY 4.0)'); // checked at most once a minute
  now += 31_000;
  expect(await geo.source()).toBe('GeoLite2-City.mmdb');
  expect((await geo.lookup('193.212.1.10', 4))?.country).toBe('NO');
});
