import { createHash } from 'node:crypto';
import type { BucketRecord } from '../data-plane-contract.js';
import { newCustomerSealing, newServerSealing, parseSse, type Sealing } from '../objects/sse.js';
import type { S3Call } from './context.js';
import { S3Error, s3Errors } from './errors.js';

/**
 * Server-side encryption as S3 requests it: `x-amz-server-side-encryption: AES256` (SSE-S3), the
 * customer-key headers (SSE-C), or the bucket's default. Whatever Fjord does not do (SSE-KMS,
 * DSSE) is refused before any byte is stored: an ignored header would leave plaintext the client
 * believes sealed.
 */

export interface CustomerKey {
  key: Buffer;
  /** As the client sent it (base64 MD5 of the key): echoed in answers, never stored. */
  keyMd5: string;
}

const SSE_C = 'x-amz-server-side-encryption-customer-';

/**
 * SSE-C sends a key in the request: S3 refuses it over plain HTTP. Fjord accepts a TLS socket, a
 * TLS-terminating proxy that says so, or loopback (the local emulator and its tests), where no
 * one else sees the key on the wire.
 */
function secureTransport(call: S3Call): boolean {
  if ((call.req.socket as { encrypted?: boolean }).encrypted) return true;
  if ((call.header('x-forwarded-proto') ?? '').toLowerCase() === 'https') return true;
  const peer = call.req.socket.remoteAddress ?? '';
  return peer === '127.0.0.1' || peer === '::1' || peer === '::ffff:127.0.0.1';
}

/** The customer key a request carries (`prefix` `copy-source-` for a copy's source), checked as S3 checks it. */
export function customerKeyOf(call: S3Call, prefix: '' | 'copy-source-' = ''): CustomerKey | null {
  const h = (n: string) => call.header(`x-amz-${prefix}${SSE_C.slice('x-amz-'.length)}${n}`);
  const [alg, key, md5] = [h('algorithm'), h('key'), h('key-md5')];
  if (alg === undefined && key === undefined && md5 === undefined) return null;
  const argName = `x-amz-${prefix}${SSE_C.slice('x-amz-'.length)}`;
  if (alg === undefined)
    throw s3Errors.invalidArgument(
      'Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.',
      `${argName}algorithm`,
    );
  if (alg !== 'AES256')
    throw new S3Error(
      'InvalidEncryptionAlgorithmError',
      400,
      'The encryption request you specified is not valid. The valid value is AES256.',
      { ArgumentName: `${argName}algorithm`, ArgumentValue: alg },
    );
  const decoded = Buffer.from(key ?? '', 'base64');
  if (key === undefined || decoded.length !== 32)
    throw s3Errors.invalidArgument(
      'The secret key was invalid for the specified algorithm.',
      `${argName}key`,
    );
  if (md5 === undefined)
    throw s3Errors.invalidArgument(
      'Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.',
      `${argName}key-MD5`,
    );
  if (md5 !== createHash('md5').update(decoded).digest('base64'))
    throw s3Errors.invalidArgument(
      'The calculated MD5 hash of the key did not match the hash that was provided.',
      `${argName}key-MD5`,
    );
  if (!secureTransport(call))
    throw s3Errors.invalidRequest(
      'Requests specifying Server Side Encryption with Customer provided keys must be made over a secure connection.',
    );
  return { key: decoded, keyMd5: md5 };
}

/** The sealing a write (PUT, copy, POST form, CreateMultipartUpload) gets, or null for plaintext. */
export function sealingFor(
  call: S3Call,
  bucket: BucketRecord,
  field: (name: string) => string | undefined = (n) => call.header(n),
): { sealing: Sealing | null; customer: CustomerKey | null } {
  const customer = customerKeyOf(call);
  const sse = field('x-amz-server-side-encryption');
  if (field('x-amz-server-side-encryption-aws-kms-key-id') !== undefined && sse !== 'aws:kms')
    throw s3Errors.invalidArgument(
      'Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms',
      'x-amz-server-side-encryption-aws-kms-key-id',
    );
  if (sse !== undefined) {
    if (customer)
      throw s3Errors.invalidArgument(
        'Server Side Encryption with Customer provided key is incompatible with the encryption method specified',
        'x-amz-server-side-encryption',
        sse,
      );
    if (sse === 'aws:kms' || sse === 'aws:kms:dsse')
      throw s3Errors.notImplemented(
        'Server-side encryption with KMS keys (SSE-KMS, DSSE-KMS) is not supported; the object was not stored. Use AES256 or a customer-provided key.',
      );
    if (sse !== 'AES256')
      throw s3Errors.invalidArgument(
        'The encryption method specified is not supported',
        'x-amz-server-side-encryption',
        sse,
      );
  }
  if (customer) return { sealing: newCustomerSealing(customer.key), customer };
  if (sse === 'AES256' || bucket.defaultEncryption === 'AES256')
    return { sealing: newServerSealing(call.env.objects.secrets), customer: null };
  return { sealing: null, customer: null };
}

/**
 * The customer key that opens a stored object (or a multipart upload's parts), checked against
 * how it is sealed: SSE-C needs the key that sealed it, anything else takes no key.
 */
export function keyToOpen(
  call: S3Call,
  sse: string | null,
  prefix: '' | 'copy-source-' = '',
): CustomerKey | null {
  const customer = customerKeyOf(call, prefix);
  if (parseSse(sse)?.alg !== 'SSE-C') {
    if (customer)
      throw s3Errors.invalidRequest('The encryption parameters are not applicable to this object.');
    return null;
  }
  if (!customer)
    throw s3Errors.invalidRequest(
      'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.',
    );
  // Checked here so a wrong key is refused before any byte is read (openingKey checks again).
  call.env.objects.openingKey(sse, customer.key);
  return customer;
}

/** The encryption headers of an answer about an object sealed as `sse`. */
export function sseHeaders(
  sse: string | Sealing | null,
  customer: CustomerKey | null,
): Record<string, string> {
  const record = typeof sse === 'string' || sse === null ? parseSse(sse) : sse.record;
  if (!record) return {};
  if (record.alg === 'AES256') return { 'x-amz-server-side-encryption': 'AES256' };
  return {
    [`${SSE_C}algorithm`]: 'AES256',
    ...(customer ? { [`${SSE_C}key-md5`]: customer.keyMd5 } : {}),
  };
}
