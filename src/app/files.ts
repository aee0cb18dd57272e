import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/** Writes a file only its owner can read (mode 0600), creating its directory. */
export function writePrivateFile(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/** Reads a secret kept in the data dir, generating it on first use. */
export function readOrCreateSecretFile(path: string, generate: () => string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const value = generate();
  try {
    writeFileSync(path, `${value}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process made it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(path, 'utf8').trim();
    throw err;
  }
  return value;
}

/**
 * Everything Fjord creates in its data dir is its owner's alone: files 0600, folders 0700 (the
 * process umask is set to 077 before anything is written). Only the path down to the embedded
 * PostgreSQL's own folder may be traversable (o+x, never readable) by the `postgres` user.
 *
 * At start the data dir's own entries are checked; any readable or writable by group or others
 * (from an older Fjord, or a copy made with another umask) are fixed, and each fix is logged.
 */
export function securePermissions(): void {
  process.umask(0o077);
}

export function fixDataDirModes(
  dataDir: string,
  log: (path: string, from: number, to: number) => void,
): void {
  if (!existsSync(dataDir)) return;
  const fix = (path: string) => {
    let mode: number;
    try {
      mode = lstatSync(path).mode;
    } catch {
      return;
    }
    if ((mode & 0o170000) === 0o120000) return; // a symlink: its target is not ours to change
    // Group and others lose read and write; a folder keeps o+x (traversal) when it had it.
    const wanted = (mode & 0o7700) | (mode & 0o001 && (mode & 0o170000) === 0o040000 ? 0o001 : 0);
    if ((mode & 0o7777) !== wanted) {
      chmodSync(path, wanted);
      log(path, mode & 0o7777, wanted);
    }
  };
  fix(dataDir);
  for (const entry of readdirSync(dataDir)) fix(join(dataDir, entry));
}
