import { spawn } from 'node:child_process';

/** Runs a program attached to this terminal; resolves to its exit code (127 when it is not installed). */
export function runAttached(cmd: string, args: string[], env: Record<string, string> = {}): Promise<number> {
  return new Promise<number>((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
    child.on('error', () => {
      process.stderr.write(`fjord: ${cmd} is not installed (or not on PATH)\n`);
      resolve(127);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}
