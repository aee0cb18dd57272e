// Rewrites the reference tables that are generated from code (scripts/lib/doc-tables.ts): the
// variable table of docs/configuration.md, the bucket table of docs/rate-limits.md and the quota
// table of docs/limits.md. Areas built in parallel each add rows; rendering them from the source
// of truth keeps the pages whole after a merge, and a test fails on a page left unrendered.
//
//   npx tsx scripts/render-doc-tables.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { renderDocTables } from './lib/doc-tables.js';

for (const [path, text] of renderDocTables((p) => readFileSync(p, 'utf8'))) writeFileSync(path, text);
console.log('docs/configuration.md, docs/rate-limits.md and docs/limits.md tables rendered');
