import type { Row } from '../ui/table.js';

// What the object browser reads: S3's XML listings turned into rows, and sizes as people read them.

/** One entry of a listing: a folder (a common prefix), an object, a version or a delete marker. */
export interface Entry extends Row {
  name: string;
  key: string;
  kind: 'folder' | 'object' | 'version' | 'marker';
  size: number | null;
  modified: string | null;
  etag: string | null;
  storage_class: string | null;
  version_id: string | null;
  latest: boolean | null;
}

export interface Listing {
  entries: Entry[];
  next: { continuation_token?: string; key_marker?: string; version_id_marker?: string } | null;
}

/** The element's child elements by local name (S3 answers in its own XML namespace). */
const children = (el: Element, name: string) => Array.from(el.children).filter((c) => c.localName === name);
const textOf = (el: Element, name: string) => children(el, name)[0]?.textContent ?? null;

/** S3's ListBucketResult or ListVersionsResult, as the page's rows. */
export function parseListing(xml: string, prefix: string): Listing {
  const root = new DOMParser().parseFromString(xml, 'application/xml').documentElement;
  const short = (key: string) => key.slice(prefix.length);
  const entries: Entry[] = children(root, 'CommonPrefixes').map((p) => {
    const key = textOf(p, 'Prefix') ?? '';
    return {
      name: short(key),
      key,
      kind: 'folder',
      size: null,
      modified: null,
      etag: null,
      storage_class: null,
      version_id: null,
      latest: null,
    };
  });
  for (const el of Array.from(root.children)) {
    const kind =
      el.localName === 'Contents'
        ? 'object'
        : el.localName === 'Version'
          ? 'version'
          : el.localName === 'DeleteMarker'
            ? 'marker'
            : null;
    if (!kind) continue;
    const key = textOf(el, 'Key') ?? '';
    const size = textOf(el, 'Size');
    entries.push({
      name: short(key),
      key,
      kind,
      size: size === null ? null : Number(size),
      modified: textOf(el, 'LastModified'),
      etag: textOf(el, 'ETag')?.replace(/"/g, '') ?? null,
      storage_class: textOf(el, 'StorageClass'),
      version_id: textOf(el, 'VersionId'),
      latest: kind === 'object' ? null : textOf(el, 'IsLatest') === 'true',
    });
  }
  const truncated = textOf(root, 'IsTruncated') === 'true';
  const token = textOf(root, 'NextContinuationToken');
  const keyMarker = textOf(root, 'NextKeyMarker');
  const next = !truncated
    ? null
    : token
      ? { continuation_token: token }
      : keyMarker
        ? { key_marker: keyMarker, version_id_marker: textOf(root, 'NextVersionIdMarker') ?? '' }
        : null;
  return { entries, next };
}

export const bytes = (n: number | null): string => {
  if (n === null) return '—';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
};
