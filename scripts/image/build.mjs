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
// localhost/fjord-base:<key>, and the production dependencies added to it once per lock file as
// localhost/fjord-deps:<key>-<key>; later builds redo only the app layer. Prints where the time went.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

/** Hard-links `file` into the build context `dir` (copies it where the two are on different disks). */
function intoContext(file, dir, name) {
  try {
    linkSync(file, join(dir, name));
  } catch {
    copyFileSync(file, join(dir, name));
  }
}

/**
 * The base image with the production dependencies added, built once per base and lock file as
 * localhost/fjord-deps:<base key>-<modules key>. Its own image, not a cached step of the app's
 * build: podman checks a cached ADD step by hashing the whole archive again (~400 MB, 8 s of CPU
 * on every build), while `image exists` answers at once. Images of another base, or of an install
 * the cache no longer keeps, go.
 */
function ensureDepsImage(baseImage, baseKey, modules, keptModules) {
  const wanted = `${baseKey}-${modules.key}`;
  const name = `localhost/fjord-deps:${wanted}`;
  for (const tag of podman(['images', '--format', '{{.Tag}}', '--filter', 'reference=localhost/fjord-deps'], {
    stdio: ['ignore', 'pipe', 'ignore'],
    encoding: 'utf8',
  })
    .stdout.split('\n')
    .filter(Boolean)) {
    const [b, m] = tag.split('-');
    if (tag !== wanted && (b !== baseKey || !keptModules(m)))
      podman(['rmi', '--force', `localhost/fjord-deps:${tag}`], { stdio: 'ignore' });
  }
  if (podman(['image', 'exists', name], { stdio: 'ignore' }).status === 0) return { name, made: false };
  const context = mkdtempSync(join(tmpdir(), 'fjord-deps-'));
  try {
    intoContext(modules.tar, context, 'fjord-modules.tar');
    writeFileSync(join(context, 'Containerfile'), `FROM ${baseImage}\nADD fjord-modules.tar /opt/fjord/\n`);
    mustPodman(['build', '--quiet', '--tag', name, context], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return { name, made: true };
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
  const keptModules = (key) => existsSync(join(cacheDir, 'modules', key));
  const depsImage = step('dependencies image', () =>
    ensureDepsImage(baseImage.name, base.key, modules, keptModules),
  );
  times.at(-1)[0] += depsImage.made ? ' (built)' : ' (cached)';
  const work = mkdtempSync(join(tmpdir(), 'fjord-image-'));
  try {
    const app = join(work, 'app');
    step('bundle', () => stageApp(repo, app));
    step('code caches', () => writeCodeCaches(base.root, app, modules.dir));
    step('layers', () => {
      appTar(app, join(work, 'fjord-app.tar'));
      mustPodman(
        [
          'build',
          '--quiet',
          '--layers',
          '--file',
          join(repo, 'deploy/Containerfile'),
          '--build-arg',
          `BASE=${depsImage.name}`,
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
  console.log(`image ${tag} built in ${total.toFixed(1)} s (base ${depsImage.name})`);
  return { tag, base: depsImage.name, seconds: total, baseMade: base.made };
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
