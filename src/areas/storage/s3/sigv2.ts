import { createHmac } from 'node:crypto';
import { S3Error, s3Errors } from './errors.js';
import { type SignedRequest, safeEqual } from './sigv4.js';

/**
 * AWS Signature Version 2 as S3 defined it, for older tools: the `Authorization: AWS id:sig`
 * header and presigned query strings (`AWSAccessKeyId`, `Expires`, `Signature`). The signature is
 * base64(HMAC-SHA1(secret, StringToSign)) with
 *   StringToSign = Verb \n Content-MD5 \n Content-Type \n Date-or-Expires \n
 *                  CanonicalizedAmzHeaders CanonicalizedResource
 */

/**
 * The query parameters that are part of the CanonicalizedResource. Clients disagree on the newer
 * ones (botocore leaves out `encryption`, `retention` …, MinIO's and s3cmd's lists differ), so a
 * request is also tried without the parameters in LATE_SUBRESOURCES before it is refused.
 */
export const SUBRESOURCES = new Set([
  'accelerate',
  'acl',
  'analytics',
  'cors',
  'delete',
  'inventory',
  'lifecycle',
  'location',
  'logging',
  'metrics',
  'notification',
  'object-lock',
  'partNumber',
  'policy',
  'replication',
  'requestPayment',
  'response-cache-control',
  'response-content-disposition',
  'response-content-encoding',
  'response-content-language',
  'response-content-type',
  'response-expires',
  'restore',
  'select',
  'select-type',
  'tagging',
  'torrent',
  'uploadId',
  'uploads',
  'versionId',
  'versioning',
  'versions',
  'website',
]);
export const LATE_SUBRESOURCES = new Set([
  'attributes',
  'encryption',
  'legal-hold',
  'ownershipControls',
  'policyStatus',
  'publicAccessBlock',
  'retention',
]);

export interface V2Credential {
  kind: 'header' | 'query';
  accessKeyId: string;
  /** Base64, as sent (the query form already URL-decoded). */
  signature: string;
  /** Header form: the time the request says it was signed (x-amz-date, else Date), as sent. */
  dateText: string | null;
  /** Query form: the epoch second the URL stops working. */
  expires: number | null;
}

const header = (req: SignedRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

const queryOf = (url: string) => {
  const q = url.indexOf('?');
  return q >= 0 ? url.slice(q + 1) : '';
};

/** Whether the request is signed with Signature Version 2 (and not with version 4). */
export function isV2Request(req: SignedRequest): boolean {
  const auth = header(req, 'authorization');
  if (auth !== undefined) return auth.startsWith('AWS ');
  const params = new URLSearchParams(queryOf(req.url));
  return params.has('AWSAccessKeyId') && !params.has('X-Amz-Algorithm');
}

/** The V2 credential the request carries, checked for form only. */
export function parseV2Credential(req: SignedRequest): V2Credential {
  const auth = header(req, 'authorization');
  if (auth !== undefined) {
    const value = auth.slice(4).trim();
    const colon = value.lastIndexOf(':');
    if (colon <= 0 || colon === value.length - 1)
      throw s3Errors.invalidArgument(
        'AWS authorization header is invalid.  Expected AwsAccessKeyId:signature',
        'Authorization',
        auth,
      );
    const dateText = header(req, 'x-amz-date') ?? header(req, 'date') ?? null;
    return {
      kind: 'header',
      accessKeyId: value.slice(0, colon),
      signature: value.slice(colon + 1),
      dateText,
      expires: null,
    };
  }
  const params = new URLSearchParams(queryOf(req.url));
  const accessKeyId = params.get('AWSAccessKeyId') ?? '';
  const signature = params.get('Signature');
  const expires = params.get('Expires');
  if (!accessKeyId || signature === null || expires === null)
    throw s3Errors.accessDenied(
      'Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters',
    );
  if (!/^\d+$/.test(expires))
    throw s3Errors.accessDenied(`Invalid date (should be seconds since epoch): ${expires}`);
  // Base64 has no spaces: a '+' a client left unescaped arrives decoded as one.
  return {
    kind: 'query',
    accessKeyId,
    signature: signature.replace(/ /g, '+'),
    dateText: null,
    expires: Number(expires),
  };
}

/** The signing time of a header-signed request in epoch ms, or null when it has none. */
export function v2SignedAt(cred: V2Credential): number | null {
  if (cred.dateText === null) return null;
  const ms = Date.parse(cred.dateText);
  // Before the epoch is not a date S3 takes at all (AccessDenied, not RequestTimeTooSkewed).
  return Number.isNaN(ms) || ms < 0 ? null : ms;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The CanonicalizedResource: `/bucket` for a virtual-hosted request, the path as sent, sub-resources. */
export function canonicalResource(url: string, virtualBucket: string | null, withLate: boolean): string {
  const q = url.indexOf('?');
  const path = q >= 0 ? url.slice(0, q) : url;
  const pairs: [string, string | null][] = [];
  for (const part of queryOf(url).split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = safeDecode(eq >= 0 ? part.slice(0, eq) : part);
    if (!SUBRESOURCES.has(name) && !(withLate && LATE_SUBRESOURCES.has(name))) continue;
    pairs.push([name, eq >= 0 ? safeDecode(part.slice(eq + 1)) : null]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const sub = pairs.map(([k, v]) => (v === null ? k : `${k}=${v}`)).join('&');
  return `${virtualBucket ? `/${virtualBucket}` : ''}${path}${sub ? `?${sub}` : ''}`;
}

/** x-amz-* headers: lower-cased, sorted, repeated ones joined with commas, values unfolded and trimmed. */
function canonicalAmzHeaders(req: SignedRequest, skipDate: boolean, extra: [string, string][]): string {
  const values = new Map<string, string[]>();
  const add = (name: string, value: string) => {
    const list = values.get(name);
    const v = value.trim().replace(/\s*\r?\n\s*/g, ' ');
    if (list) list.push(v);
    else values.set(name, [v]);
  };
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    if (!name.startsWith('x-amz-') || (skipDate && name === 'x-amz-date')) continue;
    add(name, req.rawHeaders[i + 1]!);
  }
  for (const [name, value] of extra) add(name, value);
  return [...values.keys()]
    .sort()
    .map((n) => `${n}:${values.get(n)!.join(',')}\n`)
    .join('');
}

/**
 * The StringToSign variants a correct client may have signed, the one AWS documents first.
 * Variants cover what clients really do: the Date slot left empty when x-amz-date is sent (MinIO,
 * s3cmd, botocore) or filled with it (AWS's own example), the newer sub-resources left out, a
 * path-style bucket with or without its trailing slash, and x-amz-* query parameters of a presigned URL signed as headers (as Ceph RGW reads them).
 */
export function stringsToSign(
  req: SignedRequest,
  cred: V2Credential,
  virtualBucket: string | null,
): string[] {
  const md5 = header(req, 'content-md5') ?? '';
  const type = header(req, 'content-type') ?? '';
  const amzDate = header(req, 'x-amz-date');
  const slots: { date: string; skipAmzDate: boolean; extra: [string, string][] }[] = [];
  if (cred.kind === 'query') {
    slots.push({ date: String(cred.expires), skipAmzDate: false, extra: [] });
    const extra: [string, string][] = [];
    for (const [k, v] of new URLSearchParams(queryOf(req.url)))
      if (k.toLowerCase().startsWith('x-amz-')) extra.push([k.toLowerCase(), v]);
    if (extra.length) slots.push({ date: String(cred.expires), skipAmzDate: false, extra });
  } else if (amzDate !== undefined) {
    slots.push({ date: '', skipAmzDate: false, extra: [] });
    slots.push({ date: amzDate, skipAmzDate: true, extra: [] });
  } else {
    slots.push({ date: header(req, 'date') ?? '', skipAmzDate: false, extra: [] });
  }
  const resources = new Set([
    canonicalResource(req.url, virtualBucket, true),
    canonicalResource(req.url, virtualBucket, false),
  ]);
  // A path-style bucket request (`/bucket?…`): botocore signs `/bucket/`, as the virtual-hosted form.
  const path = req.url.split('?', 1)[0]!;
  if (!virtualBucket && /^\/[^/]+$/.test(path)) {
    const slashed = `${path}/${req.url.slice(path.length)}`;
    resources.add(canonicalResource(slashed, null, true));
    resources.add(canonicalResource(slashed, null, false));
  }
  const out: string[] = [];
  for (const s of slots) {
    const head = `${req.method}\n${md5}\n${type}\n${s.date}\n${canonicalAmzHeaders(req, s.skipAmzDate, s.extra)}`;
    for (const r of resources) out.push(head + r);
  }
  return out;
}

// Hashed as UTF-8: sub-resource values in the StringToSign are decoded from the URL, so raw UTF-8
// header values (one character per byte here) are not yet verified as signed under version 2.
export const signV2 = (secret: string, stringToSign: string) =>
  createHmac('sha1', secret).update(stringToSign, 'utf8').digest('base64');

/** Checks the signature in constant time against every variant; refuses as AWS does. */
export function verifyV2(
  req: SignedRequest,
  cred: V2Credential,
  secret: string,
  virtualBucket: string | null,
): void {
  const candidates = stringsToSign(req, cred, virtualBucket);
  let ok = false;
  // Every variant is computed and compared, so the time taken does not say which came close.
  for (const s of candidates) if (safeEqual(signV2(secret, s), cred.signature)) ok = true;
  if (ok) return;
  const first = candidates[0]!;
  throw new S3Error(
    'SignatureDoesNotMatch',
    403,
    'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    {
      AWSAccessKeyId: cred.accessKeyId,
      StringToSign: first,
      SignatureProvided: cred.signature,
      StringToSignBytes: [...Buffer.from(first, 'utf8')]
        .map((b) => b.toString(16).padStart(2, '0'))
        .join(' '),
    },
  );
}

/** A V2 `Authorization` header for a request (tests and tools). */
export function authorizationV2(accessKeyId: string, secret: string, stringToSign: string): string {
  return `AWS ${accessKeyId}:${signV2(secret, stringToSign)}`;
}

/** A V2 presigned URL: GET (or `method`) of `path` until `expires` (epoch seconds). */
export function presignUrlV2(opts: {
  method?: string;
  endpoint: string;
  /** The path as it will be sent, already percent-encoded, with the bucket (path style). */
  path: string;
  accessKeyId: string;
  secret: string;
  expires: number;
  contentType?: string;
}): string {
  const sts = `${opts.method ?? 'GET'}\n\n${opts.contentType ?? ''}\n${opts.expires}\n${opts.path}`;
  const params = new URLSearchParams({
    AWSAccessKeyId: opts.accessKeyId,
    Expires: String(opts.expires),
    Signature: signV2(opts.secret, sts),
  });
  return `${opts.endpoint.replace(/\/$/, '')}${opts.path}?${params.toString()}`;
}
