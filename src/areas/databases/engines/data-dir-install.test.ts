import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installDataDir } from './data-dir-install.js';

let root: string;
let dataDir: string;
const logged: string[] = [];
const log = (m: string) => logged.push(m);

/** An install like mariadb-install-db: the marker first, the system tables after. */
const install = (fail: boolean) => async (dir: string) => {
  mkdirSync(join(dir, 'mysql'));
  if (fail) throw new Error('bootstrap failed');
  writeFileSync(join(dir, 'mysql', 'user.frm'), 'tables');
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'fjord-install-'));
  dataDir = join(root, 'data');
  logged.length = 0;
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('installDataDir', () => {
  it('leaves no marker behind a failed install, so the next start installs again', async () => {
    await expect(installDataDir(dataDir, 'mysql', install(true), log)).rejects.toThrow('bootstrap failed');
    expect(existsSync(join(dataDir, 'mysql'))).toBe(false);
    expect(readdirSync(root)).toEqual([]);
    await installDataDir(dataDir, 'mysql', install(false), log);
    expect(existsSync(join(dataDir, 'mysql', 'user.frm'))).toBe(true);
  });

  it('installs once: a data dir with its marker is left as it is', async () => {
    await installDataDir(dataDir, 'mysql', install(false), log);
    writeFileSync(join(dataDir, 'mysql', 'user.frm'), 'customer data');
    let ran = false;
    await installDataDir(
      dataDir,
      'mysql',
      async () => {
        ran = true;
      },
      log,
    );
    expect(ran).toBe(false);
  });

  it('starts over from a killed install’s staging dir, and moves an unfinished data dir aside', async () => {
    mkdirSync(join(`${dataDir}.installing`, 'mysql'), { recursive: true }); // killed mid-install
    mkdirSync(join(dataDir, 'half'), { recursive: true }); // an earlier Fjord's unfinished install
    await installDataDir(dataDir, 'mysql', install(false), log);
    expect(existsSync(join(dataDir, 'mysql', 'user.frm'))).toBe(true);
    expect(existsSync(`${dataDir}.installing`)).toBe(false);
    const aside = readdirSync(root).filter((n) => n.startsWith('data.incomplete-'));
    expect(aside).toHaveLength(1);
    expect(existsSync(join(root, aside[0]!, 'half'))).toBe(true);
    expect(logged.join('\n')).toMatch(/has no mysql: an unfinished install/);
  });
});
