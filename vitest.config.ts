import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { storeFreeTestFiles } from './scripts/lib/store-bound.mjs';

// Three tiers, each a vitest project: `vitest run` runs them all; `vitest run --project e2e` one.
// `npm test` (scripts/test.mjs) runs them tier by tier, the SQLite and PostgreSQL passes of a tier
// side by side, and prints each tier's time, so growth shows early. A new tier is one more
// `tier(…)` line here and its name in scripts/test.mjs's TIERS.
//
// `isolate: false` for the integration tier: a worker imports Fjord once and runs file after file
// in it, instead of importing every module again per file (that import was 127 of the tier's
// 351 s). Each file still builds its own Fjord on its own store, so a cache in module scope under
// src/ must never hold one Fjord's state. The unit and e2e tiers stay isolated: their files mock
// modules, start processes and change the environment.
const tier = (name: string, include: string[], isolate = true) => ({
  extends: true as const,
  test: { name, include, isolate },
});

// Workers per run. vitest's default is the core count minus one: on CI's 2 cores, one file at a
// time. Most of a file's time is waiting (on child processes, sockets, PostgreSQL, the clock), so
// a few files side by side fill the cores. Every file is safe beside any other: ephemeral ports,
// its own temp dirs and store, and shared machine resources (VPS slots, the debootstrap template,
// podman installs) named or locked per owner. FJORD_TEST_WORKERS overrides it (test.mjs sets it
// per tier).
const workers = Number(process.env['FJORD_TEST_WORKERS']) || 3;

// The PostgreSQL pass of `npm test` skips the files that read no store (scripts/lib/store-bound.mjs):
// the SQLite pass already ran them, and they would give the same answer.
const storeFree =
  process.env['FJORD_TEST_STORE'] === 'postgres' && process.env['FJORD_TEST_SKIP_STORE_FREE'] === '1'
    ? storeFreeTestFiles(dirname(fileURLToPath(import.meta.url)))
    : [];

export default defineConfig({
  test: {
    // Files run side by side (and both stores at once): on 2 cores a test may take twice its time
    // alone, so the timeouts leave room for that. They catch hangs; no test asserts a duration.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: workers,
    minWorkers: 1,
    exclude: [...configDefaults.exclude, ...storeFree],
    // `toEqual` on a large byte array is refused: it walks every byte (test/setup/large-binaries.ts).
    setupFiles: ['test/setup/large-binaries.ts'],
    projects: [
      // Pure functions beside the code, and the kernel on a whole Fjord.
      tier('unit', ['src/**/*.test.ts', 'test/kernel/**/*.test.ts']),
      // Each area through its HTTP API (app.inject), on the store under test.
      tier('integration', ['test/areas/**/*.test.ts'], false),
      // Real servers and real clients (aws, dig, psql, ffmpeg…) over loopback.
      tier('e2e', ['test/e2e/**/*.test.ts']),
      // Fjord as users run it: bin/fjord.js on the bundle and its code cache (test/shipped/).
      tier('shipped', ['test/shipped/**/*.test.ts']),
    ],
  },
});
