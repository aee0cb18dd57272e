import type { IncomingMessage } from 'node:http';
import type { AccessKeyRecord } from '../data-plane-contract.js';
import type { DirectoryCache } from './directory-cache.js';
import { S3Error, s3Errors } from './errors.js';
import {
  amzDateToMs,
  type Credential,
  MAX_SKEW_MS,
  parseCredential,
  toAmzDate,
  verifySignature,
} from './sigv4.js';

export type Principal = { kind: 'key'; key: AccessKeyRecord; credential: Credential } | { kind: 'anonymous' };

export interface AuthOptions {
  regions: string[];
  /** The emulator clock: presigned URLs expire on it; skew is judged against it or the wall clock. */
  nowMs: () => number;
}

/** Who signed the request, checked: key known, region accepted, time within skew, signature right. */
export async function authenticate(
  req: IncomingMessage,
  cache: DirectoryCache,
  opts: AuthOptions,
): Promise<Principal> {
  const cred = parseCredential({
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    rawHeaders: req.rawHeaders,
    headers: req.headers,
  });
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
    if (signedAt + (cred.expiresSeconds ?? 0) * 1000 < clock) throw s3Errors.expired();
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

/** Whether a key's grants let it take `action` on the named bucket. */
export function keyAllows(key: AccessKeyRecord, bucketName: string, action: string): boolean {
  return key.grants.some(
    (g) =>
      (g.bucket === bucketName || g.bucket === '*') &&
      (g.actions === 'all' || g.actions.includes(action) || g.actions.includes('s3:*')),
  );
}
