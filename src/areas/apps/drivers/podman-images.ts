/**
 * Getting a revision's image into podman's local store: pulled from its registry, or loaded from
 * an uploaded archive. Apart from podman.ts because it is the one step before a container starts
 * that deals with images rather than containers.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { RevisionSpec } from './driver.js';
import { lastLine, type PodmanCli } from './podman-cli.js';

/** Makes the revision's image present locally: nothing when it is, else a load or a pull. */
export async function ensureImage(cli: PodmanCli, spec: RevisionSpec): Promise<void> {
  if (
    !(await cli.run(['image', 'exists', spec.image]).then(
      () => true,
      () => false,
    ))
  ) {
    if (spec.imageArchive) await loadArchive(cli, spec.image, spec.imageArchive);
    else
      await cli.run(['pull', '--quiet', spec.image], 300_000).catch((err: Error) => {
        throw new Error(`The image ${spec.image} could not be pulled: ${lastLine(err.message)}`);
      });
  }
}

/**
 * Loads an uploaded archive (`podman load` reads docker-archive and oci-archive, plain or
 * gzipped) and tags what it held with the upload's reference, so later starts find it locally.
 */
export async function loadArchive(
  cli: PodmanCli,
  image: string,
  archive: () => Promise<Readable>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-image-'));
  try {
    const file = join(dir, 'image.tar');
    await pipeline(await archive(), createWriteStream(file));
    const out = await cli.run(['load', '-i', file], 300_000).catch((err: Error) => {
      throw new Error(`The uploaded image archive could not be loaded: ${lastLine(err.message)}`);
    });
    const loaded = /Loaded image(?:\(s\))?:\s*(\S+)/.exec(out)?.[1]?.split(',')[0];
    if (!loaded) throw new Error('The uploaded image archive holds no image.');
    if (loaded !== image) await cli.run(['tag', loaded, image]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
