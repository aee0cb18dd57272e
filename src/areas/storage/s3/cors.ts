import type { BucketRecord, CorsRule } from '../data-plane-contract.js';

/** Matching of the bucket's CORS document (the same one the API edits), as S3 does it. */

function wildcardMatch(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  if (!pattern.includes('*')) return pattern === value;
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return re.test(value);
}

export function findRule(
  bucket: BucketRecord,
  origin: string,
  method: string,
  requestHeaders: string[] = [],
): CorsRule | null {
  for (const rule of bucket.cors ?? []) {
    if (!rule.allowed_origins.some((o) => wildcardMatch(o, origin))) continue;
    if (!rule.allowed_methods.includes(method.toUpperCase())) continue;
    const allowed = rule.allowed_headers.map((h) => h.toLowerCase());
    if (!requestHeaders.every((h) => allowed.some((a) => wildcardMatch(a, h.toLowerCase())))) continue;
    return rule;
  }
  return null;
}

/** Headers of an answer to a preflight that `rule` allows. */
export function preflightHeaders(
  rule: CorsRule,
  origin: string,
  requestHeaders: string[],
): Record<string, string> {
  const any = rule.allowed_origins.includes('*');
  const h: Record<string, string> = {
    'access-control-allow-origin': any ? '*' : origin,
    'access-control-allow-methods': rule.allowed_methods.join(', '),
    vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method',
  };
  if (!any) h['access-control-allow-credentials'] = 'true';
  if (requestHeaders.length > 0) h['access-control-allow-headers'] = requestHeaders.join(', ');
  const expose = exposeOf(rule);
  if (expose) h['access-control-expose-headers'] = expose;
  if (rule.max_age_seconds !== null) h['access-control-max-age'] = String(rule.max_age_seconds);
  return h;
}

/** Headers added to an actual (non-preflight) answer from a matching rule. */
export function actualHeaders(rule: CorsRule, origin: string): Record<string, string> {
  const any = rule.allowed_origins.includes('*');
  const h: Record<string, string> = {
    'access-control-allow-origin': any ? '*' : origin,
    'access-control-allow-methods': rule.allowed_methods.join(', '),
    vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method',
  };
  if (!any) h['access-control-allow-credentials'] = 'true';
  h['access-control-expose-headers'] = exposeOf(rule);
  if (rule.max_age_seconds !== null) h['access-control-max-age'] = String(rule.max_age_seconds);
  return h;
}

/** The rule's exposed headers, ETag always among them (browser uploads need it for multipart). */
function exposeOf(rule: CorsRule): string {
  const list = [...rule.expose_headers];
  if (!list.some((h) => h.toLowerCase() === 'etag')) list.push('ETag');
  return list.join(', ');
}
