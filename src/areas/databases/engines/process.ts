import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Child-process helpers shared by the embedded engines. */

export const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface RunResult {
  code: number;
  output: string;
}

export function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; uid?: number; gid?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 120_000,
      uid: opts.uid,
      gid: opts.gid,
    });
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('error', (err) => {
      output += `\n${err.message}`;
    });
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

/** The uid/gid of the `postgres` user that Debian's package creates (PostgreSQL refuses root). */
export function postgresAccount(): { uid: number; gid: number } | null {
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name === 'postgres') return { uid: Number(uid), gid: Number(gid) };
  }
  return null;
}

/** Runs a PostgreSQL server program, as the `postgres` user when we are root. */
export function runAsPostgres(cmd: string, args: string[], cwd: string, timeoutMs = 120_000) {
  if (!isRoot()) return run(cmd, args, { cwd, timeoutMs });
  if (isExecutable('/usr/sbin/runuser') || isExecutable('/sbin/runuser')) {
    return run('runuser', ['-u', 'postgres', '--', cmd, ...args], { cwd, timeoutMs });
  }
  const account = postgresAccount();
  if (!account) throw new Error('running as root but there is no `postgres` user');
  return run(cmd, args, { cwd, timeoutMs, ...account });
}

/** A loopback port nobody listens on right now (the caller retries if it is taken meanwhile). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/** Whether something accepts TCP connections on host:port now. */
export function portInUse(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(true));
    srv.listen(port, host, () => srv.close(() => resolve(false)));
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function tailOf(text: string, lines = 20): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
