import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * No runtime import cycles in src/: a module in a cycle can be read before it has finished
 * evaluating (a `const` in its temporal dead zone, a class still undefined), and whether it is
 * depends on which module of the cycle some entry point happens to load first.
 *
 * Runtime edges only: type-only imports (`import type`, or every name marked `type`; the
 * compiler's verbatimModuleSyntax makes that marking exact) vanish at compile time, and `import()`
 * runs after every static import has finished, so neither can close a cycle. A regular expression
 * over the sources, not the compiler's parser: a full parse of src/ took most of a minute here.
 */
const ROOT = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

// Static import and export-from statements at the start of a line; verbatimModuleSyntax keeps
// their `type` markings exact, and Biome's formatting keeps them at the start of a line.
const STATEMENT = /^(import|export)\s+(type\s+)?(?:([^;'"]*?)\s+from\s+)?['"](\.[^'"]+)['"]/gm;

/** The relative specifiers a module loads at evaluation, resolved to source paths. */
function runtimeImports(path: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(STATEMENT)) {
    const [, , typeKeyword, clause, specifier] = m;
    if (typeKeyword) continue;
    const names = /^\{([^}]*)\}$/.exec(clause?.trim() ?? '')?.[1];
    const list = names
      ?.split(',')
      .map((n) => n.trim())
      .filter(Boolean);
    if (list?.length && list.every((n) => n.startsWith('type '))) continue;
    out.push(resolve(dirname(path), specifier!.replace(/\.js$/, '.ts')));
  }
  return out;
}

/** Every cycle's strongly connected component (Tarjan), each as sorted paths. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfLoop = (graph.get(v) ?? []).includes(v);
      if (component.length > 1 || selfLoop) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('import cycles', () => {
  it('finds a cycle through a value import and none through a type-only one', () => {
    const a = '/x/a.ts';
    const b = '/x/b.ts';
    const graph = (bText: string) =>
      new Map([
        [a, runtimeImports(a, "import { b } from './b.js';")],
        [b, runtimeImports(b, bText)],
      ]);
    expect(cycles(graph("import { a } from './a.js';"))).toEqual([[a, b]]);
    expect(cycles(graph("export { a } from './a.js';"))).toEqual([[a, b]]);
    expect(cycles(graph("import type { A } from './a.js';"))).toEqual([]);
    expect(cycles(graph("import { type A, type B } from './a.js';"))).toEqual([]);
    expect(cycles(graph("const m = () => import('./a.js');"))).toEqual([]);
    expect(cycles(graph("import { type A, a } from './a.js';"))).toEqual([[a, b]]);
    expect(cycles(graph("import {\n  type A,\n  a,\n} from './a.js';"))).toEqual([[a, b]]);
    expect(cycles(graph("import * as all from './a.js';"))).toEqual([[a, b]]);
    expect(cycles(graph("import './a.js';"))).toEqual([[a, b]]);
  });

  it('has none in src/', () => {
    const graph = new Map(
      sourceFiles(join(ROOT, 'src')).map((path) => [path, runtimeImports(path, readFileSync(path, 'utf8'))]),
    );
    const found = cycles(graph).map((c) => c.map((p) => relative(ROOT, p)));
    expect(found).toEqual([]);
  });
});
