import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mariadb from 'mariadb';
import { afterAll, expect, it } from 'vitest';
import { EmbeddedMariadb, hasMariadbBinaries } from '../../src/areas/databases/engines/embedded-mariadb.js';
import { portInUse } from '../../src/areas/databases/engines/process.js';
import { isAlive } from '../../src/kernel/supervision/orphans.js';

/**
 * A Fjord killed with `kill -9` leaves its embedded mariadbd running, re-parented, holding the
 * data dir, socket and port. The next start must find it by its pid file and command line, stop
 * it, and start its own on the same port — and report that port only once this server answers
 * on it (before, it reported a port where nothing ever listened).
 */
const dir = mkdtempSync(join(tmpdir(), 'fjord-orphan-'));
// The stopped server may still be closing files as the directory is removed: retried.
afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

it.runIf(hasMariadbBinaries())(
  'stops the mariadbd an earlier, killed Fjord left behind and serves on its port',
  { timeout: 180_000 },
  async () => {
    const firstPort = await startThenKill9();
    const orphan = Number(readFileSync(join(dir, 'mariadbd.pid'), 'utf8'));
    expect(isAlive(orphan)).toBe(true);

    const second = new EmbeddedMariadb({ dir, host: '127.0.0.1', fast: true });
    try {
      const port = Number(new URL((await second.start()).adminUrl).port);
      expect(isAlive(orphan)).toBe(false);
      expect(port).toBe(firstPort);
      expect(await portInUse('127.0.0.1', port)).toBe(true);
      const c = await mariadb.createConnection({ socketPath: second.socket, user: 'root' });
      const [row] = (await c.query('SELECT @@port AS port')) as { port: number }[];
      await c.end();
      expect(Number(row!.port)).toBe(port);
      const pid = Number(readFileSync(join(dir, 'mariadbd.pid'), 'utf8'));
      expect(pid).not.toBe(orphan);
    } finally {
      await second.stop();
    }
    expect(existsSync(join(dir, 'mariadbd.pid'))).toBe(false);
  },
);

/**
 * The first supervisor, in a process of its own, killed with SIGKILL once its server answers: no
 * shutdown code runs, and its mariadbd is left behind, re-parented. (One in this process would
 * still be supervising: it would start its server again beside the second one.) Its port.
 */
async function startThenKill9(): Promise<number> {
  const engine = join(import.meta.dirname, '../../src/areas/databases/engines/embedded-mariadb.ts');
  const script = `import { EmbeddedMariadb } from ${JSON.stringify(engine)};
const m = new EmbeddedMariadb({ dir: ${JSON.stringify(dir)}, host: '127.0.0.1', fast: true });
process.stdout.write((await m.start()).adminUrl + '\\n');
setInterval(() => {}, 60_000);`;
  const first = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  for await (const chunk of first.stdout) {
    out += chunk;
    if (out.includes('\n')) break;
  }
  if (!out.includes('\n')) throw new Error(`the first supervisor exited before its server answered: ${out}`);
  const exited = once(first, 'exit');
  first.kill('SIGKILL');
  await exited;
  return Number(new URL(out.trim()).port);
}
