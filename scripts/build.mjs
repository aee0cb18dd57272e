#!/usr/bin/env node
// Bundles Fjord's TypeScript sources into dist/fjord.cjs with esbuild (a dependency of tsx, so
// present wherever Fjord is installed), so `fjord` starts without compiling at every start:
// `npm ci` runs it (the `prepare` script), and bin/fjord.js runs it again when a source changed.
// It builds the web console too (console/build.mjs).
import { build } from '../bin/bundle.js';
import { buildConsole } from '../console/build.mjs';

const started = performance.now();
const out = await build();
console.log(`built ${out} in ${Math.round(performance.now() - started)} ms`);
const consoleStarted = performance.now();
const consoleOut = await buildConsole();
console.log(`built ${consoleOut} in ${Math.round(performance.now() - consoleStarted)} ms`);
