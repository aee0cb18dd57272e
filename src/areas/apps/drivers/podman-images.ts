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
import type { Logger } from 'pino';
import { assertSafeTarget } from '../../../kernel/webhooks/ssrf-guard.js';
import { parseImageReference } from '../image-reference.js';
import type { RevisionSpec } from './driver.js';
import { lastLine, type PodmanCli } from './podman-cli.js';

/**
 * Makes the revision's image present locally: nothing when it is, else a load or a pull. A pull
 * goes only to a registry whose addresses pass the same guard as webhooks (no loopback, link-local
 * or private address unless the operator allows them), checked when the name is resolved here.
 * Its failure says that it failed, never what the network answered: the customer's status message
 * must not tell open ports from closed ones. The operator's log has the reason.
 */
export async function ensureImage(
  cli: PodmanCli,
  spec: RevisionSpec,
  allowPrivate: boolean,
  log: Logger,
): Promise<void> {
  const ref = parseImageReference(spec.image);
  // The service admits only valid references; this keeps anything else off podman's command line.
  if (!ref) throw new Error('The image reference is not valid.');
  if (
    await cli.run(['image', 'exists', ref.canonical]).then(
      () => true,
      () => false,
    )
  )
    return;
  if (spec.imageArchive) return loadArchive(cli, ref.canonical, spec.imageArchive);
  const failed = new Error(`The image ${ref.canonical} could not be pulled from ${ref.registry}.`);
  try {
    // Docker Hub's registry answers at registry-1.docker.io; every other name is its own host.
    const host = ref.registry === 'docker.io' ? 'registry-1.docker.io' : ref.registry;
    await assertSafeTarget(`https://${host}/v2/`, allowPrivate);
    await cli.run(['pull', '--quiet', ref.canonical], 300_000);
  } catch (err) {
    log.warn({ err, image: ref.canonical, revision: spec.revisionId }, 'apps: image pull failed');
    throw failed;
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
