// What goes into /opt/fjord in the image: the bundle users run (bin/fjord.js, dist/), the built
// console, and the production dependencies, with V8 code caches made by the image's own Node so
// the container's first start is as fast as later ones. The dependencies change only with the
// lock file: they are installed once per lock into the cache directory and go into a layer of
// their own, which podman reuses while its archive is byte for byte the same.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { join } from 'node:path';

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  if (result.status !== 0)
    throw new Error(`${cmd} ${args.slice(0, 3).join(' ')} … failed (${result.status ?? result.signal})`);
}

const versionOf = (modules, name) =>
  JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')).version;

/** Packages with a native addon, compiled at install time. */
const NATIVE = ['better-sqlite3'];

/**
 * Native addons are compiled at install time (better-sqlite3 would download a prebuilt binary,
 * which this build must not): the checkout's compiled copy is taken instead, when it is the same
 * version. The image's Node is Node 20 like the checkout's, so the addon's ABI matches.
 */
function copyNativeAddons(repo, target) {
  for (const name of NATIVE) {
    const from = join(repo, 'node_modules', name);
    const to = join(target, 'node_modules', name);
    if (!existsSync(to)) continue;
    if (
      !existsSync(join(from, 'build/Release')) ||
      versionOf(join(repo, 'node_modules'), name) !== versionOf(join(target, 'node_modules'), name)
    )
      throw new Error(`${name}: the checkout has no compiled copy of the locked version (run npm ci first)`);
    mkdirSync(join(to, 'build/Release'), { recursive: true });
    for (const file of readdirSync(join(from, 'build/Release')).filter((f) => f.endsWith('.node')))
      cpSync(join(from, 'build/Release', file), join(to, 'build/Release', file), {
        preserveTimestamps: true,
      });
  }
}

/** A tar of `dir` that is the same bytes for the same files: sorted, numeric root owner, kept mtimes. */
function tarOf(dir, out, exclude = []) {
  const args = ['--sort=name', '--numeric-owner', '--owner=0', '--group=0', '-C', dir, '-cf', out];
  for (const pattern of exclude) args.push(`--exclude=${pattern}`);
  run('tar', [...args, '.']);
}

/**
 * The production dependencies of the checkout's lock file, kept in `cacheDir/modules/<key>` (made
 * when missing): `{ key, dir, tar, made }`, `dir` holding node_modules, `tar` its archive and `key`
 * a hash of the lock file and the addon ABI.
 */
export function ensureModules(repo, cacheDir) {
  const hash = createHash('sha256');
  hash.update(readFileSync(join(repo, 'package-lock.json')));
  hash.update(process.versions.modules); // the native addon's ABI
  for (const name of NATIVE) hash.update(readFileSync(join(repo, 'node_modules', name, 'package.json')));
  const key = hash.digest('hex').slice(0, 16);
  const kept = join(cacheDir, 'modules', key);
  const tar = join(kept, 'node_modules.tar');
  let made = false;
  if (!existsSync(tar)) {
    const temp = `${kept}.partial-${process.pid}`;
    rmSync(temp, { recursive: true, force: true });
    mkdirSync(temp, { recursive: true });
    try {
      for (const file of ['package.json', 'package-lock.json']) cpSync(join(repo, file), join(temp, file));
      // Scripts off: the `prepare` script would build from sources, and better-sqlite3's would
      // download; its addon is copied below. --prefer-offline: npm's cache already holds what
      // `npm ci` fetched for the checkout.
      run(
        'npm',
        [
          'ci',
          '--omit=dev',
          '--ignore-scripts',
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
          '--loglevel=error',
        ],
        { cwd: temp },
      );
      copyNativeAddons(repo, temp);
      rmSync(join(temp, 'node_modules/.package-lock.json'), { force: true });
      mkdirSync(join(temp, 'layer'));
      renameSync(join(temp, 'node_modules'), join(temp, 'layer/node_modules'));
      tarOf(join(temp, 'layer'), join(temp, 'node_modules.tar'));
      rmSync(kept, { recursive: true, force: true });
      renameSync(temp, kept);
      made = true;
    } catch (err) {
      rmSync(temp, { recursive: true, force: true });
      throw err;
    }
  }
  const now = new Date();
  utimesSync(kept, now, now);
  // Installs for other lock files unused for a week go.
  for (const name of readdirSync(join(cacheDir, 'modules'))) {
    const path = join(cacheDir, 'modules', name);
    if (name !== key && (Date.now() - statSync(path).mtimeMs) / 86_400_000 > 7)
      rmSync(path, { recursive: true, force: true });
  }
  return { key, dir: join(kept, 'layer/node_modules'), tar, made };
}

/** Builds the bundle and console from `repo` and stages them in `app` (made anew), without node_modules. */
export function stageApp(repo, app) {
  run(process.execPath, [join(repo, 'scripts/build.mjs')], { cwd: repo });
  rmSync(app, { recursive: true, force: true });
  mkdirSync(join(app, 'dist'), { recursive: true });
  for (const path of ['package.json', 'bin', 'dist/fjord.cjs', 'dist/fjord.cjs.map', 'dist/console'])
    cpSync(join(repo, path), join(app, path), { recursive: true, preserveTimestamps: true });
  // Without src/ and the lock file, bin/fjord.js takes the bundle as it is (bin/bundle.js).
}

/**
 * Writes the bundle's V8 code caches (bin/run-bundle.js) with the image's Node: a start that
 * reaches ready, and one command. Runs in a chroot of the image's root with `app` mounted at
 * /opt/fjord and `modules` as its node_modules, in private mount, pid and network namespaces
 * (only loopback, so nothing it binds is reachable and no port can clash).
 */
export function writeCodeCaches(root, app, modules) {
  const inside = [
    'export HOME=/tmp FJORD_DATA_DIR="$(mktemp -d)"',
    'cd /opt/fjord',
    'node bin/fjord.js start > "$FJORD_DATA_DIR.log" 2>&1 & pid=$!',
    'i=0',
    'until ls dist/fjord.cjs.start.*.v8cache > /dev/null 2>&1; do',
    '  kill -0 $pid 2> /dev/null || { cat "$FJORD_DATA_DIR.log"; exit 1; }',
    '  i=$((i + 1)); [ $i -lt 1200 ] || { echo "no start cache after 120 s"; cat "$FJORD_DATA_DIR.log"; exit 1; }',
    '  sleep 0.1',
    'done',
    'kill $pid; wait $pid || true',
    'node bin/fjord.js openapi > /dev/null',
    'rm -rf "$FJORD_DATA_DIR" "$FJORD_DATA_DIR.log"',
  ].join('\n');
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  const setup = [
    'ip link set lo up',
    'mount --bind "$1" "$3/opt/fjord"',
    'mount --bind -o ro "$2" "$3/opt/fjord/node_modules"',
    'mount -t proc proc "$3/proc"',
    'exec chroot "$3" /bin/sh -ec "$4"',
  ].join(' && ');
  try {
    run(
      'unshare',
      ['--mount', '--pid', '--net', '--fork', '/bin/sh', '-ec', setup, 'sh', app, modules, root, inside],
      {
        env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' },
      },
    );
  } finally {
    rmSync(join(app, 'node_modules'), { recursive: true, force: true });
  }
  const caches = readdirSync(join(app, 'dist')).filter((f) => f.endsWith('.v8cache'));
  if (caches.length < 2) throw new Error(`code caches missing: ${caches.join(', ') || 'none'}`);
  // Written under Fjord's umask 077; the container's user must read them.
  for (const file of caches) chmodSync(join(app, 'dist', file), 0o644);
  return caches;
}

/** The app's archive (everything but node_modules, which has its own layer). */
export function appTar(app, out) {
  tarOf(app, out, ['./node_modules']);
}
