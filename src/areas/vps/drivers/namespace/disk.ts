/**
 * A namespace server's disk as files: the new disk's first contents, snapshots (tars of the
 * upper layer), rollbacks, and backup archives written and read back. Apart from the driver
 * because none of it touches a running server: each works on the server's directory only (its
 * disk image, disk-image.ts), and the driver runs it in the server's queue.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type { ServerSpec } from '../driver.js';
import { BACKUP_FORMAT, type BackupManifest, manifestOf } from '../simulated.js';
import { isMounted, mountDisk, mountOf, replaceDisk, upperOf, withDisk } from './disk-image.js';
import { run } from './host.js';

const TAR_FLAGS = ['--xattrs', '--xattrs-include=*', '--numeric-owner'];

/** Host keys of its own, its host name and the customer's keys, written into the new (mounted) disk. */
export async function prepareDisk(dir: string, spec: ServerSpec): Promise<void> {
  const upper = upperOf(dir);
  await mkdir(join(upper, 'etc/ssh'), { recursive: true });
  await mkdir(join(upper, 'root/.ssh'), { recursive: true, mode: 0o700 });
  await chmod(join(upper, 'root'), 0o700);
  await run('ssh-keygen', ['-A', '-f', upper]);
  await writeFile(join(upper, 'etc/hostname'), `${spec.hostname}\n`);
  await writeFile(
    join(upper, 'etc/hosts'),
    `127.0.0.1\tlocalhost\n127.0.1.1\t${spec.hostname}\n::1\tlocalhost ip6-localhost ip6-loopback\n`,
  );
  await writeFile(join(upper, 'root/.ssh/authorized_keys'), spec.publicKeys.map((k) => `${k}\n`).join(''), {
    mode: 0o600,
  });
  // Fjord's umask is 077; a Debian root needs its usual modes for users other than root.
  for (const d of ['', 'etc', 'etc/ssh']) await chmod(join(upper, d), 0o755);
  for (const f of ['etc/hostname', 'etc/hosts']) await chmod(join(upper, f), 0o644);
  for (const f of await readdir(join(upper, 'etc/ssh')))
    if (f.endsWith('.pub')) await chmod(join(upper, 'etc/ssh', f), 0o644);
  await writeFile(join(dir, 'prepared'), '');
}

/** A tar of the upper layer (the server is stopped, so it is consistent); answers its size. */
export async function writeSnapshot(dir: string, name: string): Promise<number> {
  const file = join(dir, 'snapshots', `${name}.tar`);
  const temp = `${file}.new-${randomBytes(4).toString('hex')}`;
  await mkdir(join(dir, 'snapshots'), { recursive: true });
  try {
    await withDisk(dir, () => run('tar', ['-cpf', temp, ...TAR_FLAGS, '-C', upperOf(dir), '.'], 600_000));
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
  return (await stat(file)).size;
}

/** The disk replaced by the snapshot's upper layer: whatever was written since is gone. */
export async function rollbackTo(dir: string, name: string): Promise<void> {
  const snapshot = join(dir, 'snapshots', `${name}.tar`);
  await stat(snapshot);
  await replaceDisk(dir, async (upper) => {
    await mkdir(upper);
    await run('tar', ['-xpf', snapshot, ...TAR_FLAGS, '-C', upper], 600_000);
  });
}

/**
 * The server's disk and a manifest, as a gzipped tar read as it is written. A stopped server's
 * disk is mounted for it; `done` is called when the tar has finished (the driver unmounts it).
 */
export async function backupOf(
  dir: string,
  spec: ServerSpec,
  driver: string,
  done: () => void,
): Promise<Readable> {
  if (!(await isMounted(mountOf(dir)))) await mountDisk(dir);
  const staging = join(dir, `backup-${randomBytes(4).toString('hex')}`);
  await mkdir(staging);
  const manifest = manifestOf(spec, driver);
  await writeFile(join(staging, 'fjord-backup.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // The disk is the upper layer, under `disk/`: a restore lays it over the same template.
  const tar = spawn(
    'tar',
    [
      '-czf',
      '-',
      ...TAR_FLAGS,
      '-C',
      staging,
      'fjord-backup.json',
      '-C',
      mountOf(dir),
      '--transform=s,^upper,disk,S',
      'upper',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const out = new PassThrough();
  let stderr = '';
  tar.stderr.on('data', (c: Buffer) => (stderr += c));
  tar.stdout.pipe(out, { end: false });
  tar.on('close', (code) => {
    void rm(staging, { recursive: true, force: true });
    done();
    // A running server's files may change while read ("file changed as we read it", exit 1).
    if (code === 0 || code === 1) out.end();
    else out.destroy(new Error(`reading the disk of ${spec.id} failed: ${stderr.trim()}`));
  });
  return out;
}

/** The disk replaced by the disk of a backup of this server (unpacked into a new image). */
export async function restoreFrom(dir: string, spec: ServerSpec, archive: Readable): Promise<void> {
  await replaceDisk(dir, async (upper) => {
    const temp = join(dirname(upper), 'restore');
    await mkdir(temp);
    await new Promise<void>((resolve, reject) => {
      const tar = spawn('tar', ['-xzpf', '-', ...TAR_FLAGS, '-C', temp], {
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      let stderr = '';
      tar.stderr.on('data', (c: Buffer) => (stderr += c));
      archive.on('error', (err) => {
        tar.kill();
        reject(err);
      });
      tar.stdin.on('error', () => {});
      archive.pipe(tar.stdin);
      tar.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(`the archive cannot be read: ${stderr.trim()}`)),
      );
    });
    const manifest = JSON.parse(
      await readFile(join(temp, 'fjord-backup.json'), 'utf8').catch(() => '{}'),
    ) as Partial<BackupManifest>;
    if (manifest.format !== BACKUP_FORMAT || manifest.vps_id !== spec.id || !existsSync(join(temp, 'disk')))
      throw new Error('the archive is not a backup of this server');
    await rename(join(temp, 'disk'), upper);
    await rm(temp, { recursive: true, force: true });
  });
}
