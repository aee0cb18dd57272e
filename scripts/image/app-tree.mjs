// What goes into /opt/fjord in the image: the bundle users run (bin/fjord.js, dist/), the built
// console, and the production dependencies, with V8 code caches made by the image's own Node so
// the container's first start is as fast as later ones.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  if (result.status !== 0)
    throw new Error(`${cmd} ${args.slice(0, 3).join(' ')} … failed (${result.status ?? result.signal})`);
}

const versionOf = (modules, name) =>
  JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')).version;

/**
 * Native addons are compiled at install time (better-sqlite3 would download a prebuilt binary,
 * which this build must not): the checkout's compiled copy is taken instead, when it is the same
 * version. The image's Node is Node 20 like the checkout's, so the addon's ABI matches.
 */
function copyNativeAddons(repo, app) {
  for (const name of ['better-sqlite3']) {
    const from = join(repo, 'node_modules', name);
    const to = join(app, 'node_modules', name);
    if (!existsSync(to)) continue;
    if (
      !existsSync(join(from, 'build/Release')) ||
      versionOf(join(repo, 'node_modules'), name) !== versionOf(join(app, 'node_modules'), name)
    )
      throw new Error(`${name}: the checkout has no compiled copy of the locked version (run npm ci first)`);
    mkdirSync(join(to, 'build/Release'), { recursive: true });
    for (const file of readdirSync(join(from, 'build/Release')).filter((f) => f.endsWith('.node')))
      cpSync(join(from, 'build/Release', file), join(to, 'build/Release', file));
  }
}

/** Builds the bundle and console from `repo` and stages the app tree in `app` (made anew). */
export function stageApp(repo, app) {
  run(process.execPath, [join(repo, 'scripts/build.mjs')], { cwd: repo });
  rmSync(app, { recursive: true, force: true });
  mkdirSync(join(app, 'dist'), { recursive: true });
  const copy = (path) =>
    cpSync(join(repo, path), join(app, path), { recursive: true, preserveTimestamps: true });
  for (const path of [
    'package.json',
    'package-lock.json',
    'bin',
    'dist/fjord.cjs',
    'dist/fjord.cjs.map',
    'dist/console',
  ])
    copy(path);
  // Scripts off: the `prepare` script would rebuild from sources the image does not have, and
  // better-sqlite3's would download; its addon is copied below. --prefer-offline: npm's cache
  // already holds what `npm ci` fetched for the checkout.
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
    {
      cwd: app,
    },
  );
  copyNativeAddons(repo, app);
  // Without the lock file and src/, bin/fjord.js takes the bundle as it is (bin/bundle.js).
  rmSync(join(app, 'package-lock.json'));
  rmSync(join(app, 'node_modules/.package-lock.json'), { force: true });
}

/**
 * Writes the bundle's V8 code caches (bin/run-bundle.js) with the image's Node: a start that
 * reaches ready, and one command. Runs in a chroot of the image's root with `app` mounted at
 * /opt/fjord, in private mount, pid and network namespaces (only loopback, so nothing it binds is
 * reachable and no port can clash).
 */
export function writeCodeCaches(root, app) {
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
  const setup =
    'ip link set lo up && mount --bind "$1" "$2/opt/fjord" && mount -t proc proc "$2/proc" && exec chroot "$2" /bin/sh -ec "$3"';
  run('unshare', ['--mount', '--pid', '--net', '--fork', '/bin/sh', '-ec', setup, 'sh', app, root, inside], {
    env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' },
  });
  const caches = readdirSync(join(app, 'dist')).filter((f) => f.endsWith('.v8cache'));
  if (caches.length < 2) throw new Error(`code caches missing: ${caches.join(', ') || 'none'}`);
  // Written under Fjord's umask 077; the container's user must read them.
  for (const file of caches) chmodSync(join(app, 'dist', file), 0o644);
  return caches;
}
