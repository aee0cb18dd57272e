import type { IncomingMessage } from 'node:http';
import type { AccessKeyRecord } from '../data-plane-contract.js';
import type { DirectoryCache } from './directory-cache.js';
import { S3Error, s3Errors } from './errors.js';
import { isV2Request, parseV2Credential, v2SignedAt, verifyV2 } from './sigv2.js';
import {
  amzDateToMs,
  type Credential,
  MAX_SKEW_MS,
  parseCredential,
  type SignedRequest,
  toAmzDate,
  UNSIGNED_PAYLOAD,
  verifySignature,
} from './sigv4.js';

export type Principal = { kind: 'key'; key: AccessKeyRecord; credential: Credential } | { kind: 'anonymous' };

export interface AuthOptions {
  regions: string[];
  /** The emulator clock: presigned URLs expire on it; skew is judged against it or the wall clock. */
  nowMs: () => number;
  /** Virtual-hosted buckets live under it; Signature Version 2 signs their name. */
  baseDomain?: string | null;
}

/** Who signed the request, checked: key known, region accepted, time within skew, signature right. */
export async function authenticate(
  req: IncomingMessage,
  cache: DirectoryCache,
  opts: AuthOptions,
): Promise<Principal> {
  const signed: SignedRequest = {
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    rawHeaders: req.rawHeaders,
    headers: req.headers,
  };
  if (isV2Request(signed)) return authenticateV2(signed, cache, opts);
  const cred = parseCredential(signed);
  if (!cred) return { kind: 'anonymous' };
  const key = await cache.findAccessKey(cred.accessKeyId);
  if (!key) throw s3Errors.invalidAccessKeyId();
  const malformed = (m: string) =>
    cred.kind === 'header'
      ? s3Errors.authorizationHeaderMalformed(m)
      : s3Errors.authorizationQueryParametersError(m);
  if (cred.service !== 's3')
    throw malformed(
      `The authorization header is malformed; incorrect service "${cred.service}". This endpoint belongs to "s3".`,
    );
  if (!opts.regions.includes(cred.region)) {
    throw new S3Error(
      cred.kind === 'header' ? 'AuthorizationHeaderMalformed' : 'AuthorizationQueryParametersError',
      400,
      `The authorization header is malformed; the region '${cred.region}' is wrong; expecting '${opts.regions[0]}'`,
      { Region: opts.regions[0]! },
    );
  }
  const signedAt = amzDateToMs(cred.amzDate);
  if (signedAt === null || cred.amzDate.slice(0, 8) !== cred.date)
    throw malformed('The credential date does not match the request date.');
  const clock = opts.nowMs();
  const wall = Date.now();
  if (cred.kind === 'query') {
    if (signedAt - MAX_SKEW_MS > Math.max(clock, wall))
      throw s3Errors.accessDenied('Request is not valid yet');
    // The window is [X-Amz-Date, X-Amz-Date + X-Amz-Expires): an X-Amz-Expires of 0 is a URL that
    // was never valid, which AWS refuses as expired (403) even within the second it was signed.
    const expiresSeconds = cred.expiresSeconds ?? 0;
    const expiresAtMs = signedAt + expiresSeconds * 1000;
    if (expiresSeconds === 0 || expiresAtMs < clock)
      throw s3Errors.expired({ expiresSeconds, expiresAtMs, nowMs: clock });
  } else if (Math.abs(signedAt - wall) > MAX_SKEW_MS && Math.abs(signedAt - clock) > MAX_SKEW_MS) {
    throw s3Errors.skewed(cred.amzDate, toAmzDate(clock));
  }
  if (
    !verifySignature(
      { method: req.method ?? 'GET', url: req.url ?? '/', rawHeaders: req.rawHeaders, headers: req.headers },
      cred,
      key.secretKey,
    )
  ) {
    throw s3Errors.signatureMismatch();
  }
  return { kind: 'key', key, credential: cred };
}

/**
 * Signature Version 2: the same key, skew and expiry rules as version 4, so that everything after
 * authentication (grants, policies, ACLs) treats both alike.
 */
async function authenticateV2(
  req: SignedRequest,
  cache: DirectoryCache,
  opts: AuthOptions,
): Promise<Principal> {
  const v2 = parseV2Credential(req);
  const key = await cache.findAccessKey(v2.accessKeyId);
  if (!key) throw s3Errors.invalidAccessKeyId();
  const clock = opts.nowMs();
  const wall = Date.now();
  let signedAt: number;
  if (v2.kind === 'query') {
    const expiresMs = v2.expires! * 1000;
    if (expiresMs < clock) {
      throw new S3Error('AccessDenied', 403, 'Request has expired', {
        Expires: new Date(expiresMs).toISOString(),
        ServerTime: new Date(clock).toISOString(),
      });
    }
    signedAt = clock;
  } else {
    const at = v2SignedAt(v2);
    if (at === null)
      throw new S3Error('AccessDenied', 403, 'AWS authentication requires a valid Date or x-amz-date header');
    if (Math.abs(at - wall) > MAX_SKEW_MS && Math.abs(at - clock) > MAX_SKEW_MS)
      throw s3Errors.skewed(v2.dateText!, new Date(clock).toISOString());
    signedAt = at;
  }
  verifyV2(req, v2, key.secretKey, virtualBucketOf(req, opts.baseDomain ?? null));
  const payload = req.headers['x-amz-content-sha256'];
  const payloadHash = typeof payload === 'string' ? payload : UNSIGNED_PAYLOAD;
  // Chunk signatures are a version 4 construct: a V2 request cannot carry them.
  if (payloadHash.startsWith('STREAMING-AWS4-'))
    throw s3Errors.invalidRequest('Signed aws-chunked payloads need Signature Version 4.');
  const credential: Credential = {
    kind: v2.kind,
    accessKeyId: v2.accessKeyId,
    date: toAmzDate(signedAt).slice(0, 8),
    region: opts.regions[0] ?? '',
    service: 's3',
    signedHeaders: [],
    signature: v2.signature,
    amzDate: toAmzDate(signedAt),
    expiresSeconds: v2.expires === null ? null : Math.max(0, Math.round(v2.expires - clock / 1000)),
    payloadHash,
    version: 2,
  };
  return { kind: 'key', key, credential };
}

/** The bucket named by the Host header (virtual-hosted style), or null for path style. */
function virtualBucketOf(req: SignedRequest, baseDomain: string | null): string | null {
  const host = String(req.headers['host'] ?? '')
    .replace(/:\d+$/, '')
    .toLowerCase();
  return baseDomain && host.endsWith(`.${baseDomain}`) ? host.slice(0, -baseDomain.length - 1) : null;
}

/** Whether a key's grants let it take `action` on the named bucket. */
export function keyAllows(key: AccessKeyRecord, bucketName: string, action: string): boolean {
  return key.grants.some(
    (g) =>
      (g.bucket === bucketName || g.bucket === '*') &&
      (g.actions === 'all' || g.actions.includes(action) || g.actions.includes('s3:*')),
  );
}
