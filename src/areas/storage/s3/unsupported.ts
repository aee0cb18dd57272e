import type { S3Call } from './context.js';
import { s3Errors } from './errors.js';

/**
 * Headers asking for what Fjord does not do are refused with S3's own error, never ignored: an
 * ignored ACL header would leave an object more open or less protected than asked. Encryption
 * and object-lock headers are handled by encryption.ts and object-lock.ts, which refuse what
 * they do not support. `private` and `bucket-owner-full-control` are what every Fjord object
 * already is.
 */
const ACCEPTED_ACLS = new Set(['private', 'bucket-owner-full-control']);

export function refuseUnsupportedWrite(call: S3Call): void {
  refuseAclHeaders(call);
}

export function refuseUnsupportedBucket(call: S3Call): void {
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
