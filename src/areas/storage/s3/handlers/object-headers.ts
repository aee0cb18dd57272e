import type { ObjectAttributes } from '../../objects/object-store.js';
import type { ObjectRow } from '../../objects/tables.js';
import { S3Error, s3Errors } from '../errors.js';

/** Standard headers stored with an object and sent back with it. */
const STANDARD = [
  'cache-control',
  'content-disposition',
  'content-encoding',
  'content-language',
  'expires',
] as const;
const MAX_METADATA_BYTES = 2048;

export const httpDate = (ms: number) => new Date(ms).toUTCString();
export const quoteEtag = (etag: string) => `"${etag}"`;

export function parseTagQuery(text: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(text)) tags[k] = v;
  checkTags(tags);
  return tags;
}

export function checkTags(tags: Record<string, string>): void {
  const entries = Object.entries(tags);
  if (entries.length > 10) throw s3Errors.invalidTag('Object tags cannot be greater than 10');
  for (const [k, v] of entries) {
    if (k.length === 0 || k.length > 128)
      throw s3Errors.invalidTag('The TagKey you have provided is invalid');
    if (v.length > 256) throw s3Errors.invalidTag('The TagValue you have provided is invalid');
  }
}

/** Attributes of a new object from the request's headers. */
export function attributesFromHeaders(
  headers: Record<string, string | string[] | undefined>,
): ObjectAttributes {
  const get = (n: string) => {
    const v = headers[n];
    return Array.isArray(v) ? v.join(',') : v;
  };
  const std: Record<string, string> = {};
  for (const name of STANDARD) {
    let v = get(name);
    if (name === 'content-encoding' && v) {
      // aws-chunked describes the transfer only; it never becomes part of the object. The rest
      // is kept as the client wrote it (`deflate, gzip` stays `deflate, gzip`).
      v = v
        .split(',')
        .filter((s) => s.trim() && s.trim().toLowerCase() !== 'aws-chunked')
        .join(',')
        .trim();
    }
    if (v) std[name] = v;
  }
  const metadata: Record<string, string> = {};
  let size = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith('x-amz-meta-') || value === undefined) continue;
    const key = name.slice('x-amz-meta-'.length);
    const v = Array.isArray(value) ? value.join(',') : value;
    metadata[key] = v;
    size += key.length + Buffer.byteLength(v);
  }
  if (size > MAX_METADATA_BYTES) {
    throw new S3Error(
      'MetadataTooLarge',
      400,
      'Your metadata headers exceed the maximum allowed metadata size.',
      {
        MaxSizeAllowed: String(MAX_METADATA_BYTES),
      },
    );
  }
  const tagging = get('x-amz-tagging');
  return {
    contentType: get('content-type') ?? null,
    headers: std,
    metadata,
    tags: tagging ? parseTagQuery(tagging) : {},
  };
}

/** The headers that describe a stored object in GET and HEAD answers. */
export function objectHeaders(row: ObjectRow, query: URLSearchParams): Record<string, string | number> {
  const attrs = {
    headers: JSON.parse(row.headers) as Record<string, string>,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    tags: JSON.parse(row.tags) as Record<string, string>,
  };
  const h: Record<string, string | number> = {
    'content-type': row.content_type ?? 'binary/octet-stream',
    etag: quoteEtag(row.etag),
    'last-modified': httpDate(Number(row.last_modified)),
    'accept-ranges': 'bytes',
    ...attrs.headers,
  };
  if (row.version_id !== 'null') h['x-amz-version-id'] = row.version_id;
  // S3 names the class only when it is not STANDARD.
  if (row.storage_class) h['x-amz-storage-class'] = row.storage_class;
  for (const [k, v] of Object.entries(attrs.metadata)) h[`x-amz-meta-${k}`] = v;
  const tagCount = Object.keys(attrs.tags).length;
  if (tagCount > 0) h['x-amz-tagging-count'] = tagCount;
  // Presigned GETs may override what is sent back (response-content-type …).
  for (const [param, header] of [
    ['response-content-type', 'content-type'],
    ['response-content-language', 'content-language'],
    ['response-expires', 'expires'],
    ['response-cache-control', 'cache-control'],
    ['response-content-disposition', 'content-disposition'],
    ['response-content-encoding', 'content-encoding'],
  ] as const) {
    const v = query.get(param);
    if (v !== null) h[header] = v;
  }
  return h;
}

const etagList = (header: string) =>
  header.split(',').map((s) => s.trim().replace(/^W\//, '').replace(/"/g, ''));

/**
 * RFC 7232 preconditions as S3 applies them: If-Match / If-Unmodified-Since fail with 412;
 * If-None-Match / If-Modified-Since give 304 on GET and HEAD.
 */
export function checkConditions(
  row: Pick<ObjectRow, 'etag' | 'last_modified'>,
  get: (name: string) => string | undefined,
  prefix = '',
  notModifiedStatus: 304 | 412 = 304,
): void {
  const etag = row.etag;
  const modified = Math.floor(Number(row.last_modified) / 1000) * 1000;
  const ifMatch = get(`${prefix}if-match`);
  const ifNoneMatch = get(`${prefix}if-none-match`);
  const ifModifiedSince = get(`${prefix}if-modified-since`);
  const ifUnmodifiedSince = get(`${prefix}if-unmodified-since`);
  if (ifMatch !== undefined) {
    const list = etagList(ifMatch);
    if (!list.includes('*') && !list.includes(etag))
      throw s3Errors.preconditionFailed(`${prefix ? 'x-amz-copy-source-' : ''}If-Match`);
  } else if (ifUnmodifiedSince !== undefined) {
    const t = Date.parse(ifUnmodifiedSince);
    if (!Number.isNaN(t) && modified > t)
      throw s3Errors.preconditionFailed(`${prefix ? 'x-amz-copy-source-' : ''}If-Unmodified-Since`);
  }
  const notModified = () =>
    notModifiedStatus === 304
      ? new S3Error(
          'NotModified',
          304,
          'Not Modified',
          {},
          { etag: quoteEtag(etag), 'last-modified': httpDate(Number(row.last_modified)) },
        )
      : s3Errors.preconditionFailed(`x-amz-copy-source-If-None-Match`);
  if (ifNoneMatch !== undefined) {
    const list = etagList(ifNoneMatch);
    if (list.includes('*') || list.includes(etag)) throw notModified();
  } else if (ifModifiedSince !== undefined) {
    const t = Date.parse(ifModifiedSince);
    if (!Number.isNaN(t) && modified <= t) throw notModified();
  }
}

/** A single byte range of `size` bytes, null for the whole object; throws InvalidRange when unsatisfiable. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null; // not a single range: S3 sends the whole object
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) throw rangeError(size);
    if (size === 0) throw rangeError(size);
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return null;
  if (start >= size) throw rangeError(size);
  return { start, end };
}

function rangeError(size: number): S3Error {
  const e = s3Errors.invalidRange(size);
  return new S3Error(e.code, e.status, e.message, e.extra, { 'content-range': `bytes */${size}` });
}
