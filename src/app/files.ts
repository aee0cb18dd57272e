import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

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
