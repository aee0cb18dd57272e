#!/usr/bin/env node
// The npm registry this project installs from lacks some platform-specific optional packages
// (e.g. @biomejs/cli-darwin-x64, @rollup/rollup-win32-x64-msvc: 404). `npm install` then leaves
// them out of package-lock.json, and `npm ci` refuses the lock as "Missing: … from lock file".
// This script adds a lock entry for each such package with the os/cpu/libc its name states, so
// `npm ci` sees a complete lock and skips them on this platform, as it would anyway.
//
//   node scripts/lock-platform-stubs.mjs      (after any `npm install` that rewrote the lock)

import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const packages = lock.packages;

const OSES = [
  'android',
  'darwin',
  'linux',
  'win32',
  'freebsd',
  'openbsd',
  'openharmony',
  'netbsd',
  'sunos',
  'aix',
];
const CPUS = ['arm64', 'x64', 'arm', 'ia32', 'loong64', 'ppc64', 'riscv64', 's390x', 'mips64el'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OSES.includes(p));
  const cpu = parts.find((p) => CPUS.includes(p));
  if (!os || !cpu) return null;
  const entry = { os: [os], cpu: [cpu] };
  if (os === 'linux') entry.libc = [parts.some((p) => p.startsWith('musl')) ? 'musl' : 'glibc'];
  return entry;
}

let added = 0;
for (const [path, pkg] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    const at = `node_modules/${dep}`;
    if (packages[at] || packages[`${path}/${at}`]) continue;
    const platform = platformOf(dep);
    if (!platform) continue;
    packages[at] = { version, ...(pkg.dev ? { dev: true } : {}), optional: true, ...platform };
    added++;
  }
}
const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-platform-stubs: added ${added} platform entries`);
