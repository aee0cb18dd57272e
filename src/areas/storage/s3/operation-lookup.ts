import { S3_OPERATIONS, type S3Level, type S3Operation } from './operations.js';

/**
 * How a request finds its entry in the operation table: by method and level, then the first
 * entry whose sub-resource, header and content type the request carries (the table's order decides).
 */
const byMethodAndLevel = new Map<string, S3Operation[]>();
for (const o of S3_OPERATIONS) {
  const k = `${o.method} ${o.level}`;
  byMethodAndLevel.set(k, [...(byMethodAndLevel.get(k) ?? []), o]);
}

const onlyHint = (q: URLSearchParams) => q.size === 0 || (q.size === 1 && q.has('x-id'));

/** The operation a request is, or null (answered 405 MethodNotAllowed). */
export function s3OperationOf(
  method: string,
  level: S3Level,
  query: URLSearchParams,
  header: (name: string) => string | undefined,
): S3Operation | null {
  for (const o of byMethodAndLevel.get(`${method} ${level}`) ?? []) {
    if (o.query && !o.query.every((q) => query.has(q))) continue;
    if (o.header && !header(o.header)) continue;
    if (o.contentType && !o.contentType.test(header('content-type') ?? '')) continue;
    if (o.bareQuery && !onlyHint(query)) continue;
    return o;
  }
  return null;
}

export const levelOf = (bucket: string | null, key: string | null): S3Level =>
  !bucket ? 'service' : !key ? 'bucket' : 'object';
