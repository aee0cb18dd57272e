import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * One unit-of-work idiom (docs/architecture.md, "The unit of work"): area code opens a unit with
 * `store.unitOfWork` or `unitsOf(…).run`, and binds its repos to the unit's transaction
 * (`Repo.over(tx)`). A repo runs queries; it never opens a unit, retries one, or holds a rule.
 */
const ROOT = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}
const files = sourceFiles(join(ROOT, 'src')).map((path) => ({
  path: relative(ROOT, path),
  text: readFileSync(path, 'utf8'),
}));
const isRepo = (path: string) => /^(repo|.*-repo)\.ts$/.test(basename(path));

describe('one unit-of-work idiom', () => {
  it('has no repo that opens a unit', () => {
    const opening = files
      .filter((f) => f.path.startsWith('src/areas/') && isRepo(f.path))
      .filter((f) => /unitOfWork\(|\.transaction\(\)|\binUnit\b/.test(f.text))
      .map((f) => f.path)
      .sort();
    expect(opening).toEqual([]);
  });

  it('has no `inUnit` wrapper anywhere (DNS opens its units through unitsOf)', () => {
    expect(files.filter((f) => /\binUnit\b/.test(f.text)).map((f) => f.path)).toEqual([]);
  });

  it('retries units only in the kernel (UnitOptions.attemptsOnUniqueRace)', () => {
    // An area-level retry: a counted loop in a file that opens units and catches a unique violation.
    const retrying = files
      .filter((f) => f.path.startsWith('src/areas/'))
      .filter((f) => /unitOfWork\(|\.run\(/.test(f.text) && /isUniqueViolation/.test(f.text))
      .filter((f) => /for \(let (attempt|tries)\b/.test(f.text))
      .map((f) => f.path)
      .sort();
    expect(retrying).toEqual([]);
  });

  it('has no repo-level unit wrapper (`repo.unit(`, `repo.transaction(`, `profileTransaction`)', () => {
    const wrappers = files
      .filter((f) => f.path.startsWith('src/areas/'))
      .filter((f) => /\brepo\.(unit|transaction)\(|\bprofileTransaction\b/.test(f.text))
      .map((f) => f.path);
    expect(wrappers).toEqual([]);
  });

  it('narrows a unit’s transaction by assignment (`UnitDb<Tables>`), never by a cast', () => {
    // `AnyDb` is assignable to any `Kysely<Tables>`: a cast could only hide a wrong table set.
    const casts = files
      .filter((f) => /\b(tx|trx|db) as (Kysely<|Transaction<|Db\b|never\b)/.test(f.text))
      .map((f) => f.path);
    expect(casts).toEqual([]);
  });

  it('has no `as Transaction` cast', () => {
    const casts = Object.fromEntries(
      files
        .map((f) => [f.path, (f.text.match(/as Transaction\b/g) ?? []).length] as const)
        .filter(([, n]) => n > 0),
    );
    expect(casts).toEqual({});
  });
});
