import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandPath } from './commands.js';

/**
 * Fjord's image as `npm run image` builds it, for the tests that run it with podman. podman here
 * needs runc, cgroupfs and lower ulimits than Debian's defaults (crun and raised rlimits fail on
 * these machines); a containers.conf says so, for the podman command and its Docker-compatible
 * API service alike.
 */
const ROOT = new URL('../../', import.meta.url).pathname;

/** Why the image cannot be built and run here, or null. */
export function imageSkipReason(extra: string[] = []): string | null {
  if (process.getuid?.() !== 0) return 'building the image needs root (debootstrap, chroot, podman import)';
  for (const command of ['podman', 'runc', 'debootstrap', 'unshare', 'ip', ...extra])
    if (!commandPath(command)) return `${command} is not installed (Debian packages in scripts/test.mjs)`;
  return null;
}

/** A containers.conf for podman on hosts like CI's (hybrid cgroups, limited rlimits). */
export function podmanConf(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-podman-conf-'));
  const file = join(dir, 'containers.conf');
  writeFileSync(
    file,
    [
      '[containers]',
      'default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]',
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      '',
    ].join('\n'),
  );
  return file;
}

/**
 * Builds the image under `tag` with `npm run image`'s script and prints its report (where the time
 * went), so CI's log shows what the build cost. Rejects with the build's output when it fails.
 * Asynchronous: a build takes minutes, and the test worker must keep answering its runner.
 */
export function buildImage(tag: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts/image/build.mjs'), '--tag', tag], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`image build failed (${code}):\n${output.slice(-6000)}`));
      const report = output.split('\n').filter((l) => /^\s{2}\S.*\d s$|^image /.test(l));
      console.log(report.join('\n'));
      resolve(output);
    });
  });
}

/** Runs podman with the containers.conf above. */
export function podman(conf: string, args: string[], timeout = 120_000) {
  return spawnSync('podman', args, {
    encoding: 'utf8',
    timeout,
    env: { ...process.env, CONTAINERS_CONF: conf },
  });
}

/** The host port podman published `containerPort` ("8080/tcp") of `container` on. */
export function publishedPort(conf: string, container: string, containerPort: string): number {
  const out = podman(conf, ['port', container, containerPort]).stdout.trim();
  const port = Number(out.split('\n')[0]?.split(':').pop());
  if (!port) throw new Error(`${containerPort} of ${container} is not published: ${out}`);
  return port;
}
