#!/usr/bin/env -S node --initial-heap-size=128
// (Node's flags here and in `npm start`, the image and the systemd unit: docs/configuration.md,
// "Node's heap at start"; test/kernel/deploy.test.ts keeps them the same.)
// Runs Fjord from dist/fjord.cjs, a bundle of the TypeScript sources (bin/bundle.js): built by
// `npm ci`, and built again here in ~0.1 s whenever a file under src/ is newer. Without esbuild
// (or with FJORD_FROM_SOURCE=1) it runs the sources through tsx instead, compiling at each start.
import { BUNDLE, build, bundleIsFresh } from './bundle.js';

let entry = null;
if (!['1', 'true', 'yes', 'on'].includes((process.env.FJORD_FROM_SOURCE ?? '').toLowerCase())) {
  try {
    if (!bundleIsFresh()) await build();
    entry = BUNDLE;
  } catch {
    entry = null; // no esbuild, or a read-only install: the sources still run through tsx
  }
}
if (entry) {
  const [{ runBundle }, { mapStackTraces }] = await Promise.all([
    import('./run-bundle.js'),
    import('./stack-traces.js'),
  ]);
  mapStackTraces(entry);
  runBundle(entry, process.argv[2] === 'start' ? 'start' : 'command');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
