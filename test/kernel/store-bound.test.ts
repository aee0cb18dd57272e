import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Which pass of `npm test` runs which file (scripts/lib/store-bound.mjs): a plain ESM script that
 * vitest.config.ts reads, so it is loaded here as the config loads it.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const lib = (await import(join(ROOT, 'scripts', 'lib', 'store-bound.mjs') as string)) as {
  onePassOf(text: string): 'sqlite' | 'postgres' | null;
  filesOutsidePass(root: string, store: 'sqlite' | 'postgres'): string[];
};

describe('the store passes of npm test', () => {
  it('reads the one pass a file names, SQLite when it names none', () => {
    expect(lib.onePassOf('// fjord-test: one store (postgres). Why.')).toBe('postgres');
    expect(lib.onePassOf('// fjord-test: one store (sqlite). Why.')).toBe('sqlite');
    expect(lib.onePassOf('// fjord-test: one store. Why.')).toBe('sqlite');
    expect(lib.onePassOf('const x = 1;')).toBeNull();
  });

  it('runs every file in exactly the passes it belongs to', () => {
    const outOfSqlite = lib.filesOutsidePass(ROOT, 'sqlite');
    const outOfPostgres = lib.filesOutsidePass(ROOT, 'postgres');
    // A file about a real client, in the pass it names only.
    expect(outOfSqlite).toContain('test/e2e/console.test.ts');
    expect(outOfPostgres).not.toContain('test/e2e/console.test.ts');
    expect(outOfPostgres).toContain('test/e2e/vps-namespace.test.ts');
    expect(outOfSqlite).not.toContain('test/e2e/vps-namespace.test.ts');
    // A file about the store itself, in both.
    expect(outOfSqlite).not.toContain('test/e2e/crash-restart.test.ts');
    expect(outOfPostgres).not.toContain('test/e2e/crash-restart.test.ts');
    // A file that reads no store, in the SQLite pass only.
    expect(outOfPostgres).toContain('src/areas/dns/server/wire.test.ts');
    expect(outOfSqlite).not.toContain('src/areas/dns/server/wire.test.ts');
    // No file is left out of both.
    expect(outOfSqlite.filter((f) => outOfPostgres.includes(f))).toEqual([]);
  });
});
