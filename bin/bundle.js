// The bundle bin/fjord.js runs: dist/fjord.mjs, built from src/ by esbuild, with a source map so
// stack traces name the TypeScript files. The npm packages Fjord loads at every start are bundled
// too: resolving and reading ~60 packages' files one by one was a third of the start on a busy
// machine (bench/start.bench.ts measures it). Packages stay imports when they find files of their
// own at run time, are native, or are loaded only on demand and large (EXTERNAL).
import { readdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE = join(root, 'dist', 'fjord.mjs');
const SRC = join(root, 'src');
const LOCK = join(root, 'package-lock.json');

/**
 * Packages left as imports: native addons, packages that read their own files (static assets,
 * data, worker scripts) by path, and large ones loaded only when a feature is used.
 */
const EXTERNAL = [
  'better-sqlite3', // native addon
  'pino', // starts transports as worker threads from its own files
  '@fastify/swagger-ui', // serves its own static files
  '@scalar/fastify-api-reference', // serves its own static files
  '@ip-location-db/*', // data files
  'hls.js', // served as a file to browsers
  'gpt-tokenizer', // 1 MB of encodings, loaded on the first token count
  'acme-client', // loaded when a certificate is ordered
  'esbuild',
  'tsx',
  'typescript',
  'playwright-core',
];

/** The newest modification time under src/ (ms), or Infinity when src/ cannot be read. */
function newestSource(dir = SRC) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Whether dist/fjord.mjs exists and is at least as new as every source file and the lock file. */
export function bundleIsFresh() {
  try {
    const built = statSync(BUNDLE).mtimeMs;
    const lock = statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    return built >= newestSource() && built >= lock;
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
    external: EXTERNAL,
    // Bundled CommonJS packages call require() for Node's own modules and for files they load
    // late (ajv's runtime helpers): an ES module has none, so the bundle makes one.
    banner: {
      js: "import { createRequire as __fjordRequire } from 'node:module'; const require = __fjordRequire(import.meta.url);",
    },
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
  });
  renameSync(`${temp}.map`, `${BUNDLE}.map`);
  renameSync(temp, BUNDLE);
  return BUNDLE;
}
