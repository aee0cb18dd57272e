#!/usr/bin/env node
// Writes test/file-durations.json from the durations vitest kept of the last run (its results
// cache under node_modules/.vite/vitest/), so the suite's sequencer (test/setup/longest-first.ts)
// starts the longest files first on a fresh clone too. Run it after a whole `npm test`: a file
// keeps the time of the last pass that ran it; files gone from the tree leave the table.
//
//   node scripts/test-durations.mjs

import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const cacheDir = join(root, 'node_modules', '.vite', 'vitest');
const caches = existsSync(cacheDir)
  ? readdirSync(cacheDir)
      .map((d) => join(cacheDir, d, 'results.json'))
      .filter((f) => existsSync(f))
  : [];
if (caches.length === 0) {
  console.error('test-durations: no vitest results yet; run `npm test` first');
  process.exit(1);
}
const target = join(root, 'test', 'file-durations.json');
const seconds = existsSync(target) ? JSON.parse(readFileSync(target, 'utf8')) : {};
const newest = caches.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
for (const [key, result] of JSON.parse(readFileSync(newest, 'utf8')).results) {
  const file = key.slice(key.indexOf(':') + 1); // "<project>:<path>"
  if (!existsSync(join(root, file)) || !result.duration) continue;
  seconds[file] = Math.round(result.duration / 100) / 10;
}
for (const file of Object.keys(seconds)) if (!existsSync(join(root, file))) delete seconds[file];
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(target, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test-durations: ${Object.keys(sorted).length} files written to test/file-durations.json`);
