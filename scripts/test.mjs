#!/usr/bin/env node
// The whole test command (`npm test`): dependencies, static checks, then the vitest suite against
// each store (SQLite, and a throwaway PostgreSQL), tier by tier, the two stores' runs of a tier side
// by side. Files that read no store run in the SQLite pass only (scripts/lib/store-bound.mjs).
//
//   node scripts/test.mjs [--only sqlite|postgres] [--skip-static] [vitest args...]
//
// Plain ESM, node builtins only: this runs before `npm ci` may have happened.

import { spawn } from 'node:child_process';
import { existsSync, lstatSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DEBIAN_PACKAGES } from './lib/debian-packages.mjs';
import {
  aptInstall,
  commandExists,
  ensurePostgresInstalled,
  isRoot,
  startThrowawayPostgres,
} from './lib/throwaway-postgres.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
process.chdir(root);

// ---------------------------------------------------------------------------------------------
// Arguments

const STORES = ['sqlite', 'postgres'];

function usage(message) {
  console.error(`test.mjs: ${message}`);
  console.error('usage: node scripts/test.mjs [--only sqlite|postgres] [--skip-static] [vitest args...]');
  process.exit(2);
}

let only = null;
let skipStatic = false;
const vitestArgs = [];
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg === '--only' ? argv[++i] : arg.slice('--only='.length);
      if (!value || !STORES.includes(value)) usage(`--only takes one of: ${STORES.join(', ')}`);
      only = value;
    } else if (arg === '--skip-static') {
      skipStatic = true;
    } else {
      vitestArgs.push(arg);
    }
  }
}
const stores = only ? [only] : STORES;

// ---------------------------------------------------------------------------------------------
// Helpers

const useColor = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code, text) => (useColor ? `\x1b[${code}m${text}\x1b[0m` : text);
const bold = (t) => paint('1', t);
const green = (t) => paint('32', t);
const red = (t) => paint('31', t);
const dim = (t) => paint('2', t);

const log = (msg) => console.log(dim(`  · ${msg}`));
const seconds = (ms) => `${(ms / 1000).toFixed(1)}s`;

class StepFailure extends Error {}

let interrupted = null;
/** Children running now (the two stores' vitest runs of a tier run at once). */
const children = new Set();

for (const [sig, num] of [
  ['SIGINT', 2],
  ['SIGTERM', 15],
  ['SIGHUP', 1],
]) {
  process.on(sig, () => {
    // Ctrl-C already reached the children (same process group); SIGTERM/SIGHUP may not have.
    // Let the running child end, so the steps unwind and the finally blocks clean up.
    if (interrupted) return;
    interrupted = { sig, code: 128 + num };
    console.error(red(`\n${sig} received, stopping`));
    for (const child of children) if (child.exitCode === null) child.kill(sig);
  });
}

/**
 * Run a command; resolves to its exit code. With `prefix`, its output is read line by line and
 * each line printed after the prefix, so two runs side by side stay readable; else stdio is inherited.
 */
function run(cmd, args, { env, prefix } = {}) {
  return new Promise((resolve) => {
    console.log(dim(`  ${prefix ?? ''}$ ${[cmd, ...args].join(' ')}`));
    const child = spawn(cmd, args, {
      stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env: env ?? process.env,
    });
    children.add(child);
    if (prefix) {
      for (const [stream, out] of [
        [child.stdout, process.stdout],
        [child.stderr, process.stderr],
      ])
        createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
          out.write(`${prefix}${line}\n`);
          noteFailure(prefix, line);
        });
    }
    child.on('error', (err) => {
      console.error(red(`  could not run ${cmd}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

// What failed, as vitest named it, kept to be printed again at the very end: a CI log may show only
// its tail, and the tail must say which test failed and with what error.
const failures = [];
const MAX_FAILURE_LINES = 60;
let errorLinesToKeep = 0;
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

function noteFailure(prefix, line) {
  const plain = line.replace(ANSI, '').trimEnd();
  let keep = false;
  if (/^\s*(FAIL|×)\s/.test(plain) || /Unhandled (Rejection|Error)|Terminating worker/.test(plain)) {
    keep = true;
    errorLinesToKeep = 4; // the error's first lines follow the test's name
  } else if (errorLinesToKeep > 0 && /^\s*(\w*Error|Caused by)\b|^\s*(Expected|Received|[-+] )/.test(plain)) {
    keep = true;
    errorLinesToKeep--;
  }
  if (keep && failures.length < MAX_FAILURE_LINES)
    failures.push(`${prefix.replace(ANSI, '')}${plain.slice(0, 300)}`);
}

/** Command + args for a binary from node_modules/.bin, falling back to npx. */
function bin(name, args) {
  const local = join(root, 'node_modules', '.bin', name);
  return existsSync(local) ? [local, args] : ['npx', ['--no-install', name, ...args]];
}

async function mustRun(what, cmd, args, options) {
  const code = await run(cmd, args, options);
  if (interrupted) throw new StepFailure(`interrupted by ${interrupted.sig}`);
  if (code !== 0) throw new StepFailure(`${what} exited with code ${code}`);
}

let stepNo = 0;
async function step(title, fn) {
  stepNo++;
  console.log(`\n${bold(`▶ ${stepNo}. ${title}`)}`);
  const t0 = performance.now();
  try {
    const note = await fn();
    console.log(
      green(`✔ ${title}`) + dim(` (${seconds(performance.now() - t0)})${note ? ` — ${note}` : ''}`),
    );
  } catch (err) {
    console.log(red(`✘ ${title}`) + dim(` (${seconds(performance.now() - t0)})`));
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Steps

async function npmDependencies() {
  const lock = join(root, 'package-lock.json');
  const installed = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(lock)) return 'no package-lock.json, skipped';
  // A worktree sharing another checkout's node_modules through a link must never run `npm ci`:
  // it would empty the shared folder under every other worktree's running tests.
  if (existsSync(join(root, 'node_modules')) && lstatSync(join(root, 'node_modules')).isSymbolicLink())
    return 'node_modules is a link to another checkout: left alone';
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(lock).mtimeMs) return 'up to date';
  await mustRun('npm ci', 'npm', ['ci']);
  return 'installed with npm ci';
}

function probe(pkg) {
  return typeof pkg.probe === 'function' ? pkg.probe() : commandExists(pkg.probe);
}

async function debianPackages() {
  // PostgreSQL is needed on every run: the databases area's tests run real PostgreSQL servers
  // for customer databases whichever store the control plane uses.
  const needed = DEBIAN_PACKAGES;
  let missing = needed.filter((p) => !probe(p)).map((p) => p.name);
  if (missing.length > 0) {
    if (!isRoot()) {
      throw new StepFailure(
        `missing Debian packages (not root, cannot install): ${missing.join(' ')}\n` +
          `  install them with: sudo apt-get install -y --no-install-recommends ${missing.join(' ')}`,
      );
    }
    log(`installing: ${missing.join(' ')}`);
    await aptInstall(missing, { log });
  }
  if (stores.includes('postgres') && !(await ensurePostgresInstalled({ log }))) {
    throw new StepFailure('PostgreSQL server binaries are missing and could not be installed');
  }
  missing = needed.filter((p) => !probe(p)).map((p) => p.name);
  if (missing.length > 0) throw new StepFailure(`Debian packages still missing: ${missing.join(' ')}`);
  return `present: ${needed.map((p) => p.name).join(' ')}`;
}

function vitestEnv(store, databaseUrl, tier) {
  const env = { ...process.env, FJORD_TEST_STORE: store };
  delete env.FJORD_TEST_DATABASE_URL;
  if (databaseUrl) env.FJORD_TEST_DATABASE_URL = databaseUrl;
  // With both stores, each pass leaves out what the other runs (vitest.config.ts).
  if (stores.length > 1) env.FJORD_TEST_BOTH_PASSES = '1';
  else delete env.FJORD_TEST_BOTH_PASSES;
  if (!process.env.FJORD_TEST_WORKERS) env.FJORD_TEST_WORKERS = String(workersFor(tier));
  // Piped output loses vitest's colours unless asked for.
  if (useColor) env.FORCE_COLOR = '1';
  return env;
}

// The vitest projects of vitest.config.ts, run one after the other so each tier's time shows.
// The shipped tier starts bin/fjord.js on its embedded store whichever store is under test, so it
// runs once, on the first store.
const ONCE_TIERS = ['shipped'];
const TIERS = ['unit', 'integration', 'e2e', ...ONCE_TIERS];
// A tier run beside another instead of after it: the shipped tier (one file, bin/fjord.js
// started and driven by real clients) fills some of the e2e tier's idle time (about a fifth of
// the cores there) instead of adding its own ~20 s to the run.
const BESIDE = { shipped: 'e2e' };
// Workers per store's run of a tier (vitest.config.ts explains why more than the cores). With both
// stores, two runs share the machine, so each gets one fewer. The e2e tier's files drive real
// programs (ffmpeg in real time, Chromium, podman, qemu-less servers) that need the CPU they
// wait on: fewer of them side by side.
const WORKERS = { unit: 3, integration: 3, e2e: 2 };
// The tiers keep both cores busy already (vmstat: under 2 % idle in the unit and integration
// tiers, about 20 % in e2e): one more e2e worker per store first made the image build take twice
// as long and the tier longer; with the build's podman layers gone, it filled the idle time
// (0 % idle) and the tier took the same (479 s against 481 s), each file twice as long.
const workersFor = (tier) => {
  const n = WORKERS[tier] ?? 2;
  return stores.length > 1 ? Math.max(1, n - 1) : n;
};
/** Seconds each tier took, per store and in all (`store: null`), for the summary. */
const tierTimes = [];

/** One tier on every store at once, with the tiers that run beside it; fails after all end if any failed. */
async function vitestTier(tier, databaseUrls) {
  const t0 = performance.now();
  const tag = { sqlite: '[sqlite] ', postgres: '[pg]     ' };
  const failed = [];
  const runs = [tier, ...TIERS.filter((t) => BESIDE[t] === tier)].flatMap((name) =>
    (ONCE_TIERS.includes(name) ? stores.slice(0, 1) : stores).map((store) => ({ name, store })),
  );
  await Promise.all(
    runs.map(async ({ name, store }) => {
      const started = performance.now();
      // --passWithNoTests: a file filter on the command line may match nothing in some tier.
      // A tier is two projects: its files sharing a module registry, and those that need their own.
      const projects = ['--project', name, '--project', `${name}-isolated`];
      const [cmd, args] = bin('vitest', ['run', ...projects, '--passWithNoTests', ...vitestArgs]);
      const code = await run(cmd, args, {
        env: vitestEnv(store, databaseUrls[store], name),
        prefix: runs.length > 1 ? dim(name === tier ? tag[store] : `[${name}] `.padEnd(9)) : undefined,
      });
      const ms = performance.now() - started;
      tierTimes.push({ store, tier: name, ms });
      console.log(
        dim(`  · ${name} tier on ${store}: ${seconds(ms)}${code === 0 ? '' : ` — exited with ${code}`}`),
      );
      if (code !== 0) {
        failed.push(`${store} (${name})`);
        results[store] = 'failed';
      }
    }),
  );
  tierTimes.push({ store: null, tier, ms: performance.now() - t0 });
  if (interrupted) throw new StepFailure(`interrupted by ${interrupted.sig}`);
  if (failed.length > 0) throw new StepFailure(`vitest ${tier} failed on ${failed.join(' and ')}`);
}

async function tests() {
  const databaseUrls = {};
  let pg = null;
  try {
    if (stores.includes('postgres')) {
      const t0 = performance.now();
      pg = await startThrowawayPostgres({ log });
      databaseUrls.postgres = pg.url;
      log(`throwaway PostgreSQL started in ${seconds(performance.now() - t0)}`);
    }
    for (const tier of TIERS.filter((t) => !BESIDE[t])) {
      const beside = TIERS.filter((t) => BESIDE[t] === tier);
      const title = `${[tier, ...beside].join(' and ')} tier${beside.length ? 's' : ''} — ${stores.join(' + ')}`;
      await step(title, () => vitestTier(tier, databaseUrls));
    }
    for (const store of stores) results[store] = 'passed';
  } finally {
    await pg?.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Main

const results = Object.fromEntries(STORES.map((s) => [s, stores.includes(s) ? 'not run' : 'skipped']));

function summary(ok, totalMs) {
  const show = (s) => {
    const r = results[s];
    return `${s} ${r === 'passed' ? green(r) : r === 'failed' ? red(r) : dim(r)}`;
  };
  if (tierTimes.length > 0) {
    console.log(
      `\n${bold('Time per tier')} ${dim('(the stores of a tier run side by side; "tier" is its wall time)')}`,
    );
    const cell = (tier, store) => {
      const t = tierTimes.find((x) => x.tier === tier && x.store === store);
      return (t ? seconds(t.ms) : '-').padStart(10);
    };
    console.log(
      dim(`  ${'tier'.padEnd(12)}${stores.map((s) => s.padStart(10)).join('')}${'tier'.padStart(10)}`),
    );
    const tiers = TIERS.filter((t) => tierTimes.some((x) => x.tier === t));
    for (const tier of tiers) {
      const wall = BESIDE[tier] ? `  (in ${BESIDE[tier]})` : cell(tier, null);
      console.log(`  ${tier.padEnd(12)}${stores.map((s) => cell(tier, s)).join('')}${wall}`);
    }
    const sum = tierTimes.filter((t) => t.store === null).reduce((a, t) => a + t.ms, 0);
    console.log(`  ${'all tiers'.padEnd(12)}${''.padStart(10 * stores.length)}${seconds(sum).padStart(10)}`);
  }
  // CI gives the whole run 90 minutes on 2 cores; the suite's own budget is a sixth of that, so
  // the tiers still to come fit.
  const budgetMs = 15 * 60_000;
  if (totalMs > budgetMs) console.log(red(`  over the 15-minute budget by ${seconds(totalMs - budgetMs)}`));
  if (failures.length > 0) {
    console.log(`\n${bold('What failed')} ${dim('(as vitest reported it; the whole report is above)')}`);
    for (const line of failures) console.log(`  ${line}`);
  }
  const verdict = ok ? green(bold('PASS')) : red(bold('FAIL'));
  console.log(`\n${verdict}  ${STORES.map(show).join(', ')}  ${dim(`(${seconds(totalMs)})`)}`);
}

async function main() {
  const t0 = performance.now();
  let ok = false;
  try {
    await step('npm dependencies', npmDependencies);
    await step('Debian packages', debianPackages);
    if (skipStatic) {
      console.log(dim('\n(static checks skipped: --skip-static)'));
    } else {
      // The three checks at once: each is one thread, and CI has two cores.
      await step('static checks — tsc, tsc -p console, biome', async () => {
        const checks = [
          ['tsc', ['--noEmit', '-p', '.'], '[tsc]     '],
          // The console has its own compiler settings (the DOM, JSX): a contract change in sdk/ fails here.
          ['tsc', ['--noEmit', '-p', 'console'], '[console] '],
          ['biome', ['check', '.'], '[biome]   '],
        ];
        const codes = await Promise.all(
          checks.map(([name, args, prefix]) => run(...bin(name, args), { prefix: dim(prefix) })),
        );
        if (interrupted) throw new StepFailure(`interrupted by ${interrupted.sig}`);
        const failed = checks
          .filter((_, i) => codes[i] !== 0)
          .map(([name, args]) => [name, ...args].join(' '));
        if (failed.length > 0) throw new StepFailure(`failed: ${failed.join('; ')}`);
      });
    }
    await tests();
    ok = true;
  } catch (err) {
    if (err instanceof StepFailure) console.error(red(`\n${err.message}`));
    else console.error(err);
  }
  summary(ok, performance.now() - t0);
  if (interrupted) return interrupted.code;
  return ok ? 0 : 1;
}

process.exit(await main());
