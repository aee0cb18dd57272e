/**
 * What the container-apps test files share: whether podman can run here, podman's flags, a tiny
 * busybox image built from a local root filesystem, a Fjord running the podman driver with its
 * ingress, requests through the ingress by host name, and the containers of an app.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Role } from '../../src/config/config-types.js';
import { TestFjord } from '../helpers/fjord.js';

/** Flags podman needs on these hosts (runc, cgroupfs, file events): see PITFALLS. */
export const PODMAN = ['--runtime', 'runc', '--cgroup-manager', 'cgroupfs', '--events-backend', 'file'];

/** Why the podman tier cannot run here, or null. */
export function podmanSkipReason(needs: string[] = []): string | null {
  for (const command of ['podman', ...needs])
    try {
      execFileSync(command, ['--version'], { stdio: 'pipe' });
    } catch {
      return `${command} is not installed (Debian: apt-get install podman runc busybox-static ${needs.join(' ')})`;
    }
  if (!existsSync('/bin/busybox') && !existsSync('/usr/bin/busybox'))
    return 'busybox-static is not installed';
  return null;
}

/**
 * Imports a busybox root filesystem as `image`, running `script` with sh -c. The root has /www,
 * /tmp and the applets `links` names (as symlinks to busybox); `files` are written into it.
 */
export function buildBusyboxImage(
  image: string,
  script: string,
  opts: { links?: string[]; files?: Record<string, { text: string; mode?: number }> } = {},
): void {
  const root = mkdtempSync(join(tmpdir(), 'fjord-apps-rootfs-'));
  const tar = `${root}.tar`;
  try {
    for (const dir of ['bin', 'www', 'tmp']) mkdirSync(join(root, dir));
    const busybox = existsSync('/bin/busybox') ? '/bin/busybox' : '/usr/bin/busybox';
    copyFileSync(busybox, join(root, 'bin/busybox'));
    chmodSync(join(root, 'bin/busybox'), 0o755);
    for (const applet of opts.links ?? ['sh']) symlinkSync('busybox', join(root, `bin/${applet}`));
    for (const [path, f] of Object.entries(opts.files ?? {})) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      execFileSync('tee', [join(root, path)], { input: f.text, stdio: ['pipe', 'ignore', 'inherit'] });
      chmodSync(join(root, path), f.mode ?? 0o644);
    }
    execFileSync('tar', ['-C', root, '-cf', tar, '.']);
    execFileSync('podman', [
      ...PODMAN,
      'import',
      '--change',
      `CMD ["/bin/busybox", "sh", "-c", ${JSON.stringify(script)}]`,
      tar,
      image,
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(tar, { force: true });
  }
}

/** The rate limit of container-apps routes, raised so tests are never refused for their pace. */
const RATE_LIMITS = JSON.stringify({ 'container-apps': { points: 10_000, duration: 60 } });

/** Settings that let revisions name the images tests build locally (`localhost/fjord-apps-test/…`). */
export const LOCAL_TEST_IMAGES = {
  FJORD_APPS_IMAGE_REGISTRIES: 'localhost/fjord-apps-test',
  FJORD_APPS_IMAGE_ALLOW_PRIVATE: 'true',
};

/** A Fjord with the simulated driver (the default). */
export const simulatedFjord = () => TestFjord.create({ FJORD_RATE_LIMITS: RATE_LIMITS });

/** A Fjord with the podman driver, its API and ingress listening on free ports. */
export async function podmanFjord(env: Record<string, string> = {}, roles: Role[] = ['api']) {
  const t = await TestFjord.create({
    FJORD_APPS_DRIVER: 'podman',
    FJORD_APPS_INGRESS_PORT: '0',
    FJORD_APPS_INGRESS_TLS_PORT: '0',
    FJORD_API_PORT: '0',
    FJORD_RATE_LIMITS: RATE_LIMITS,
    // Test images are built into podman's local store under this name, never pulled.
    ...LOCAL_TEST_IMAGES,
    ...env,
  });
  await t.fjord.start(roles);
  const portOf = (protocol: string, role?: string) => {
    const l = t.kernel.registry.listeners.find((x) => x.protocol === protocol && (!role || x.role === role));
    return Number(l!.address.split(':').pop());
  };
  return {
    t,
    ingressPort: portOf('http (apps ingress)'),
    tlsPort: portOf('https (apps ingress)'),
    apiPort: portOf('http', 'api'),
  };
}

/** A GET through the ingress on `port` with a chosen Host header. */
export function viaIngress(
  port: number,
  host: string,
  path = '/',
): Promise<{ status: number; body: string; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body,
          retryAfter: res.headers['retry-after'] as string | undefined,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** The ids of an app's containers, running or not. */
export const containersOf = (appId: string) =>
  execFileSync('podman', [...PODMAN, 'ps', '-aq', '--filter', `label=fjord.app=${appId}`], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .filter(Boolean);

/**
 * Removes the customer networks a test's Fjord made and no container uses any more (tests remove
 * containers directly, so the driver's own removal with the last app does not always run).
 */
export function removeNetworks(t: TestFjord | undefined): void {
  if (!t) return;
  const owner = createHash('sha256').update(t.kernel.config.dataDir).digest('hex').slice(0, 16);
  spawnSync('podman', [...PODMAN, 'network', 'prune', '-f', '--filter', `label=fjord.owner=${owner}`]);
}

/**
 * Removes the apps' containers a test left (a failed test may leave some). podman's `rm` can meet
 * the container's shm mount still held for a moment while another podman works beside it
 * ("unlinkat …/userdata/shm: device or resource busy"): tried again a few times before it fails.
 */
export function removeContainers(appIds: string[]): void {
  for (const id of appIds) {
    for (let attempt = 1; ; attempt++) {
      const ids = containersOf(id);
      if (!ids.length) break;
      const r = spawnSync('podman', [...PODMAN, 'rm', '-f', '-t', '0', ...ids], { encoding: 'utf8' });
      if (r.status === 0) break;
      if (attempt === 5 || !/resource busy/.test(r.stderr)) throw new Error(`podman rm failed: ${r.stderr}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500 * attempt);
    }
  }
}
