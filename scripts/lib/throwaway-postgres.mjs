// Throwaway PostgreSQL servers for tests: a fresh cluster in a temp dir on a free loopback port,
// removed again by stop() (or, as a last resort, when the process exits).
//
// PostgreSQL refuses to run as root, so when we are root initdb and pg_ctl run as the `postgres`
// user (created by Debian's postgresql package) in a directory that user owns.
//
// Plain ESM, node builtins only: this runs before `npm ci` may have happened.

import { spawn, spawnSync } from 'node:child_process';
import {
  accessSync,
  chownSync,
  constants,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

const noop = () => {};

export function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Is `cmd` an executable on PATH (or in the sbin dirs, which a non-login root shell may lack)? */
export function commandExists(cmd) {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    try {
      accessSync(join(dir, cmd), constants.X_OK);
      return true;
    } catch {
      // keep looking
    }
  }
  return false;
}

function hasServerBinaries(dir) {
  return Boolean(dir) && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));
}

/** Directory holding initdb/pg_ctl/postgres, or null when the server is not installed. */
export function findPostgresBinDir() {
  const r = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  if (r.status === 0) {
    const dir = r.stdout.trim();
    if (hasServerBinaries(dir)) return dir;
  }
  const base = '/usr/lib/postgresql';
  let versions = [];
  try {
    versions = readdirSync(base);
  } catch {
    versions = [];
  }
  versions.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a) || b.localeCompare(a));
  for (const v of versions) {
    const dir = join(base, v, 'bin');
    if (hasServerBinaries(dir)) return dir;
  }
  return null;
}

function postgresUser() {
  const passwd = readFileSync('/etc/passwd', 'utf8');
  for (const line of passwd.split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name === 'postgres') return { uid: Number(uid), gid: Number(gid) };
  }
  throw new Error('running as root but there is no `postgres` user (install the postgresql package)');
}

/** [command, args, extra spawn options] running `cmd args` as the postgres user when we are root. */
function asPostgres(cmd, args) {
  if (!isRoot()) return [cmd, args, {}];
  if (commandExists('runuser')) return ['runuser', ['-u', 'postgres', '--', cmd, ...args], {}];
  const { uid, gid } = postgresUser();
  return [cmd, args, { uid, gid }];
}

function run(cmd, args, options = {}) {
  const { timeoutMs = 120_000, ...spawnOptions } = options;
  return new Promise((resolve) => {
    let output = '';
    let child;
    try {
      child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, ...spawnOptions });
    } catch (err) {
      resolve({ code: -1, output: String(err) });
      return;
    }
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('error', (err) => {
      output += `\n${err.message}`;
    });
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : -1), signal, output }));
  });
}

function runAsPostgres(cmd, args, options = {}) {
  const [c, a, extra] = asPostgres(cmd, args);
  return run(c, a, { ...options, ...extra });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error('could not pick a free port'))));
    });
  });
}

async function tail(file, lines = 40) {
  try {
    const text = await readFile(file, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no server log)';
  }
}

function indent(text) {
  return text
    .trimEnd()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}

// Servers started by this process and not yet stopped, so SIGINT/SIGTERM can clean them up.
const live = new Set();
const signalHandlers = new Map();

function installSignalHandlers() {
  for (const [sig, num] of [
    ['SIGINT', 2],
    ['SIGTERM', 15],
    ['SIGHUP', 1],
  ]) {
    // Only when nobody else handles the signal: a caller's own handler takes precedence, and its
    // eventual process.exit() still runs our 'exit' handler.
    if (signalHandlers.has(sig) || process.listenerCount(sig) > 0) continue;
    const handler = () => process.exit(128 + num);
    signalHandlers.set(sig, handler);
    process.once(sig, handler);
  }
}

function removeSignalHandlers() {
  for (const [sig, handler] of signalHandlers) process.removeListener(sig, handler);
  signalHandlers.clear();
}

/**
 * Start a throwaway PostgreSQL server.
 * @param {{ log?: (msg: string) => void }} [options]
 * @returns {Promise<{ url: string, port: number, dataDir: string, stop: () => Promise<void> }>}
 */
export async function startThrowawayPostgres({ log = noop } = {}) {
  const binDir = findPostgresBinDir();
  if (!binDir) {
    throw new Error(
      'PostgreSQL server binaries not found (no initdb via `pg_config --bindir` or /usr/lib/postgresql/*/bin); ' +
        'install the Debian package `postgresql`',
    );
  }
  const initdb = join(binDir, 'initdb');
  const pgCtl = join(binDir, 'pg_ctl');

  const dataDir = await mkdtemp(join(tmpdir(), 'fjord-pg-'));
  const logFile = join(dataDir, 'log');
  let started = false;
  let stopped = false;

  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    live.delete(handle);
    if (started) {
      const [c, a, extra] = asPostgres(pgCtl, ['-D', dataDir, '-m', 'immediate', 'stop']);
      spawnSync(c, a, { stdio: 'ignore', cwd: dataDir, timeout: 30_000, ...extra });
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const handle = { stopSync };

  const fail = async (what, output) => {
    const logTail = await tail(logFile);
    const parts = [`throwaway PostgreSQL: ${what} (data dir ${dataDir})`];
    if (output?.trim()) parts.push(`  output:\n${indent(output)}`);
    parts.push(`  server log (tail):\n${indent(logTail)}`);
    const message = parts.join('\n');
    stopSync();
    process.removeListener('exit', stopSync);
    return new Error(message);
  };

  process.on('exit', stopSync);
  live.add(handle);
  installSignalHandlers();

  if (isRoot()) {
    const { uid, gid } = postgresUser();
    chownSync(dataDir, uid, gid);
  }

  log(`initdb ${dataDir}`);
  const init = await runAsPostgres(
    initdb,
    ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8'],
    { cwd: dataDir },
  );
  if (init.code !== 0) throw await fail(`initdb failed (exit ${init.code})`, init.output);

  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    const serverOptions = [
      `-p ${port}`,
      `-k '${dataDir}'`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=300',
    ].join(' ');
    log(`pg_ctl start on 127.0.0.1:${port}`);
    const start = await runAsPostgres(
      pgCtl,
      ['-D', dataDir, '-w', '-t', '30', '-o', serverOptions, '-l', logFile, 'start'],
      { cwd: dataDir, timeoutMs: 60_000 },
    );
    if (start.code === 0) break;
    const logText = await tail(logFile, 20);
    // Another process may have grabbed the port between picking and binding it: try another.
    if (attempt < 3 && /could not bind|address already in use/i.test(logText)) {
      log(`port ${port} was taken, retrying`);
      continue;
    }
    started = true; // pg_ctl may have left a postmaster behind; stopping it is harmless otherwise
    throw await fail(`pg_ctl start failed (exit ${start.code})`, start.output);
  }
  started = true;

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  log(`PostgreSQL ready at ${url}`);

  return {
    url,
    port,
    dataDir,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      live.delete(handle);
      process.removeListener('exit', stopSync);
      if (live.size === 0) removeSignalHandlers();
      const r = await runAsPostgres(pgCtl, ['-D', dataDir, '-m', 'immediate', 'stop'], {
        cwd: dataDir,
        timeoutMs: 30_000,
      });
      if (r.code !== 0) log(`pg_ctl stop exited ${r.code}: ${r.output.trim()}`);
      await rm(dataDir, { recursive: true, force: true });
      log(`PostgreSQL on port ${port} stopped`);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Debian packages

function hasAptLists() {
  try {
    return readdirSync('/var/lib/apt/lists').some((f) => f.includes('_Packages'));
  } catch {
    return false;
  }
}

function allHaveCandidates(packages) {
  const r = spawnSync('apt-cache', ['policy', ...packages], { encoding: 'utf8' });
  if (r.status !== 0) return false;
  const candidates = r.stdout.match(/Candidate: .*/g) ?? [];
  return candidates.length === packages.length && candidates.every((c) => !c.includes('(none)'));
}

async function runInherit(cmd, args, env = {}) {
  return await new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
    child.on('error', () => resolve(-1));
    child.on('close', (code) => resolve(code ?? -1));
  });
}

/** Stop (and keep from auto-starting) the system cluster(s) the postgresql package starts. */
export async function stopSystemPostgres({ log = noop } = {}) {
  const list = spawnSync('pg_lsclusters', ['-h'], { encoding: 'utf8' });
  if (list.status === 0) {
    for (const line of list.stdout.split('\n')) {
      const [version, cluster, , status] = line.trim().split(/\s+/);
      if (!version || !cluster) continue;
      try {
        // 'manual': pg_ctlcluster still works, but nothing starts it at boot.
        const conf = `/etc/postgresql/${version}/${cluster}/start.conf`;
        if (existsSync(conf)) writeFileSync(conf, 'manual\n');
      } catch {
        // ignore
      }
      if (status === 'online') {
        log(`stopping system PostgreSQL cluster ${version}/${cluster}`);
        await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, cluster, 'stop']);
      }
    }
  } else {
    await run('service', ['postgresql', 'stop']);
  }
}

/**
 * apt-get install the given Debian packages in one call (root only). Runs `apt-get update` first
 * only when the package lists are missing or lack a package, and once more if the install fails.
 * Returns true on success.
 */
export async function aptInstall(packages, { log = noop } = {}) {
  if (packages.length === 0) return true;
  if (!isRoot()) return false;
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  let updated = false;
  if (!hasAptLists() || !allHaveCandidates(packages)) {
    log('apt-get update');
    await runInherit('apt-get', ['update'], env);
    updated = true;
  }
  const install = ['install', '-y', '--no-install-recommends', ...packages];
  log(`apt-get ${install.join(' ')}`);
  let code = await runInherit('apt-get', install, env);
  if (code !== 0 && !updated) {
    log('apt-get install failed; running apt-get update and retrying');
    await runInherit('apt-get', ['update'], env);
    code = await runInherit('apt-get', install, env);
  }
  // Installing postgresql creates and starts a system cluster on 5432: we only want the binaries.
  if (packages.includes('postgresql') || packages.some((p) => /^postgresql-\d+$/.test(p))) {
    await stopSystemPostgres({ log });
  }
  return code === 0;
}

/**
 * Make sure the PostgreSQL server binaries are present, installing Debian's `postgresql` when
 * running as root. Returns false when they are missing and cannot be installed.
 */
export async function ensurePostgresInstalled({ log = noop } = {}) {
  if (findPostgresBinDir()) return true;
  if (!isRoot()) {
    log('PostgreSQL server binaries missing and not running as root: cannot install `postgresql`');
    return false;
  }
  await aptInstall(['postgresql'], { log });
  return findPostgresBinDir() !== null;
}
