// The image's Debian root: debootstrap from the Debian mirror, then the Debian packages Fjord
// drives inside the image, installed with apt in a chroot. Slow the first time (every package is
// downloaded), so each root is kept in the cache directory under a key made of everything that
// shapes it: a later build with the same key starts from the kept root.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/**
 * Debian 13: the release whose own `nodejs` is Node 20 (Debian 12 ships 18), so Node comes from
 * the Debian mirror like everything else in the image.
 */
export const SUITE = 'trixie';

/** What Fjord's areas run inside the image (the VPS and container-app drivers stay on the host). */
export const PACKAGES = [
  'nodejs', // Node 20
  'tini', // PID 1: forwards signals, reaps the children Fjord supervises
  'ca-certificates', // upstream S3, LLM and webhook targets over HTTPS
  'ffmpeg', // live events (RTMP ingest to HLS), speech uploads, the reference GPU worker
  'pocketsphinx', // speech recognition
  'pocketsphinx-en-us', // …its US English model
  'flite', // speech synthesis
  'postgresql', // embedded PostgreSQL databases (initdb, pg_ctl, psql, pg_dump)
  'mariadb-server', // embedded MariaDB databases (mariadbd, mariadb-install-db, mariadb)
  'openssh-client', // ssh-keygen checks the SSH keys customers upload
];

/** The user Fjord runs as: a fixed id, so a host directory mounted as the data volume can be chowned to it. */
export const FJORD_UID = 1000;

/** Bump when the steps below change, so roots made by older steps are not reused. */
const RECIPE = 2;

const ENV = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  DEBIAN_FRONTEND: 'noninteractive',
  LANG: 'C.UTF-8',
  HOME: '/root',
};

/** The cache key of a root: a hash of the suite, the package list, the mirrors and the recipe. */
export function baseKey(mirrors) {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ RECIPE, SUITE, PACKAGES, FJORD_UID, mirrors }));
  return hash.digest('hex').slice(0, 16);
}

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  if (result.status !== 0)
    throw new Error(`${cmd} ${args.slice(0, 3).join(' ')} … failed (${result.status ?? result.signal})`);
}

/**
 * Runs a shell script in a chroot of `root`, with its own mount and pid namespaces and /proc, and
 * `debCache` as apt's package cache (kept between builds, so a changed package list downloads only
 * what is new). The mounts end with the namespace.
 */
function inChroot(root, debCache, script) {
  const archives = join(root, 'var/cache/apt/archives');
  const setup = `mount --bind "$1" "$2" && mount -t proc proc "$3/proc" && exec chroot "$3" /bin/sh -ec "$4"`;
  run(
    'unshare',
    ['--mount', '--pid', '--fork', '/bin/sh', '-ec', setup, 'sh', debCache, archives, root, script],
    {
      env: ENV,
    },
  );
}

/** Sources for apt inside the root: the release, its updates and, where apt has one, security. */
function sourcesList(mirrors) {
  const lines = [`deb ${mirrors.archive} ${SUITE} main`, `deb ${mirrors.archive} ${SUITE}-updates main`];
  if (mirrors.security) lines.push(`deb ${mirrors.security} ${SUITE}-security main`);
  return `${lines.join('\n')}\n`;
}

/** Makes the root in `dir` (which must not exist). */
function makeRoot(dir, mirrors, debCache) {
  mkdirSync(debCache, { recursive: true });
  run('debootstrap', ['--variant=minbase', `--cache-dir=${debCache}`, SUITE, dir, mirrors.archive]);
  writeFileSync(join(dir, 'etc/apt/sources.list'), sourcesList(mirrors));
  // No service starts at install time, and PostgreSQL's package makes no cluster of its own:
  // Fjord makes its engines' data directories itself.
  writeFileSync(join(dir, 'usr/sbin/policy-rc.d'), '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  mkdirSync(join(dir, 'etc/postgresql-common'), { recursive: true });
  writeFileSync(join(dir, 'etc/postgresql-common/createcluster.conf'), 'create_main_cluster = false\n');
  // Manuals and translations are of no use in a server image (licences are kept).
  writeFileSync(
    join(dir, 'etc/dpkg/dpkg.cfg.d/01-fjord-image'),
    [
      'path-exclude=/usr/share/doc/*',
      'path-include=/usr/share/doc/*/copyright',
      'path-exclude=/usr/share/man/*',
      'path-exclude=/usr/share/info/*',
      'path-exclude=/usr/share/locale/*',
      '',
    ].join('\n'),
  );
  copyFileSync('/etc/resolv.conf', join(dir, 'etc/resolv.conf'));
  mkdirSync(join(debCache, 'partial'), { recursive: true });
  inChroot(
    dir,
    debCache,
    [
      'apt-get update -q',
      `apt-get install -y -q --no-install-recommends -o Dpkg::Options::=--force-confold ${PACKAGES.join(' ')}`,
      // The data dir is its home, made empty and private (no /etc/skel files Fjord would have to tighten).
      `useradd --uid ${FJORD_UID} --user-group --home-dir /var/lib/fjord --no-create-home --shell /usr/sbin/nologin fjord`,
      'install -d -o fjord -g fjord -m 0700 /var/lib/fjord',
      'mkdir -p /opt/fjord',
      'rm -rf /var/lib/apt/lists/* /var/cache/debconf/*-old /var/log/apt /var/log/dpkg.log /var/log/alternatives.log',
      'rm -rf /usr/share/doc/*/changelog* /usr/share/man /usr/share/info',
    ].join('\n'),
  );
  rmSync(join(dir, 'usr/sbin/policy-rc.d'));
  // The container's resolver is written by the runtime.
  writeFileSync(join(dir, 'etc/resolv.conf'), '');
}

/**
 * The kept root for this package list and mirror, made when missing. Returns `{ root, key, made,
 * removed }`. Roots of other keys unused for `keepDays` are removed (their keys in `removed`), so a
 * machine keeps a few at most.
 */
export function ensureBaseRoot({ cacheDir, mirrors, keepDays = 7 }) {
  const key = baseKey(mirrors);
  const roots = join(cacheDir, 'roots');
  const root = join(roots, key);
  mkdirSync(roots, { recursive: true });
  let made = false;
  if (!existsSync(join(root, 'etc/os-release'))) {
    const temp = join(roots, `${key}.partial-${process.pid}`);
    rmSync(temp, { recursive: true, force: true });
    try {
      makeRoot(temp, mirrors, join(cacheDir, 'debs'));
      rmSync(root, { recursive: true, force: true });
      renameSync(temp, root);
      made = true;
    } catch (err) {
      rmSync(temp, { recursive: true, force: true });
      throw err;
    }
  }
  const now = new Date();
  utimesSync(root, now, now);
  const removed = [];
  for (const name of readdirSync(roots)) {
    if (name === key) continue;
    const path = join(roots, name);
    const idleDays = (Date.now() - statSync(path).mtimeMs) / 86_400_000;
    // A partial root of a build that died, or a root no build has used for a while.
    if (idleDays > keepDays || (name.includes('.partial-') && idleDays > 1)) {
      rmSync(path, { recursive: true, force: true });
      if (!name.includes('.partial-')) removed.push(name);
    }
  }
  return { root, key, made, removed };
}
