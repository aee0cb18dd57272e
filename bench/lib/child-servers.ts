// Child processes for benchmarks: Fjord (or a reference server) started as a separate process,
// so that the figures include real sockets and nothing is shared with the load generator.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FJORD = join(ROOT, 'bin', 'fjord.js');

/**
 * Node's flags for a Fjord server, taken from package.json's start script (the image, the systemd
 * unit and the bin's shebang give the same ones): the benchmarks run a server the way it ships.
 */
export const FJORD_START_FLAGS: string[] = (() => {
  const start = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts.start!;
  return start.split(/\s+/).filter((word) => word.startsWith('--'));
})();

/** `cmd` with the start flags in front when it starts a Fjord server. */
function withStartFlags(cmd: string[]): string[] {
  const at = cmd.indexOf(FJORD);
  return at >= 0 && cmd[at + 1] === 'start' ? [...FJORD_START_FLAGS, ...cmd] : cmd;
}

/** The parent's environment without FJORD_* (a developer's own settings must not leak in). */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FJORD_')) env[k] = v;
  return { ...env, ...extra };
}

const children = new Set<ChildProcess>();
export function killAll() {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
}
process.on('exit', killAll);
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(code);
  });
}

/** Spawns a server and resolves with the first match of `ready` in its stdout. */
export function startServer(
  name: string,
  cmd: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ child: ChildProcess; url: string; stdout: () => string }> {
  const child = spawn(process.execPath, withStartFlags(cmd), {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let err = '';
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: not ready in 60 s\n${out}\n${err}`)), 60_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveStart({ child, url: m[1]!, stdout: () => out });
      }
    });
    child.stderr!.on('data', (d) => {
      err += d;
      process.stderr.write(`[${name}] ${d}`);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}\n${out}\n${err}`));
    });
  });
}

export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export function runFjord(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [FJORD, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.once('close', (code) =>
      code === 0 ? resolveRun(out) : reject(new Error(`fjord ${args.join(' ')} exited ${code}: ${err}`)),
    );
  });
}

export /** CPU seconds (user + system) a process has used so far, from /proc; null where there is no /proc. */
function cpuSeconds(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}
