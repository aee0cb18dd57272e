import { randomBytes } from 'node:crypto';
import type { SecretBox } from '../../../kernel/secrets.js';
import { INTERNAL_OWNER } from '../objects/internal-owner.js';
import { BodyReader } from './body.js';
import type { S3Call } from './context.js';
import { s3Errors } from './errors.js';
import { attributesFromHeaders } from './handlers/object-headers.js';
import { amzDateToMs, parseCredential, presignUrl, verifySignature } from './sigv4.js';

/**
 * Presigned uploads into one of Fjord's internal buckets (speech uploads). Internal buckets have
 * no row in `storage_buckets`, so the S3 listener cannot name them; this is the one narrow way in.
 *
 * The access key id of the presigned URL *is* the grant: `FJORDUPLOAD.` followed by a sealed
 * (AES-GCM under the data key, so neither readable nor forgeable) record of the bucket, the one
 * key, the largest size and the expiry, plus a random secret the URL is SigV4-signed with. The
 * listener opens it and accepts exactly one thing: a PUT of that key, at most that many bytes,
 * until the expiry. Nothing is stored: the grant lives in the URL.
 */
export const UPLOAD_GRANT_PREFIX = 'FJORDUPLOAD.';

/** The path segment that stands for an internal bucket: `_` is never valid in a customer bucket name. */
export const internalBucketSegment = (purpose: string) => `_fjord-${purpose}`;

interface Grant {
  /** Internal bucket purpose. */
  p: string;
  /** Object key. */
  k: string;
  /** Largest body in bytes. */
  s: number;
  /** Expiry, epoch ms (the kernel clock). */
  e: number;
  /** The SigV4 secret the URL is signed with. */
  x: string;
}

export interface UploadSigner {
  secrets: SecretBox;
  endpoint(): string;
  region: string;
  nowMs(): number;
}

export function presignInternalPut(
  signer: UploadSigner,
  purpose: string,
  key: string,
  maxBytes: number,
  expiresSeconds: number,
): string {
  const now = signer.nowMs();
  const grant: Grant = {
    p: purpose,
    k: key,
    s: maxBytes,
    e: now + expiresSeconds * 1000,
    x: randomBytes(24).toString('base64url'),
  };
  return presignUrl({
    method: 'PUT',
    endpoint: signer.endpoint(),
    path: `/${internalBucketSegment(purpose)}/${key}`,
    accessKeyId: UPLOAD_GRANT_PREFIX + signer.secrets.seal(JSON.stringify(grant)),
    secret: grant.x,
    region: signer.region,
    nowMs: now,
    expiresSeconds,
  });
}

/** True when the request presents an internal upload grant (decided before normal authentication). */
export const isInternalUpload = (query: URLSearchParams): boolean =>
  (query.get('X-Amz-Credential') ?? '').startsWith(UPLOAD_GRANT_PREFIX);

/** Serves a presigned internal PUT: everything about the grant is checked before a byte is read. */
export async function internalUpload(call: S3Call, secrets: SecretBox | undefined): Promise<void> {
  const req = call.req;
  const signed = {
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    rawHeaders: req.rawHeaders,
    headers: req.headers,
  };
  const cred = parseCredential(signed);
  if (!secrets || !cred || cred.kind !== 'query') throw s3Errors.accessDenied();
  let grant: Grant;
  try {
    grant = JSON.parse(secrets.open(cred.accessKeyId.slice(UPLOAD_GRANT_PREFIX.length))) as Grant;
  } catch {
    throw s3Errors.invalidAccessKeyId();
  }
  const now = call.env.clock.nowMs();
  const signedAt = amzDateToMs(cred.amzDate) ?? 0;
  if (grant.e < now || signedAt + (cred.expiresSeconds ?? 0) * 1000 < now) throw s3Errors.expired();
  if (!verifySignature(signed, cred, grant.x)) throw s3Errors.signatureMismatch();
  // Only the one key, only PUT: anything else this URL could be bent into is refused.
  if (req.method !== 'PUT' || call.bucketName !== internalBucketSegment(grant.p) || call.key !== grant.k)
    throw s3Errors.accessDenied();
  const body = new BodyReader(req, cred, grant.x, grant.s);
  call.continueIfExpected();
  const ref = {
    id: `${INTERNAL_OWNER}:${grant.p}`,
    customerId: INTERNAL_OWNER,
    versioning: 'Unversioned' as const,
  };
  const { etag } = await call.env.objects.putObject(ref, grant.k, body, attributesFromHeaders(req.headers));
  call.send(200, { etag: `"${etag}"` });
}
