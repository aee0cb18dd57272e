/**
 * A namespace server's disk is a filesystem of its own: `<dir>/disk.img`, a sparse file of the
 * plan's size holding an ext4 filesystem, mounted through a loop device at `<dir>/disk`. The
 * server's overlay upper layer (everything it writes) and the overlay's work dir live inside it,
 * so a server that fills its disk gets ENOSPC from its own filesystem while the host and other
 * servers keep writing, and `df /` inside shows the plan's size (overlayfs reports its upper
 * layer's filesystem).
 *
 * The image is mounted on the host while the server runs (its boot mounts it; its stop unmounts
 * it) and for the moment a stopped server's files are read or replaced (snapshots, rollbacks,
 * restores, backups). `mount -o loop` sets the loop device to detach itself when the last mount
 * of it goes, so a stopped or removed server holds no loop device. A mount is found again by its
 * mount point, and a loop device still bound to the image (a server left running by a previous
 * Fjord) is reused rather than a second one made: two loop devices over one ext4 image would
 * corrupt it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, open, readFile, rename, rm, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from './host.js';

export const imageOf = (dir: string) => join(dir, 'disk.img');
export const mountOf = (dir: string) => join(dir, 'disk');
/** The overlay's upper layer: the server's own files. */
export const upperOf = (dir: string) => join(dir, 'disk', 'upper');
export const workOf = (dir: string) => join(dir, 'disk', 'work');

// No reserved blocks (the customer's root is not the host's root, so they would be lost to it);
// inode tables and journal left unwritten, so the image stays sparse until the server writes.
const MKFS = ['-q', '-F', '-t', 'ext4', '-m', '0', '-E', 'lazy_itable_init=1,lazy_journal_init=1,nodiscard'];
// noinit_itable: the kernel does not zero the (already zero) inode tables in the background.
const MOUNT_OPTIONS = 'noinit_itable';

/** Whether `path` is a mount point in Fjord's mount namespace. */
export async function isMounted(path: string): Promise<boolean> {
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  const decode = (s: string) =>
    s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
  return text.split('\n').some((line) => decode(line.split(' ')[4] ?? '') === path);
}

/** Makes an empty ext4 image of `bytes` at `file` (sparse: it takes ~5 MB until written). */
export async function makeImage(file: string, bytes: number): Promise<void> {
  const temp = `${file}.new-${randomBytes(4).toString('hex')}`;
  try {
    const handle = await open(temp, 'w', 0o600);
    await handle.truncate(bytes);
    await handle.close();
    await run('mkfs.ext4', [...MKFS, temp]);
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
}

/** The loop device already bound to `file`, if any. */
async function loopOf(file: string): Promise<string | null> {
  const out = await run('losetup', ['-j', file]).catch(() => '');
  return /^(\/dev\/loop\d+):/m.exec(out)?.[1] ?? null;
}

/** Mounts `file` at `at` (once: a mount already there, or a loop device still bound, is reused). */
export async function mountImage(file: string, at: string): Promise<void> {
  if (await isMounted(at)) return;
  await mkdir(at, { recursive: true });
  const bound = await loopOf(file);
  try {
    if (bound) await run('mount', ['-o', MOUNT_OPTIONS, bound, at]);
    else await run('mount', ['-o', `loop,${MOUNT_OPTIONS}`, file, at]);
  } catch (err) {
    throw new Error(
      `cannot mount the server's disk image (the namespace driver needs loop devices: /dev/loop-control and the loop module): ${(err as Error).message}`,
    );
  }
}

/** Unmounts what is mounted at `at` (lazily when something still reads it); its loop device goes with its last mount. */
export async function unmountImage(at: string): Promise<void> {
  if (!(await isMounted(at))) return;
  await run('umount', [at]).catch(() => run('umount', ['-l', at]));
}

/** The server's disk mounted, with its upper and work dirs present. */
export async function mountDisk(dir: string): Promise<void> {
  await mountImage(imageOf(dir), mountOf(dir));
  await mkdir(upperOf(dir), { recursive: true, mode: 0o755 });
  await mkdir(workOf(dir), { recursive: true });
}

export const unmountDisk = (dir: string) => unmountImage(mountOf(dir));

/**
 * Makes the server's disk image when it has none. A server made before disks had a size of
 * their own keeps its files: its old `<dir>/upper` is copied into the new image, then removed.
 */
export async function ensureDisk(dir: string, bytes: number): Promise<void> {
  if (existsSync(imageOf(dir))) return;
  await makeImage(imageOf(dir), bytes);
  const legacy = join(dir, 'upper');
  if (!existsSync(legacy)) return;
  await withDisk(dir, async () => {
    await run(
      'sh',
      [
        '-c',
        'tar -cpf - --xattrs --xattrs-include="*" --numeric-owner -C "$1" . | tar -xpf - --xattrs --xattrs-include="*" --numeric-owner -C "$2"',
        'copy',
        legacy,
        upperOf(dir),
      ],
      3_600_000,
    );
    await chmod(upperOf(dir), (await stat(legacy)).mode & 0o7777);
  });
  await rm(legacy, { recursive: true, force: true });
  await rm(join(dir, 'work'), { recursive: true, force: true });
}

/**
 * Runs `work` with the server's disk mounted; a disk that was not mounted before (a stopped
 * server) is unmounted again after, unless `keep` says its caller will.
 */
export async function withDisk<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const was = await isMounted(mountOf(dir));
  if (!was) await mountDisk(dir);
  try {
    return await work();
  } finally {
    if (!was) await unmountDisk(dir);
  }
}

/**
 * A new image of the same size filled by `fill` (given its upper dir), then put in place of the
 * server's disk: a rollback or a restore never needs room for two copies inside the plan's disk,
 * and a failure leaves the old disk as it was. The server is stopped.
 */
export async function replaceDisk(dir: string, fill: (upper: string) => Promise<void>): Promise<void> {
  const bytes = (await stat(imageOf(dir))).size;
  const tag = randomBytes(4).toString('hex');
  const file = join(dir, `disk.img.${tag}`);
  const at = join(dir, `disk.${tag}`);
  await unmountDisk(dir);
  try {
    await makeImage(file, bytes);
    await mountImage(file, at);
    try {
      await fill(join(at, 'upper'));
    } finally {
      await unmountImage(at);
    }
    await rename(file, imageOf(dir));
  } finally {
    await rm(file, { force: true });
    await rm(at, { recursive: true, force: true });
  }
}

/** Bytes the server's files take: from its filesystem while mounted, else the image's blocks. */
export async function diskUsed(dir: string): Promise<number> {
  if (await isMounted(mountOf(dir))) {
    const s = await statfs(mountOf(dir));
    return (s.blocks - s.bfree) * s.bsize;
  }
  return ((await stat(imageOf(dir)).catch(() => null))?.blocks ?? 0) * 512;
}
