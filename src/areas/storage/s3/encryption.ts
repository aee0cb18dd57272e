import { createHash } from 'node:crypto';
import { isAppError } from '../../../kernel/errors.js';
import type { BucketRecord, KmsKeyring } from '../data-plane-contract.js';
import {
  type KmsRecord,
  newCustomerSealing,
  newServerSealing,
  parseSse,
  type Sealing,
  type SseRecord,
} from '../objects/sse.js';
import type { S3Call } from './context.js';
import { S3Error, s3Errors } from './errors.js';

/**
 * Server-side encryption as S3 requests it: `x-amz-server-side-encryption: AES256` (SSE-S3),
 * `aws:kms` (SSE-KMS, with the customer's KMS keys), the customer-key headers (SSE-C), or the
 * bucket's default. Whatever Fjord does not do (DSSE) is refused before any byte is stored: an
 * ignored header would leave plaintext the client believes sealed.
 */

export interface CustomerKey {
  key: Buffer;
  /** As the client sent it (base64 MD5 of the key): echoed in answers, never stored. */
  keyMd5: string;
}

const SSE_C = 'x-amz-server-side-encryption-customer-';
const COPY_SOURCE_SSE_C = 'x-amz-copy-source-server-side-encryption-customer-';

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
  const argName = prefix ? COPY_SOURCE_SSE_C : SSE_C;
  const alg = call.header(`${argName}algorithm`);
  const key = call.header(`${argName}key`);
  const md5 = call.header(`${argName}key-md5`);
  if (alg === undefined && key === undefined && md5 === undefined) return null;
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

/**
 * A KMS key operation, with the key service's refusals as S3 answers them for SSE-KMS: 400
 * `KMS.NotFoundException` (unknown keys and other customers' keys alike), 400
 * `KMS.DisabledException`, and 400 `KMS.KMSInvalidStateException` for a key pending deletion or
 * destroyed.
 */
export async function viaKms<T>(call: S3Call, fn: (kms: KmsKeyring) => Promise<T>): Promise<T> {
  const kms = call.env.directory.kms;
  if (!kms || !call.env.objects.secrets)
    throw s3Errors.notImplemented('Server-side encryption with KMS keys is not available on this server.');
  try {
    return await fn(kms);
  } catch (err) {
    if (isAppError(err) && err.code === 'kms_key_not_found')
      throw new S3Error('KMS.NotFoundException', 400, err.message);
    if (isAppError(err) && err.code === 'kms_key_disabled')
      throw new S3Error('KMS.DisabledException', 400, err.message);
    if (isAppError(err) && err.code === 'kms_key_invalid_state')
      throw new S3Error('KMS.KMSInvalidStateException', 400, err.message);
    throw err;
  }
}

const CONTEXT = 'x-amz-server-side-encryption-context';
const BUCKET_KEY = 'x-amz-server-side-encryption-bucket-key-enabled';

/**
 * `x-amz-server-side-encryption-context`: base64 of a JSON object of strings, as AWS KMS takes
 * it. Kept as canonical JSON (keys sorted), so the same pairs in any order open the object.
 */
export function encryptionContextOf(value: string): string {
  const bad = () =>
    s3Errors.invalidArgument(
      'The encryption context must be base64 of a JSON object whose values are strings.',
      CONTEXT,
      value.slice(0, 200),
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
  } catch {
    throw bad();
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw bad();
  const pairs = Object.entries(parsed as Record<string, unknown>);
  if (pairs.some(([, v]) => typeof v !== 'string')) throw bad();
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(Object.fromEntries(pairs));
}

async function newKmsSealing(
  call: S3Call,
  customerId: string,
  ref: string | null,
  field: (name: string) => string | undefined,
): Promise<Sealing> {
  const contextText = field(CONTEXT);
  const context = contextText === undefined ? null : encryptionContextOf(contextText);
  const k = await viaKms(call, (kms) => kms.generateDataKey(customerId, ref, context));
  const record: KmsRecord = {
    alg: 'aws:kms',
    keyId: k.keyId,
    arn: k.arn,
    version: k.version,
    wrapped: k.wrapped,
  };
  if (context !== null) record.context = context;
  if ((field(BUCKET_KEY) ?? '').toLowerCase() === 'true') record.bucketKey = true;
  return { record, key: k.plaintext };
}

/** The data key of an SSE-KMS object or upload, unwrapped by the key's owner's KMS key. */
export function kmsDataKey(call: S3Call, record: KmsRecord): Promise<Buffer> {
  const owner = record.arn.split(':')[4]!;
  return viaKms(call, (kms) =>
    kms.decryptDataKey(owner, record.keyId, record.version, record.wrapped, record.context ?? null),
  );
}

/** The sealing a write (PUT, copy, POST form, CreateMultipartUpload) gets, or null for plaintext. */
export async function sealingFor(
  call: S3Call,
  bucket: BucketRecord,
  field: (name: string) => string | undefined = (n) => call.header(n),
): Promise<{ sealing: Sealing | null; customer: CustomerKey | null }> {
  const customer = customerKeyOf(call);
  const sse = field('x-amz-server-side-encryption');
  if (field('x-amz-server-side-encryption-aws-kms-key-id') !== undefined && sse !== 'aws:kms')
    throw s3Errors.invalidArgument(
      'Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms',
      'x-amz-server-side-encryption-aws-kms-key-id',
    );
  const kms = sse === 'aws:kms' || (sse === undefined && !customer && bucket.defaultEncryption === 'aws:kms');
  if (field(CONTEXT) !== undefined && !kms)
    throw s3Errors.invalidArgument(
      'An encryption context applies only to Server Side Encryption with AWS KMS keys (aws:kms).',
      CONTEXT,
    );
  if (sse !== undefined) {
    if (customer)
      throw s3Errors.invalidArgument(
        'Server Side Encryption with Customer provided key is incompatible with the encryption method specified',
        'x-amz-server-side-encryption',
        sse,
      );
    if (sse === 'aws:kms:dsse')
      throw s3Errors.notImplemented(
        'Dual-layer server-side encryption (DSSE-KMS) is not supported; the object was not stored. Use aws:kms, AES256 or a customer-provided key.',
      );
    if (sse !== 'AES256' && sse !== 'aws:kms')
      throw s3Errors.invalidArgument(
        'The encryption method specified is not supported',
        'x-amz-server-side-encryption',
        sse,
      );
  }
  if (customer) return { sealing: newCustomerSealing(customer.key), customer };
  if (sse === 'aws:kms') {
    const ref = field('x-amz-server-side-encryption-aws-kms-key-id') ?? null;
    return { sealing: await newKmsSealing(call, bucket.customerId, ref, field), customer: null };
  }
  if (sse === undefined && bucket.defaultEncryption === 'aws:kms')
    return {
      sealing: await newKmsSealing(call, bucket.customerId, bucket.defaultKmsKeyId ?? null, field),
      customer: null,
    };
  if (sse === 'AES256' || bucket.defaultEncryption === 'AES256')
    return { sealing: newServerSealing(call.env.objects.secrets), customer: null };
  return { sealing: null, customer: null };
}

/**
 * The key a stored object (or a multipart upload's parts) is opened with, checked against how it
 * is sealed: SSE-C needs the customer's key that sealed it, SSE-KMS the data key its KMS key
 * unwraps (refused while that key is disabled), anything else no key. For SSE-KMS the answer
 * carries the data key with an empty `keyMd5`.
 */
export async function keyToOpen(
  call: S3Call,
  sse: string | null,
  prefix: '' | 'copy-source-' = '',
  /** False for answers without the bytes (HEAD, attributes), which S3 gives without asking KMS. */
  bytes = true,
): Promise<CustomerKey | null> {
  const customer = customerKeyOf(call, prefix);
  const record = parseSse(sse);
  if (record?.alg !== 'SSE-C') {
    if (customer)
      throw s3Errors.invalidRequest('The encryption parameters are not applicable to this object.');
    return record?.alg === 'aws:kms' && bytes ? { key: await kmsDataKey(call, record), keyMd5: '' } : null;
  }
  if (!customer)
    throw s3Errors.invalidRequest(
      'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.',
    );
  // Checked here so a wrong key is refused before any byte is read (openingKey checks again).
  call.env.objects.openingKey(sse, customer.key);
  return customer;
}

/**
 * The encryption headers of an answer about an object sealed as `sse`. A write's answer (PUT,
 * copy, CreateMultipartUpload) also gives back the encryption context, as S3 does; reads do not.
 */
export function sseHeaders(
  sse: string | Sealing | null,
  customer: CustomerKey | null,
): Record<string, string> {
  const record: SseRecord | null = typeof sse === 'string' || sse === null ? parseSse(sse) : sse.record;
  if (!record) return {};
  if (record.alg === 'AES256') return { 'x-amz-server-side-encryption': 'AES256' };
  if (record.alg === 'aws:kms') {
    const headers: Record<string, string> = {
      'x-amz-server-side-encryption': 'aws:kms',
      'x-amz-server-side-encryption-aws-kms-key-id': record.arn,
    };
    if (record.bucketKey) headers[BUCKET_KEY] = 'true';
    if (record.context !== undefined && typeof sse === 'object' && sse !== null)
      headers[CONTEXT] = Buffer.from(record.context).toString('base64');
    return headers;
  }
  return {
    [`${SSE_C}algorithm`]: 'AES256',
    ...(customer ? { [`${SSE_C}key-md5`]: customer.keyMd5 } : {}),
  };
}
