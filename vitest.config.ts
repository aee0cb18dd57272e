import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { isolatedTestFiles } from './scripts/lib/needs-isolation.mjs';
import { filesOutsidePass } from './scripts/lib/store-bound.mjs';
import { LongestFirst } from './test/setup/longest-first.js';

// Four tiers, each a vitest project: `vitest run` runs them all; `vitest run --project 'e2e*'` one.
// `npm test` (scripts/test.mjs) runs them tier by tier, the SQLite and PostgreSQL passes of a tier
// side by side, and prints each tier's time, so growth shows early. A new tier is one more
// `tier(…)` line here and its name in scripts/test.mjs's TIERS.
//
// A worker process imports Fjord once and runs file after file in that module registry
// (`isolate: false`) instead of importing every module again per file: that import costs about 4 s
// of CPU per file, more than many files' tests, and on CI's two cores it was a fifth of the suite.
// Each file still builds its own Fjord on its own store, so a cache in module scope under src/ must
// never hold one Fjord's state. The files that would leak into the next one (a mocked module, fake
// timers, a changed environment: scripts/lib/needs-isolation.mjs finds them) run in the tier's
// second project, `<tier>-isolated`, a fresh worker per file.
//
// vitest 3 decides isolation per pool from the root configuration, not per project: a project's
// `isolate` alone changes nothing. So the shared projects run in the `forks` pool, made
// non-isolating below, and the isolated ones in the `threads` pool, which isolates.
const root = dirname(fileURLToPath(import.meta.url));
const isolated = isolatedTestFiles(root);
// When `npm test` runs both passes, each leaves out what the other runs (scripts/lib/store-bound.mjs):
// the PostgreSQL pass the files that read no store, which would give the same answer, and each the
// files that ask for the other pass.
const store = process.env['FJORD_TEST_STORE'] === 'postgres' ? 'postgres' : 'sqlite';
const otherPass = process.env['FJORD_TEST_BOTH_PASSES'] === '1' ? filesOutsidePass(root, store) : [];

const tier = (name: string, dirs: string[]) => {
  const inTier = isolated.filter((f) => dirs.some((d) => f.startsWith(`${d}/`)));
  return [
    {
      extends: true as const,
      test: {
        name,
        include: dirs.map((d) => `${d}/**/*.test.ts`),
        exclude: [...configDefaults.exclude, ...otherPass, ...inTier],
        pool: 'forks' as const,
        isolate: false,
      },
    },
    {
      extends: true as const,
      // A project with no files is skipped by `--passWithNoTests`; vitest needs a pattern, so an
      // empty tier gets one that matches nothing.
      test: {
        name: `${name}-isolated`,
        include: inTier.length ? inTier : ['.none'],
        exclude: [...configDefaults.exclude, ...otherPass],
        pool: 'threads' as const,
        isolate: true,
      },
    },
  ];
};

// Workers per run. vitest's default is the core count minus one: on CI's 2 cores, one file at a
// time. Most of a file's time is waiting (on child processes, sockets, PostgreSQL, the clock), so
// a few files side by side fill the cores. Every file is safe beside any other: ephemeral ports,
// its own temp dirs and store, and shared machine resources (VPS slots, the debootstrap template,
// podman installs) named or locked per owner. FJORD_TEST_WORKERS overrides it (test.mjs sets it
// per tier).
const workers = Number(process.env['FJORD_TEST_WORKERS']) || 3;

export default defineConfig({
  test: {
    // Files run side by side (and both stores at once): on 2 cores a test may take twice its time
    // alone, so the timeouts leave room for that. They catch hangs; no test asserts a duration.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The same for `expect.poll`: its own default gives up after 1 s, which a loaded machine's
    // LISTEN/NOTIFY round trip or a browser's next paint can take. (`vi.waitFor` has no such
    // setting: each call passes its timeout.)
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    isolate: false,
    poolOptions: { forks: { isolate: false }, threads: { isolate: true } },
    // As many workers kept as run: tinypool ends a worker idle past its timeout while the pool
    // holds more than minWorkers, and the teardown it sends that worker can outlive the worker,
    // failing the run with "Terminating worker thread" after every test passed.
    maxWorkers: workers,
    minWorkers: workers,
    // `toEqual` on a large byte array is refused: it walks every byte (test/setup/large-binaries.ts);
    // a worker whose runner is gone ends (test/setup/exit-with-runner.ts); a file leaves the umask
    // as it found it (test/setup/restore-umask.ts); scratch directories made outside a test go as
    // their file ends (test/setup/scratch-dirs.ts).
    setupFiles: [
      'test/setup/large-binaries.ts',
      'test/setup/exit-with-runner.ts',
      'test/setup/restore-umask.ts',
      'test/setup/scratch-dirs.ts',
    ],
    // Longest files first (test/file-durations.json), so no tier ends waiting on one long file.
    sequence: { sequencer: LongestFirst },
    projects: [
      // Pure functions beside the code, and the kernel on a whole Fjord.
      ...tier('unit', ['src', 'test/kernel']),
      // Each area through its HTTP API (app.inject), on the store under test.
      ...tier('integration', ['test/areas']),
      // Real servers and real clients (aws, dig, psql, ffmpeg…) over loopback.
      ...tier('e2e', ['test/e2e']),
      // Fjord as users run it: bin/fjord.js on the bundle and its code cache (test/shipped/).
      ...tier('shipped', ['test/shipped']),
    ],
  },
});
