#!/usr/bin/env node
// `npm run image`: builds Fjord's OCI image into podman's local storage with no registry but
// Debian's mirror (the one apt uses here) and npm's. Needs root, debootstrap and podman.
//
//   node scripts/image/build.mjs [--tag NAME] [--save FILE]
//
//   --tag NAME   the image's name (default localhost/fjord:latest)
//   --save FILE  also write it as an archive for `docker load` / `podman load`
//
// The Debian root (the slow part) is kept in FJORD_IMAGE_CACHE (default /var/cache/fjord-image)
// under a key of its package list and mirror, and imported into podman once as
// localhost/fjord-base:<key>; later builds redo only the app layer. Prints where the time went.
import { spawnSync } from 'node:child_process';
import { copyFileSync, linkSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { appTar, ensureModules, stageApp, writeCodeCaches } from './app-tree.mjs';
import { ensureBaseRoot } from './base-root.mjs';
import { debianMirrors } from './mirror.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** podman's global flags that work on hosts without a cgroup v2 systemd (docs/deploy.md). */
const PODMAN = ['--runtime', 'runc', '--cgroup-manager', 'cgroupfs', '--events-backend', 'file'];

function podman(args, options = {}) {
  return spawnSync('podman', [...PODMAN, ...args], { stdio: ['ignore', 'inherit', 'inherit'], ...options });
}

function mustPodman(args, options) {
  const result = podman(args, options);
  if (result.status !== 0) throw new Error(`podman ${args[0]} failed (${result.status ?? result.signal})`);
}

/** Imports the kept root into podman as the base image, unless an earlier build did. */
function ensureBaseImage(root, key) {
  const name = `localhost/fjord-base:${key}`;
  if (podman(['image', 'exists', name], { stdio: 'ignore' }).status === 0) return { name, imported: false };
  const tar = spawnSync(
    'sh',
    [
      '-ec',
      `tar --numeric-owner --xattrs -C "$1" -cf - . | podman ${PODMAN.join(' ')} import - "$2" > /dev/null`,
      'sh',
      root,
      name,
    ],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  if (tar.status !== 0) throw new Error('podman import of the Debian root failed');
  return { name, imported: true };
}

export function buildImage({ tag = 'localhost/fjord:latest', save = null, env = process.env } = {}) {
  if (process.getuid?.() !== 0) throw new Error('the image build needs root (debootstrap, chroot)');
  const times = [];
  const step = (label, fn) => {
    const started = performance.now();
    const result = fn();
    times.push([label, (performance.now() - started) / 1000]);
    return result;
  };
  const started = performance.now();
  const cacheDir = env.FJORD_IMAGE_CACHE || '/var/cache/fjord-image';
  const mirrors = debianMirrors(env);
  const base = step('debian root', () => ensureBaseRoot({ cacheDir, mirrors }));
  times.at(-1)[0] += base.made ? ` (made, ${mirrors.archive})` : ' (cached)';
  // Base images of roots the cache no longer keeps go too.
  for (const old of base.removed)
    podman(['rmi', '--force', `localhost/fjord-base:${old}`], { stdio: 'ignore' });
  const baseImage = step('base image', () => ensureBaseImage(base.root, base.key));
  times.at(-1)[0] += baseImage.imported ? ' (imported)' : ' (cached)';
  const modules = step('dependencies', () => ensureModules(repo, cacheDir));
  times.at(-1)[0] += modules.made ? ' (npm ci --omit=dev)' : ' (cached)';
  const work = mkdtempSync(join(tmpdir(), 'fjord-image-'));
  try {
    const app = join(work, 'app');
    step('bundle', () => stageApp(repo, app));
    step('code caches', () => writeCodeCaches(base.root, app, modules.dir));
    step('layers', () => {
      appTar(app, join(work, 'fjord-app.tar'));
      // The build context must hold the archive: a hard link where the cache is on the same disk.
      try {
        linkSync(modules.tar, join(work, 'fjord-modules.tar'));
      } catch {
        copyFileSync(modules.tar, join(work, 'fjord-modules.tar'));
      }
      mustPodman(
        [
          'build',
          '--quiet',
          '--layers',
          '--file',
          join(repo, 'deploy/Containerfile'),
          '--build-arg',
          `BASE=${baseImage.name}`,
          '--tag',
          tag,
          work,
        ],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );
    });
    if (save) {
      rmSync(save, { force: true });
      step('archive', () => mustPodman(['save', '--format', 'docker-archive', '--output', save, tag]));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const total = (performance.now() - started) / 1000;
  for (const [label, seconds] of times)
    console.log(`  ${label.padEnd(48)} ${seconds.toFixed(1).padStart(7)} s`);
  console.log(`image ${tag} built in ${total.toFixed(1)} s (base ${baseImage.name})`);
  return { tag, base: baseImage.name, seconds: total, baseMade: base.made };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { tag: { type: 'string' }, save: { type: 'string' } } });
  try {
    buildImage({ tag: values.tag, save: values.save ?? null });
  } catch (err) {
    console.error(`image build failed: ${err.message}`);
    process.exit(1);
  }
}
