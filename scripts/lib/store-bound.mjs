// Which test files depend on the store under test. A file is store-bound when it, or a module it
// imports through relative paths (transitively), reads FJORD_TEST_STORE: that is how the suite's
// helpers (test/helpers/store.ts, the S3 harness) pick SQLite or PostgreSQL. Every other file
// gives the same result on both stores, so the PostgreSQL pass skips it.
//
// A file may also name its one pass in a comment, and says why:
//   `fjord-test: one store`             the SQLite pass only: its two passes in one run would share
//                                       a machine-wide resource they cannot share;
//   `fjord-test: one store (sqlite)`    a real client or data plane is its subject, and the store
//   `fjord-test: one store (postgres)`  only carries state the integration tier already tests on
//                                       both: it runs once, and such files are spread over the two
//                                       passes, so each store still sees real clients end to end.
// Run on one store alone (`--only`), every file runs.
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

const ONE_STORE = /fjord-test: one store(?: \((sqlite|postgres)\))?/;

/** The one pass a file asks for, or null when it runs in both. */
export function onePassOf(text) {
  const m = ONE_STORE.exec(text);
  return m ? (m[1] ?? 'sqlite') : null;
}

/**
 * The test files under `root`'s src/ and test/ (paths relative to `root`) that the given store's
 * pass leaves out when both passes run: for PostgreSQL, the store-free files and those that ask
 * for the SQLite pass; for SQLite, those that ask for the PostgreSQL pass.
 */
export function filesOutsidePass(root, store) {
  const bound = makeBoundCheck();
  const other = store === 'postgres' ? 'sqlite' : 'postgres';
  return testFilesUnder(root)
    .filter((f) => {
      const pass = onePassOf(readFileSync(f, 'utf8'));
      if (pass) return pass === other;
      return store === 'postgres' && !bound(f);
    })
    .map((f) => relative(root, f))
    .sort();
}
