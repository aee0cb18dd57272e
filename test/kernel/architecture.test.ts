import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The house rules that tooling can check, walked over src/:
 * - the kernel imports no area and not the composition root;
 * - an area imports the kernel, its own files, and of another area only its `service.ts`
 *   (and the area wiring, src/areas/wiring.ts);
 * - no file outside kernel/store opens a transaction: every check-then-write is a unit of work.
 */
const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

const files = sourceFiles(SRC).map((path) => ({
  path,
  rel: relative(SRC, path),
  text: readFileSync(path, 'utf8'),
}));

const importsOf = (file: { path: string; text: string }) =>
  [...file.text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'(\.[^']+)'/g)].map((m) =>
    relative(SRC, resolve(dirname(file.path), m[1]!)).replace(/\.js$/, '.ts'),
  );

describe('architecture', () => {
  it('the kernel imports no area and not the composition root', () => {
    const bad = files
      .filter((f) => f.rel.startsWith('kernel/'))
      .flatMap((f) =>
        importsOf(f)
          .filter((i) => i.startsWith('areas/') || i.startsWith('app/'))
          .map((i) => `${f.rel} → ${i}`),
      );
    expect(bad).toEqual([]);
  });

  it('an area uses another area only through its service.ts', () => {
    const bad = files
      .filter((f) => f.rel.startsWith('areas/') && f.rel.split('/').length > 2)
      .flatMap((f) => {
        const own = f.rel.split('/')[1];
        return importsOf(f)
          .filter((i) => i.startsWith('areas/'))
          .filter((i) => {
            const parts = i.split('/');
            if (parts.length === 2) return i !== 'areas/wiring.ts';
            return parts[1] !== own && !(parts.length === 3 && parts[2] === 'service.ts');
          })
          .map((i) => `${f.rel} → ${i}`);
      });
    expect(bad).toEqual([]);
  });

  // Files still moving onto the unit of work (issue 12). This list only shrinks.

  it('no file outside kernel/store opens a transaction (use store.unitOfWork / unitsOf)', () => {
    const bad = files
      .filter((f) => !f.rel.startsWith('kernel/store/'))
      .filter((f) => /\.transaction\(\)|\bwriteTransaction\(|BEGIN IMMEDIATE/.test(f.text))
      .map((f) => f.rel);
    expect(bad).toEqual([]);
  });
});
