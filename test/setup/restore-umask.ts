import { afterAll } from 'vitest';

/**
 * Every test file's setup: the file ends with the umask it began with. A Fjord sets 077 in the
 * process it runs in (for its data dir), and a worker runs many files (isolate: false): without
 * this, a later file's files came out private to root (dist/ built by a test as 0700, which the
 * namespace servers' web terminal then could not use). Worker threads cannot set a umask: there
 * it is left alone.
 */
let before: number | null = null;
try {
  before = process.umask(0o022);
  process.umask(before);
} catch {
  before = null;
}
afterAll(() => {
  if (before !== null) process.umask(before);
});
