/**
 * Container image references, read the way registries and podman read them (the grammar of the
 * OCI distribution reference: `[registry[:port]/]path[:tag][@digest]`), so Fjord decides where an
 * image comes from before podman ever sees the string. A short name (`nginx:1.27`) is Docker
 * Hub's, written out in full (`docker.io/library/nginx:1.27`): podman then never guesses a
 * registry from its own search list.
 */

/** A reference taken apart; `canonical` is what podman is given. */
export interface ImageReference {
  /** `host`, `host:port` or `[v6]:port`, lower-case; `docker.io` for short names. */
  registry: string;
  /** The host alone, without port or brackets (what the address guard resolves). */
  host: string;
  /** The path inside the registry: `library/nginx`, `team/web`. */
  repository: string;
  tag: string | null;
  digest: string | null;
  /** `registry/repository[:tag][@digest]`, with `:latest` when neither tag nor digest is given. */
  canonical: string;
}

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
const PORT = /^\d{1,5}$/;
const MAX_NAME = 255;

/** Why a string is not a reference, or null when it is one; `parseImageReference` needs null. */
export function imageReferenceProblem(ref: string): string | null {
  if (ref.startsWith('-')) return 'it starts with "-", which podman would read as an option';
  if (!ref || /[\s\0]/.test(ref)) return 'it is empty or holds white space';
  return parse(ref) ? null : 'it is not registry/path[:tag][@digest] with lower-case path components';
}

/** The reference taken apart, or null when it is not a valid one. */
export function parseImageReference(ref: string): ImageReference | null {
  return ref.startsWith('-') || /[\s\0]/.test(ref) ? null : parse(ref);
}

function parse(ref: string): ImageReference | null {
  let rest = ref;
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return null;
  }
  let tag: string | null = null;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return null;
  }
  const parts = rest.split('/');
  let registry = 'docker.io';
  let host = 'docker.io';
  const first = parts[0] ?? '';
  // The first component names a registry when it could not be a path component: it has a dot,
  // a port or brackets, or is `localhost` (Docker's rule).
  if (parts.length > 1 && (/[.:[\]]/.test(first) || first === 'localhost' || /[A-Z]/.test(first))) {
    const h = registryHost(first);
    if (!h) return null;
    registry = first.toLowerCase();
    host = h;
    parts.shift();
  }
  if (!parts.length || !parts.every((p) => COMPONENT.test(p))) return null;
  if (registry === 'docker.io' && parts.length === 1) parts.unshift('library');
  const repository = parts.join('/');
  if (registry.length + 1 + repository.length > MAX_NAME) return null;
  const canonical = `${registry}/${repository}${tag !== null ? `:${tag}` : digest === null ? ':latest' : ''}${
    digest !== null ? `@${digest}` : ''
  }`;
  return { registry, host, repository, tag: tag ?? (digest === null ? 'latest' : null), digest, canonical };
}

/** The host of `host[:port]` or `[v6][:port]`, lower-case, or null when it is neither. */
export function registryHost(registry: string): string | null {
  const badPort = (port: string | undefined) =>
    port !== undefined && (!PORT.test(port) || Number(port) > 65_535);
  const v6 = /^\[([0-9a-fA-F:.]+)\](?::([^:]*))?$/.exec(registry);
  if (v6) return badPort(v6[2]) ? null : v6[1]!.toLowerCase();
  const [name, port, extra] = registry.split(':');
  if (extra !== undefined || badPort(port)) return null;
  if (!name || name.length > 253 || !name.split('.').every((l) => LABEL.test(l))) return null;
  return name.toLowerCase();
}

/**
 * Whether a registry entry of the operator's list (`host[:port][/path prefix]`) covers the
 * reference: the same registry, and the repository at or under the prefix.
 */
export function registryCovers(entry: string, ref: ImageReference): boolean {
  const slash = entry.indexOf('/');
  const registry = (slash < 0 ? entry : entry.slice(0, slash)).toLowerCase();
  const prefix = slash < 0 ? '' : entry.slice(slash + 1).replace(/\/+$/, '');
  if (registry !== ref.registry) return false;
  return !prefix || ref.repository === prefix || ref.repository.startsWith(`${prefix}/`);
}
