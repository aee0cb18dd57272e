#!/usr/bin/env node
// Bundles Fjord's TypeScript sources into dist/fjord.cjs with esbuild (a dependency of tsx, so
// present wherever Fjord is installed), so `fjord` starts without compiling at every start:
// `npm ci` runs it (the `prepare` script), and bin/fjord.js runs it again when a source changed.
// Then checks the bundle: one that still calls import() would fail at run time under the code
// cache (bin/bundle-check.js), so it is removed and the build fails. It builds the web console
// too (console/build.mjs).
import { readFileSync, rmSync } from 'node:fs';
import { build } from '../bin/bundle.js';
import { refuseDynamicImports } from '../bin/bundle-check.js';
import { buildConsole } from '../console/build.mjs';

const started = performance.now();
const out = await build();
console.log(`built ${out} in ${Math.round(performance.now() - started)} ms`);

let ts = null;
try {
  ts = (await import('typescript')).default;
} catch {
  console.log('typescript is not installed (an install without dev dependencies): bundle not checked');
}
if (ts) {
  try {
    refuseDynamicImports(ts, readFileSync(out, 'utf8'), out);
  } catch (err) {
    rmSync(out, { force: true });
    console.error(`build refused: ${err.message}`);
    process.exit(1);
  }
  console.log('checked: the bundle calls no import()');
}

const consoleStarted = performance.now();
const consoleOut = await buildConsole();
console.log(`built ${consoleOut} in ${Math.round(performance.now() - consoleStarted)} ms`);
