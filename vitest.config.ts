import { defineConfig } from 'vitest/config';

// Three tiers, each a vitest project: `vitest run` runs them all; `vitest run --project e2e` one.
// `npm test` (scripts/test.mjs) runs them tier by tier and prints each tier's time, so growth
// shows early.
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

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file builds its own Fjord on its own store, so files run in parallel safely.
    pool: 'forks',
    projects: [
      // Pure functions beside the code, and the kernel on a whole Fjord.
      tier('unit', ['src/**/*.test.ts', 'test/kernel/**/*.test.ts']),
      // Each area through its HTTP API (app.inject), on the store under test.
      tier('integration', ['test/areas/**/*.test.ts'], false),
      // Real servers and real clients (aws, dig, psql, ffmpeg…) over loopback.
      tier('e2e', ['test/e2e/**/*.test.ts']),
    ],
  },
});
