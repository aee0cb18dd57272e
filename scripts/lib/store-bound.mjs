// Which test files depend on the store under test. A file is store-bound when it, or a module it
// imports through relative paths (transitively), reads FJORD_TEST_STORE: that is how the suite's
// helpers (test/helpers/store.ts, the S3 harness) pick SQLite or PostgreSQL. Every other file
// gives the same result on both stores, so the PostgreSQL pass skips it. So does a test file that
// says `fjord-test: one store` in a comment: one whose two passes in one run would share a
// machine-wide resource they cannot share (each such file says why).
//
// Plain ESM, node builtins only: vitest.config.ts and scripts/test.mjs both read it.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { testFilesUnder } from './test-files.mjs';

const MARKER = 'FJORD_TEST_STORE';
// `import … from './x.js'`, `export … from '../y.js'`, `import('./z.js')`: relative specifiers only.
const SPECIFIER = /(?:from\s*|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/** The file a relative specifier names: `.js` in the source may be a `.ts` file. */
function resolveSpecifier(fromFile, spec) {
  const base = resolve(dirname(fromFile), spec);
  const candidates = [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((c) => existsSync(c) && !c.endsWith('/')) ?? null;
}

/** A memoised walk: does `file` or anything it imports read the marker? */
function makeBoundCheck() {
  const memo = new Map();
  const visit = (file) => {
    if (memo.has(file)) return memo.get(file);
    memo.set(file, false); // cycles: a module being visited adds nothing by itself
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return false;
    }
    let bound = text.includes(MARKER);
    if (!bound) {
      for (const [, spec] of text.matchAll(SPECIFIER)) {
        const target = resolveSpecifier(file, spec);
        if (target && !target.includes('node_modules') && visit(target)) {
          bound = true;
          break;
        }
      }
    }
    memo.set(file, bound);
    return bound;
  };
  return visit;
}

/** Test files under `root`'s src/ and test/ that read no store, as paths relative to `root`. */
export function storeFreeTestFiles(root) {
  const bound = makeBoundCheck();
  const files = testFilesUnder(root);
  const oneStore = (f) => readFileSync(f, 'utf8').includes('fjord-test: one store');
  return files
    .filter((f) => !bound(f) || oneStore(f))
    .map((f) => relative(root, f))
    .sort();
}
