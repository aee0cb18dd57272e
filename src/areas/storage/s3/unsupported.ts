import type { S3Call } from './context.js';
import { s3Errors } from './errors.js';

/**
 * Headers asking for what Fjord does not do are refused with S3's own error, never ignored: an
 * ignored SSE-C or SSE-KMS header would store plaintext the client believes encrypted, an
 * ignored ACL or object-lock header would leave an object more open or less protected than
 * asked. `AES256` (SSE-S3) is accepted as a request for encryption at rest by the server's
 * storage (docs/s3.md says what that means here); `private` and `bucket-owner-full-control`
 * are what every Fjord object already is.
 */
const ACCEPTED_ACLS = new Set(['private', 'bucket-owner-full-control']);

export function refuseUnsupportedWrite(call: S3Call): void {
  const h = (n: string) => call.header(n);
  if (h('x-amz-server-side-encryption-customer-algorithm') || h('x-amz-server-side-encryption-customer-key'))
    throw s3Errors.notImplemented(
      'Server-side encryption with customer-provided keys (SSE-C) is not supported; the object was not stored.',
    );
  if (h('x-amz-copy-source-server-side-encryption-customer-algorithm'))
    throw s3Errors.notImplemented('SSE-C copy sources are not supported.');
  const sse = h('x-amz-server-side-encryption');
  if (sse !== undefined && sse !== 'AES256') {
    if (sse === 'aws:kms' || sse === 'aws:kms:dsse')
      throw s3Errors.notImplemented('SSE-KMS is not supported; the object was not stored.');
    throw s3Errors.invalidArgument(
      'The encryption method specified is not supported',
      'x-amz-server-side-encryption',
      sse,
    );
  }
  refuseAclHeaders(call);
  for (const n of [
    'x-amz-object-lock-mode',
    'x-amz-object-lock-retain-until-date',
    'x-amz-object-lock-legal-hold',
  ])
    if (h(n) !== undefined)
      throw s3Errors.notImplemented('Object lock is not supported; the object was not stored.');
}

export function refuseUnsupportedBucket(call: S3Call): void {
  if ((call.header('x-amz-bucket-object-lock-enabled') ?? '').toLowerCase() === 'true')
    throw s3Errors.notImplemented('Object lock is not supported; the bucket was not created.');
  refuseAclHeaders(call);
}

function refuseAclHeaders(call: S3Call): void {
  const acl = call.header('x-amz-acl');
  if (acl !== undefined && !ACCEPTED_ACLS.has(acl))
    throw s3Errors.notImplemented(
      `The canned ACL ${acl} is not supported: objects and buckets are private to their owner (use a public bucket through the API).`,
    );
  for (const name of Object.keys(call.req.headers))
    if (name.startsWith('x-amz-grant-')) throw s3Errors.notImplemented('ACL grants are not supported.');
}
