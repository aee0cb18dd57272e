// Runs the CommonJS bundle (dist/fjord.cjs) with a V8 code cache beside it. Compiling the 7 MB
// bundle's functions was a third of Fjord's start (bench/start.bench.ts); Node 20 offers no code
// cache for modules it loads itself, so the bundle runs as a vm.Script, which takes V8's cached
// data and can produce it.
//
// The cache is written once per bundle and kind of run ("start" or "command"), after a start is
// ready (so it holds every function the start compiled) or when a command exits. V8 checks only a
// cache's length and flags against the source, so the bundle's size and modification time are in
// the cache's name, and a new build removes old caches (bin/bundle.js).
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import vm from 'node:vm';

/** Cache files of `bundle` (any build, any kind), for removal when the bundle is rebuilt. */
export function cacheFilesOf(bundle) {
  const dir = dirname(bundle);
  const prefix = `${basename(bundle)}.`;
  try {
    return readdirSync(dir)
      .filter((f) => f.startsWith(prefix) && f.endsWith('.v8cache'))
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** Writes `data` to `file` whole or not at all: concurrent starts may race to write the same cache. */
function writeAtomically(file, data) {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, data);
    renameSync(temp, file);
  } catch {
    rmSync(temp, { force: true }); // a read-only install runs without a cache
  }
}

/**
 * Runs `bundle` as the main module. `kind` names the cache: a server start and a one-off command
 * compile different functions. Returns whether a cache was read and taken by V8.
 */
export function runBundle(bundle, kind) {
  const source = readFileSync(bundle, 'utf8');
  const { size, mtimeMs } = statSync(bundle);
  const cacheFile = `${bundle}.${kind}.${size}-${Math.trunc(mtimeMs)}.v8cache`;
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // The wrapper opens on the bundle's first line so line numbers (and the source map) still match.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundle,
    cachedData,
    // Bundled code still calls import() for ES-module-only packages left outside the bundle.
    importModuleDynamically:
      vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER ?? ((specifier) => import(specifier)),
  });
  if (!cachedData || script.cachedDataRejected) {
    let written = false;
    const writeCache = () => {
      if (written) return;
      written = true;
      writeAtomically(cacheFile, script.createCachedData());
    };
    // A server says when it is ready (src/main.ts); a command's functions are all known at exit.
    process.once('fjord:ready', () => setImmediate(writeCache));
    process.once('exit', writeCache);
  }
  const module = { exports: {}, filename: bundle, id: '.', loaded: false };
  const require = createRequire(bundle);
  const cacheUsed = Boolean(cachedData) && !script.cachedDataRejected;
  script.runInThisContext()(module.exports, require, module, bundle, dirname(bundle));
  return cacheUsed;
}
