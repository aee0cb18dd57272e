import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Makes an engine's data dir with `install` (initdb, mariadb-install-db) unless `marker` shows it
 * is made already. The install writes into `<dataDir>.installing`, renamed into place only once
 * it succeeded: the engines create their marker (`PG_VERSION`, `mysql/`) early in the install,
 * so an install that failed or was killed half-way in the data dir itself would be taken for a
 * finished one at every start after it, and the server would come up without its system tables.
 * A data dir without its marker (such a leftover of an earlier Fjord) is moved aside, never
 * deleted: `<dataDir>.incomplete-<time>`.
 */
export async function installDataDir(
  dataDir: string,
  marker: string,
  install: (dir: string) => Promise<void>,
  log: (msg: string) => void,
): Promise<void> {
  if (existsSync(join(dataDir, marker))) return;
  const staging = `${dataDir}.installing`;
  // A staging dir is only ever a killed install's leftover: nothing in it was ever used.
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true, mode: 0o700 });
  try {
    await install(staging);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  if (existsSync(dataDir)) {
    if (readdirSync(dataDir).length === 0) rmSync(dataDir, { recursive: true });
    else {
      const aside = `${dataDir}.incomplete-${Date.now()}`;
      log(`${dataDir} has no ${marker}: an unfinished install, moved to ${aside}`);
      renameSync(dataDir, aside);
    }
  }
  renameSync(staging, dataDir);
}
