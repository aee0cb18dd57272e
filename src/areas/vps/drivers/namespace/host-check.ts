/**
 * What the namespace driver needs of its host, checked once at startup so that Fjord refuses to
 * start, saying what is missing, rather than failing at a customer's first server.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { makeImage, mountImage, unmountImage } from './disk-image.js';
import { run } from './host.js';
import { PYTHON } from './launch-helper.js';

const fail = (what: string, err?: unknown) =>
  new Error(`FJORD_VPS_DRIVER=namespace ${what}${err ? `: ${(err as Error).message}` : ''}`);

export async function checkNamespaceHost(scratch: string): Promise<void> {
  if (process.getuid?.() !== 0) throw fail('needs root');
  await run('unshare', ['--mount', '--uts', '--pid', '--net', '--fork', 'true']).catch((err) => {
    throw fail('cannot make namespaces', err);
  });
  for (const [tool, pkg] of [
    ['newuidmap', 'uidmap'],
    ['nft', 'nftables'],
    ['pivot_root', 'util-linux'],
    ['mkfs.ext4', 'e2fsprogs'],
    ['losetup', 'mount'],
  ])
    await run('sh', ['-c', `command -v ${tool}`]).catch(() => {
      throw fail(`needs ${tool} (Debian: ${pkg})`);
    });
  if (!existsSync(PYTHON)) throw fail(`needs ${PYTHON} (Debian: python3)`);
  await run('unshare', ['--user', '--map-root-user', 'true']).catch((err) => {
    throw fail('cannot make user namespaces', err);
  });
  const dir = join(scratch, `host-check-${randomBytes(4).toString('hex')}`);
  try {
    for (const d of ['l', 'u', 'w', 'm', 'disk']) await mkdir(join(dir, d), { recursive: true });
    await run('unshare', [
      '--mount',
      'mount',
      '-t',
      'overlay',
      'overlay',
      '-o',
      `lowerdir=${dir}/l,upperdir=${dir}/u,workdir=${dir}/w`,
      `${dir}/m`,
    ]).catch((err) => {
      throw fail('cannot mount overlayfs', err);
    });
    // A server's disk is an ext4 image on a loop device: without loop devices a server's size
    // could not be held, so the driver refuses rather than give servers the host's whole disk.
    await makeImage(join(dir, 'disk.img'), 16 * 1024 * 1024).catch((err) => {
      throw fail('cannot make ext4 disk images', err);
    });
    await mountImage(join(dir, 'disk.img'), join(dir, 'disk')).catch((err) => {
      throw fail('cannot mount disk images', err);
    });
    await unmountImage(join(dir, 'disk'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
