import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** Made outside a test and not yet removed: test/setup/scratch-dirs.ts removes them as the file ends. */
const left = new Set<string>();

const remove = (dir: string) => {
  left.delete(dir);
  rmSync(dir, { recursive: true, force: true });
};

/**
 * A fresh directory under the system's temp dir that does not outlive its user: inside a test it
 * goes when the test ends; made anywhere else (a file's top level, a beforeAll, a describe that is
 * skipped) it goes when the file ends. Runs after runs on one machine left hundreds behind.
 */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    onTestFinished(() => remove(dir));
  } catch {
    left.add(dir); // not inside a test (vitest runs no afterAll registered from a beforeAll)
  }
  return dir;
}

/** Removes what scratchDir made outside tests (every file's setup calls it as the file ends). */
export function removeScratchDirsLeft(): void {
  for (const dir of [...left]) remove(dir);
}
