/**
 * Where the podman driver keeps volumes: each one an ext4 file system in an image file of the
 * volume's size, loop-mounted at its directory, which instances bind-mount — so a write past the
 * size fails with ENOSPC inside the container. Where loop mounts cannot be made (no root, no loop
 * devices) a volume is a plain directory: its size is then not enforced, and says so.
 */
import { execFile, spawn } from 'node:child_process';
import { access, lstat, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';

const GIB = 1024 ** 3;

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(command, args, { timeout: 120_000 }, (err, stdout, stderr) =>
      err
        ? reject(new Error(`${command}: ${String(stderr).trim() || err.message}`))
        : resolve(String(stdout)),
    ),
  );
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

export class PodmanVolumes {
  /** Why loop mounts failed here once (then every new volume is a plain directory), or null. */
  private unenforcedBecause: string | null = null;

  constructor(
    private readonly root: string,
    private readonly log: Logger,
  ) {}

  dir(volumeId: string): string {
    if (!/^[0-9a-f-]{36}$/.test(volumeId)) throw new Error(`not a volume id: ${volumeId}`);
    return join(this.root, volumeId);
  }

  private image(volumeId: string): string {
    return `${this.dir(volumeId)}.ext4`;
  }

  /**
   * A new volume: a sparse image of `sizeGb` GiB with an ext4 file system (no blocks reserved for
   * root: the container's root may fill it all), mounted at its directory.
   */
  async create(volumeId: string, sizeGb: number): Promise<void> {
    const dir = this.dir(volumeId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (this.unenforcedBecause !== null) return;
    const image = this.image(volumeId);
    try {
      await run('truncate', ['-s', String(sizeGb * GIB), image]);
      await run('mkfs.ext4', ['-q', '-F', '-m', '0', '-L', 'fjord-volume', image]);
      await this.mount(volumeId);
    } catch (err) {
      await rm(image, { force: true });
      this.unenforcedBecause = (err as Error).message;
      this.log.warn(
        { err },
        'apps: volumes cannot be loop-mounted here; they are plain directories whose size is not enforced',
      );
    }
  }

  /** True when the volume's size is a file system's (writes past it fail), false for a plain directory. */
  async sizeEnforced(volumeId: string): Promise<boolean> {
    return exists(this.image(volumeId));
  }

  /** The directory to bind-mount, with the volume's file system mounted on it. */
  async ready(volumeId: string): Promise<string> {
    const dir = this.dir(volumeId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if ((await exists(this.image(volumeId))) && !(await this.mounted(dir))) await this.mount(volumeId);
    return dir;
  }

  /**
   * Mounts the image; when a loop device still holds it (instances adopted after a restart keep
   * theirs), that device, so one file system is never mounted through two devices.
   */
  private async mount(volumeId: string): Promise<void> {
    const image = this.image(volumeId);
    const held = /^(\/dev\/loop\d+):/m.exec(await run('losetup', ['-j', image]).catch(() => ''));
    await run('mount', held ? [held[1]!, this.dir(volumeId)] : ['-o', 'loop', image, this.dir(volumeId)]);
  }

  private async mounted(dir: string): Promise<boolean> {
    const info = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
    return info.split('\n').some((l) => l.split(' ')[4] === dir);
  }

  /** Bytes of the regular files it holds (0 when it does not exist). */
  async usage(volumeId: string): Promise<number> {
    return usage(await this.ready(volumeId));
  }

  /**
   * A gzipped tar of the volume's files. The stream ends only once tar has exited well: a tar
   * that fails ends it with its error, so a stored snapshot is never a partial one.
   */
  async snapshot(volumeId: string): Promise<Readable> {
    const dir = await this.ready(volumeId);
    const tar = spawn('tar', ['-C', dir, '--exclude=./lost+found', '-czf', '-', '.'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = new PassThrough();
    let stderr = '';
    tar.stderr.on('data', (c) => {
      stderr += String(c);
    });
    tar.stdout.pipe(out, { end: false });
    tar.once('error', (err) => out.destroy(err));
    // Exit 1 is "a file changed as it was read": the archive is whole, the file as tar saw it.
    tar.once('close', (code) =>
      code === 0 || code === 1
        ? out.end()
        : out.destroy(new Error(`tar exited with ${code}: ${stderr.trim()}`)),
    );
    return out;
  }

  /** Fills the (new) volume from a gzipped tar written by `snapshot`; rejects with tar's reason. */
  async restore(volumeId: string, archive: Readable): Promise<void> {
    const dir = await this.ready(volumeId);
    const tar = spawn('tar', ['-C', dir, '-xzf', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    tar.stderr.on('data', (c) => {
      stderr += String(c);
    });
    const exited = new Promise<number | null>((resolve) => {
      tar.once('error', () => resolve(null));
      tar.once('close', (code) => resolve(code));
    });
    // Both are awaited, whichever fails first: tar's verdict is the one that says why.
    const [fed, code] = await Promise.all([
      pipeline(archive, tar.stdin).then(
        () => null,
        (err: Error) => err,
      ),
      exited,
    ]);
    if (code !== 0) throw new Error(`tar exited with ${code}: ${stderr.trim() || fed?.message || ''}`);
    if (fed) throw fed;
  }

  async remove(volumeId: string): Promise<void> {
    const dir = this.dir(volumeId);
    if (await this.mounted(dir)) await run('umount', [dir]).catch(() => run('umount', ['-l', dir]));
    await rm(dir, { recursive: true, force: true });
    await rm(this.image(volumeId), { force: true });
  }

  /**
   * At stop: unmounts every volume (instances that keep running have mounts of their own; the
   * next start mounts the volume again through the loop device they hold).
   */
  async unmountAll(): Promise<void> {
    const entries = await readdir(this.root).catch(() => [] as string[]);
    for (const name of entries) {
      if (!/^[0-9a-f-]{36}$/.test(name)) continue;
      const dir = join(this.root, name);
      if (await this.mounted(dir))
        await run('umount', [dir]).catch((err) =>
          this.log.warn({ err, dir }, 'apps: a volume stays mounted'),
        );
    }
  }
}

/** Bytes of the regular files under `dir`; files that go while it counts are left out. */
async function usage(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) total += await usage(path);
    else if (e.isFile()) total += (await lstat(path).catch(() => ({ size: 0 }))).size;
  }
  return total;
}
