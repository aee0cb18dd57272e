// The bundle bin/fjord.js runs: dist/fjord.mjs, built from src/ by esbuild (npm packages stay
// imports), with a source map so stack traces name the TypeScript files.
import { readdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE = join(root, 'dist', 'fjord.mjs');
const SRC = join(root, 'src');

/** The newest modification time under src/ (ms), or Infinity when src/ cannot be read. */
function newestSource(dir = SRC) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Whether dist/fjord.mjs exists and is at least as new as every source file. */
export function bundleIsFresh() {
  try {
    return statSync(BUNDLE).mtimeMs >= newestSource();
  } catch {
    return false;
  }
}

/** Builds dist/fjord.mjs; written beside and renamed, so a concurrent start never reads half a file. */
export async function build() {
  const esbuild = await import('esbuild');
  const temp = `${BUNDLE}.${process.pid}.tmp`;
  await esbuild.build({
    entryPoints: [join(SRC, 'main.ts')],
    outfile: temp,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
  });
  renameSync(`${temp}.map`, `${BUNDLE}.map`);
  renameSync(temp, BUNDLE);
  return BUNDLE;
}
