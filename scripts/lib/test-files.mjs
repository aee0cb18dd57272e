// The suite's test files: every `*.test.ts` under a checkout's src/ and test/.
//
// Plain ESM, node builtins only: vitest.config.ts and scripts/test.mjs read it before `npm ci`.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

function walk(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else if (entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** Absolute paths of the test files under `root`'s src/ and test/. */
export function testFilesUnder(root) {
  return ['src', 'test'].flatMap((d) => (existsSync(join(root, d)) ? walk(join(root, d), []) : []));
}
