/**
 * Which images a revision may use: the customer's own uploads, and references on the registries
 * the operator listed. Decided when a revision is created, before anything reaches podman; the
 * driver checks the registry's address again when it pulls (names are resolved then).
 */
import { isIP } from 'node:net';
import { isPrivateAddress } from '../../kernel/webhooks/ssrf-guard.js';
import { appsErrors } from './errors.js';
import {
  type ImageReference,
  imageReferenceProblem,
  parseImageReference,
  registryCovers,
} from './image-reference.js';

/** The operator's rules for registry images. */
export interface ImageRules {
  /** `host[:port][/path prefix]` entries; empty: uploaded images only. */
  registries: string[];
  /** Whether registries on loopback, link-local or private addresses may be pulled from. */
  allowPrivate: boolean;
}

/** The repository uploaded images are loaded under, in the local store (`localhost/fjord-upload/<id>`). */
const UPLOAD_REPOSITORY = 'fjord-upload/';

/** What a revision's `image` string names: one of the customer's uploads, or a registry image. */
export type ImageChoice = { upload: string } | { registry: ImageReference };

export class ImagePolicy {
  constructor(private readonly rules: ImageRules) {}

  /**
   * Reads a revision's `image` string: an upload's reference (`localhost/fjord-upload/<id>:latest`,
   * as Fjord gave it) becomes its upload id, for the caller to look up in the customer's own
   * uploads; any other reference must be valid and on a listed registry at an allowed address.
   */
  choose(image: string): ImageChoice {
    const problem = imageReferenceProblem(image);
    if (problem) throw appsErrors.badImageReference(image, problem);
    const ref = parseImageReference(image)!;
    if (ref.registry === 'localhost' && ref.repository.startsWith(UPLOAD_REPOSITORY)) {
      const id = ref.repository.slice(UPLOAD_REPOSITORY.length);
      // Only the exact name Fjord gave: another tag or a digest could reach a different image.
      if (id.includes('/') || ref.tag !== 'latest' || ref.digest !== null)
        throw appsErrors.badImageReference(
          image,
          'an uploaded image is named exactly as its upload shows it',
        );
      return { upload: id };
    }
    if (!this.rules.registries.some((entry) => registryCovers(entry, ref)))
      throw appsErrors.registryNotAllowed(ref.registry, this.rules.registries);
    if (!this.rules.allowPrivate && isLocalHost(ref.host)) throw appsErrors.registryPrivate(ref.registry);
    return { registry: ref };
  }
}

/** Hosts known to be local without a lookup: loopback names and private or reserved literals. */
function isLocalHost(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && isPrivateAddress(host);
}

/** The reference podman is given for a stored revision image (fully qualified; uploads as they are). */
export function podmanReference(image: string): string {
  return parseImageReference(image)?.canonical ?? image;
}
