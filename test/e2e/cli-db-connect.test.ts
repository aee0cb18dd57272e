// `fjord db connect` as a user types it: the shipped `fjord` process, Fjord's embedded PostgreSQL
// and MariaDB, and the real psql and mariadb clients logging in and running a query.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbCustomer } from '../areas/databases-fixtures.js';
import { commandPath } from '../helpers/commands.js';
import { TestFjord } from '../helpers/fjord.js';

// fjord-test: one store (sqlite). One pass runs it: the database clients' login is its subject; the
// databases area's state is tested on both stores in the integration tier.

const FJORD = join(import.meta.dirname, '..', '..', 'bin', 'fjord.js');
const clients = ['psql', 'mariadb'].every((c) => commandPath(c) !== null);
let t: TestFjord;
let env: NodeJS.ProcessEnv;
let home: string;

beforeAll(async () => {
  if (!clients) return;
  t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_DATABASE_ENGINES: 'auto' });
  await t.fjord.start(['api']);
  const c = await dbCustomer(t);
  home = mkdtempSync(join(tmpdir(), 'fjord-cli-db-'));
  env = {
    PATH: process.env['PATH'],
    XDG_CONFIG_HOME: home,
    FJORD_URL: t.kernel.baseUrl(),
    FJORD_TOKEN: c.pat,
  };
}, 120_000);
afterAll(async () => {
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** `fjord …` with `stdin` piped in (not a terminal, as in a script or CI). */
function fjord(args: string[], stdin = '', extraEnv: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [FJORD, ...args], { env: { ...env, ...extraEnv }, cwd: home });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

describe.runIf(clients)('fjord db connect', () => {
  it.each([
    ['postgresql', 'SELECT 40 + 2 AS answer;'],
    ['mariadb', 'SELECT 40 + 2 AS answer;'],
  ])(
    'logs %s’s client in: with --rotate, with the client’s password variable, and says why not without',
    { timeout: 120_000 },
    async (dbType, sql) => {
      const made = await fjord(['db', 'create', '--db_type', dbType, '--db_name', 'cli', '-o', 'json']);
      expect(made.code, made.stderr).toBe(0);
      const db = JSON.parse(made.stdout) as { technical_name: string; password: string };
      // --rotate: a new password, used at once; the old one stops working.
      const rotated = await fjord(['db', 'connect', dbType, db.technical_name, '--rotate'], sql);
      expect(rotated.stderr).toContain('rotated the password');
      expect(rotated.code, rotated.stderr).toBe(0);
      expect(rotated.stdout).toMatch(/\b42\b/);
      const variable = dbType === 'postgresql' ? 'PGPASSWORD' : 'MYSQL_PWD';
      const stale = await fjord(['db', 'connect', dbType, db.technical_name], sql, {
        [variable]: db.password,
      });
      expect(stale.code).not.toBe(0);
      expect(stale.stdout).not.toMatch(/\b42\b/);
      // The password a rotation printed, in the client's own variable; words after -- go to the client.
      const fresh = JSON.parse(
        (await fjord(['db', 'rotate', dbType, db.technical_name, '-o', 'json'])).stdout,
      ) as { password: string };
      const extra =
        dbType === 'postgresql' ? ['-c', 'SELECT 6 * 7 AS answer'] : ['-e', 'SELECT 6 * 7 AS answer'];
      const byVariable = await fjord(['db', 'connect', dbType, db.technical_name, '--', ...extra], '', {
        [variable]: fresh.password,
      });
      expect(byVariable.code, byVariable.stderr).toBe(0);
      expect(byVariable.stdout).toMatch(/\b42\b/);
      // No password and no terminal to ask on: a usage error that names the ways, no client started.
      const none = await fjord(['db', 'connect', dbType, db.technical_name], sql);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('--rotate');
      expect(none.stderr).toContain(variable);
    },
  );
});
