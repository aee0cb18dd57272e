// Writes src/cli/golden/*.txt: the CLI's table for every operation's example answer, from the
// committed openapi.json. Run after changing the printer or the API (`npm run cli:golden`), then
// review the diff: src/cli/output.golden.test.ts fails until the files match.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { goldenTables } from '../src/cli/golden.js';

const root = join(import.meta.dirname, '..');
const dir = join(root, 'src', 'cli', 'golden');
mkdirSync(dir, { recursive: true });
for (const old of readdirSync(dir)) if (old.endsWith('.txt')) rmSync(join(dir, old));
const tables = goldenTables(JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')));
for (const [file, text] of tables) writeFileSync(join(dir, file), text);
console.log(`wrote ${tables.size} files to src/cli/golden/`);
