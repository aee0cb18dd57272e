// The bundle bin/fjord.js runs: dist/fjord.cjs, built from src/ by esbuild, with a source map so
// stack traces name the TypeScript files (bin/stack-traces.js). CommonJS, because only a script
// can take a V8 code cache on Node 20 (bin/run-bundle.js). The npm packages Fjord loads at every start are bundled
// too: resolving and reading ~60 packages' files one by one was a third of the start on a busy
// machine (bench/start.bench.ts measures it). Packages stay imports when they find files of their
// own at run time, are native, or are loaded only on demand and large (EXTERNAL).
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheFilesOf } from './run-bundle.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE = join(root, 'dist', 'fjord.cjs');
const SRC = join(root, 'src');
const LOCK = join(root, 'package-lock.json');
const QUIET_DEBUG_FILE = join(root, 'bin', 'quiet-debug.cjs');

/**
 * Packages left as imports: native addons, packages that read their own files (static assets,
 * data, worker scripts) by path, and large ones loaded only when a feature is used.
 */
const EXTERNAL = [
  'better-sqlite3', // native addon
  'pino', // starts transports as worker threads from its own files
  '@scalar/fastify-api-reference', // serves its own static files
  '@ip-location-db/*', // data files
  'hls.js', // served as a file to browsers
  'ssh2', // optional native addons (its crypto binding, cpu-features) and a wasm module it loads by path
  'gpt-tokenizer', // 1 MB of encodings, loaded (its CommonJS build) on the first token count
  'acme-client', // loaded when a certificate is ordered
  'esbuild',
  'tsx',
  'typescript',
  'playwright-core',
];

/**
 * `require('debug')` resolves to bin/quiet-debug.cjs: loggers that cost nothing while DEBUG is
 * unset (mqtt-packet calls one about ten times per packet). Its own `require('debug/src/…')`
 * reaches the real package.
 */
const QUIET_DEBUG = {
  name: 'quiet-debug',
  setup(build) {
    build.onResolve({ filter: /^debug$/ }, () => ({ path: QUIET_DEBUG_FILE }));
  },
};

/**
 * The newest modification time under src/ (ms); 0 for an install without sources (the image ships
 * only the bundle, which is then all there is to run).
 */
function newestSource(dir = SRC) {
  if (dir === SRC && !existsSync(SRC)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Whether dist/fjord.cjs exists and is at least as new as every source file, the lock file and
 * the files of bin/ it is built with.
 */
export function bundleIsFresh() {
  try {
    const built = statSync(BUNDLE).mtimeMs;
    const inputs = [LOCK, QUIET_DEBUG_FILE].map((f) => statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0);
    return built >= newestSource() && inputs.every((t) => built >= t);
  } catch {
    return false;
  }
}

/** Builds dist/fjord.cjs; written beside and renamed, so a concurrent start never reads half a file. */
export async function build() {
  const esbuild = await import('esbuild');
  const temp = `${BUNDLE}.${process.pid}.tmp`;
  await esbuild.build({
    entryPoints: [join(SRC, 'main.ts')],
    outfile: temp,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: EXTERNAL,
    // Every import() becomes require(): under the code cache a vm.Script has no dynamic-import
    // callback on Node 20, so an import() left in the bundle throws at its first call (see
    // bin/bundle-check.js, which scripts/build.mjs runs on the result). Packages left EXTERNAL
    // must therefore have a CommonJS build.
    supported: { 'dynamic-import': false },
    // The sources are ES modules that find files beside themselves with import.meta.url: in the
    // bundle that is the bundle's own URL, as it was when the bundle was an ES module.
    define: { 'import.meta.url': '__fjordBundleUrl' },
    banner: { js: "const __fjordBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
    plugins: [QUIET_DEBUG],
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
  });
  renameSync(`${temp}.map`, `${BUNDLE}.map`);
  renameSync(temp, BUNDLE);
  for (const file of cacheFilesOf(BUNDLE)) rmSync(file, { force: true });
  // The ES-module bundle of earlier versions.
  for (const old of ['fjord.mjs', 'fjord.mjs.map']) rmSync(join(root, 'dist', old), { force: true });
  return BUNDLE;
}
