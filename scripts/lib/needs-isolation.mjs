// Which test files need a module registry of their own. The suite's workers run file after file in
// one registry (vitest's `isolate: false`): importing Fjord's ~600 modules costs about 4 s of CPU
// per file, more than many files' tests. A file that changes what later files would see must not
// share it: one that replaces a module (`vi.mock`), the clock (fake timers), a global or the
// environment. So must a file that needs a module's first state (a lazy
// load not yet done): it says so with a comment holding `fjord-test: isolate`. Such files run in an
// isolated project of their tier, a fresh worker thread each (vitest.config.ts). A worker thread
// cannot call process.chdir or process.umask: a file that needs them restores them itself
// and runs shared (every Fjord already sets umask 077 in the process it runs in).
//
// Plain ESM, node builtins only: vitest.config.ts reads it.

import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { testFilesUnder } from './test-files.mjs';

/** What a test file's text may do that would leak into the next file run in the same registry. */
const LEAKS = [
  /\bvi\.(?:mock|doMock|unmock|stubEnv|stubGlobal|useFakeTimers|setSystemTime|spyOn)\b/,
  /\bprocess\.env(?:\.\w+|\[[^\]]+\])\s*=(?!=)/, // process.env.X = … / process.env['X'] = …
  /\bdelete\s+process\.env\b/,
  /\bObject\.assign\(\s*process\.env\b/,
  /\bsetGlobalDispatcher\(/,
  /fjord-test: isolate\b/,
];

/** Test files under `root`'s src/ and test/ that must run isolated, as paths relative to `root`. */
export function isolatedTestFiles(root) {
  const files = testFilesUnder(root);
  return files
    .filter((f) => LEAKS.some((pattern) => pattern.test(readFileSync(f, 'utf8'))))
    .map((f) => relative(root, f))
    .sort();
}
