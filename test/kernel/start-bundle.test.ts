import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript in bin/, without declarations
import { Mappings } from '../../bin/stack-traces.js';

/**
 * bin/fjord.js runs the bundle as a vm.Script with a V8 code cache (bin/run-bundle.js) and maps
 * its stack traces itself (bin/stack-traces.js). Both on a small bundle built here.
 */
const dir = mkdtempSync(join(tmpdir(), 'fjord-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const bin = (name: string) => fileURLToPath(new URL(`../../bin/${name}`, import.meta.url));

const SOURCE = `import { createHash } from 'node:crypto';

export function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function fail(reason: string): never {
  throw new Error(reason);
}

if (process.env.FAIL) fail('on purpose');
console.log(JSON.stringify({ digest: digest('fjord'), url: import.meta.url }));
`;

async function bundle(): Promise<string> {
  writeFileSync(join(dir, 'entry.ts'), SOURCE);
  const out = join(dir, 'entry.cjs');
  await build({
    entryPoints: [join(dir, 'entry.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    sourcemap: 'linked',
    define: { 'import.meta.url': '__fjordBundleUrl' },
    banner: { js: "const __fjordBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
    logLevel: 'silent',
  });
  return out;
}

/** Runs `file` the way bin/fjord.js does, in a new process; prints whether the cache was taken. */
function run(file: string, env: Record<string, string> = {}) {
  const script = `
    import { runBundle } from ${JSON.stringify(bin('run-bundle.js'))};
    import { mapStackTraces } from ${JSON.stringify(bin('stack-traces.js'))};
    mapStackTraces(${JSON.stringify(file)});
    const used = runBundle(${JSON.stringify(file)}, 'command');
    console.log(JSON.stringify({ cacheUsed: used }));`;
  try {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return {
      out: out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
      stderr: '',
    };
  } catch (err) {
    return { out: [], stderr: String((err as { stderr?: string }).stderr) };
  }
}

describe('the bundle runner', () => {
  it('runs the bundle, writes a code cache at exit, and takes it on the next run', async () => {
    const file = await bundle();
    const first = run(file);
    expect(first.out[0].digest).toMatch(/^[0-9a-f]{64}$/);
    expect(first.out[0].url).toBe(`file://${file}`); // import.meta.url is the bundle's, as in an ES module
    expect(first.out[1]).toEqual({ cacheUsed: false });
    expect(readdirSync(dir).filter((f) => f.endsWith('.v8cache'))).toHaveLength(1);
    expect(run(file).out[1]).toEqual({ cacheUsed: true });
  });

  it('names the TypeScript source, line and column in stack traces', async () => {
    const file = await bundle();
    const { stderr } = run(file, { FAIL: '1' });
    expect(stderr).toContain('Error: on purpose');
    expect(stderr).toContain(`at fail (${join(dir, 'entry.ts')}:8:9)`);
    expect(stderr).toContain(`${join(dir, 'entry.ts')}:11:`);
  });

  it('finds the same positions as Node’s own source map parser', async () => {
    // A real bundle of some size: the kernel's HTTP layer and the npm packages it uses.
    const out = join(dir, 'kernel.cjs');
    await build({
      entryPoints: [fileURLToPath(new URL('../../src/kernel/http/openapi.ts', import.meta.url))],
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      sourcemap: 'external',
      logLevel: 'silent',
    });
    const raw = JSON.parse(readFileSync(`${out}.map`, 'utf8'));
    const ours = new Mappings(raw);
    const node = new SourceMap(raw);
    const lines = readFileSync(out, 'utf8').split('\n');
    let compared = 0;
    for (let line = 0; line < lines.length; line += 3) {
      for (let column = 0; column < lines[line]!.length; column += 7) {
        const expected = node.findEntry(line, column) as { generatedLine?: number; originalSource?: string };
        // Node falls back to an earlier line's mapping; a stack frame's position never needs that.
        if (expected.generatedLine !== line || expected.originalSource === undefined) continue;
        const found = ours.find(line, column);
        expect(found, `${line}:${column}`).toEqual({
          source: expected.originalSource,
          line: (expected as { originalLine: number }).originalLine,
          column: (expected as { originalColumn: number }).originalColumn,
        });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });
});
