import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { PodmanVolumes } from './podman-volumes.js';

/**
 * Volumes where no file system can be made for them: a plain directory whose size is not
 * enforced, and says so. A restore from a broken archive names tar's reason.
 */
const ID = '01234567-89ab-4cde-8f01-23456789abcd';
let work = '';
const path = process.env['PATH'];
afterEach(() => {
  process.env['PATH'] = path;
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('podman volumes', () => {
  it('falls back to a plain directory, size not enforced, when no file system can be made', async () => {
    work = mkdtempSync(join(tmpdir(), 'fjord-volumes-'));
    // A host whose mkfs.ext4 fails (as where loop devices or root are missing).
    const bin = join(work, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'mkfs.ext4'), '#!/bin/sh\necho "no loop device" >&2\nexit 1\n');
    chmodSync(join(bin, 'mkfs.ext4'), 0o755);
    process.env['PATH'] = `${bin}:${path}`;
    const volumes = new PodmanVolumes(join(work, 'volumes'), pino({ level: 'silent' }));
    await volumes.create(ID, 1);
    expect(await volumes.sizeEnforced(ID)).toBe(false);
    expect(existsSync(join(work, 'volumes', ID))).toBe(true);
    expect(existsSync(join(work, 'volumes', `${ID}.ext4`))).toBe(false);
    writeFileSync(join(work, 'volumes', ID, 'note'), 'hello\n');
    expect(await volumes.usage(ID)).toBe(6);

    await expect(volumes.restore(ID, Readable.from([Buffer.from('not a gzip')]))).rejects.toThrow(
      /tar exited with 2/,
    );
    await volumes.remove(ID);
    expect(existsSync(join(work, 'volumes', ID))).toBe(false);
  });
});
