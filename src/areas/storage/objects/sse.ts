import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../../../kernel/secrets.js';
import { S3Error, s3Errors } from '../s3/errors.js';

/**
 * How an object's bytes are sealed, as kept in its row (`sse`, JSON):
 * - `AES256` (SSE-S3): a random data key per object (or per multipart upload), stored only
 *   wrapped by the server's secret box (FJORD_DATA_KEY), so the database alone opens nothing.
 * - `SSE-C`: the customer's own key seals the object and is never stored; only a salted HMAC
 *   of it is kept, to tell a wrong key from a right one before any byte is decrypted.
 * - `aws:kms` (SSE-KMS): a random data key per object (or upload), stored only wrapped by one
 *   version of the customer's KMS key; the S3 layer unwraps it (checking the key is enabled).
 */
export type SseRecord =
  | { alg: 'AES256'; wrapped: string }
  | { alg: 'SSE-C'; salt: string; hmac: string }
  | {
      alg: 'aws:kms';
      keyId: string;
      arn: string;
      version: number;
      wrapped: string;
      /** The writer's encryption context as canonical JSON (keys sorted), bound to `wrapped`. */
      context?: string;
      /** Written with `BucketKeyEnabled`: reported back as S3 does (every object has its own data key). */
      bucketKey?: true;
    };

export type KmsRecord = SseRecord & { alg: 'aws:kms' };

/** A sealing asked for by a write: what goes in the row, and the key that seals the bytes. */
export interface Sealing {
  record: SseRecord;
  key: Buffer;
}

export function parseSse(text: string | null): SseRecord | null {
  return text ? (JSON.parse(text) as SseRecord) : null;
}

export function newServerSealing(secrets: SecretBox | undefined): Sealing {
  if (!secrets)
    throw s3Errors.notImplemented('Server-side encryption needs the data key, which this server lacks.');
  const key = randomBytes(32);
  return { record: { alg: 'AES256', wrapped: secrets.seal(key.toString('base64')) }, key };
}

const keyHmac = (salt: Buffer, customerKey: Buffer) =>
  createHmac('sha256', salt).update('fjord-sse-c-v1').update(customerKey).digest();

export function newCustomerSealing(customerKey: Buffer): Sealing {
  const salt = randomBytes(16);
  return {
    record: {
      alg: 'SSE-C',
      salt: salt.toString('base64'),
      hmac: keyHmac(salt, customerKey).toString('base64'),
    },
    key: customerKey,
  };
}

/** Whether `customerKey` is the key an SSE-C record was sealed with (constant time). */
export function customerKeyMatches(record: SseRecord & { alg: 'SSE-C' }, customerKey: Buffer): boolean {
  const want = Buffer.from(record.hmac, 'base64');
  const got = keyHmac(Buffer.from(record.salt, 'base64'), customerKey);
  return want.length === got.length && timingSafeEqual(want, got);
}

/**
 * The key that opens an object sealed as `record`. SSE-C objects need the customer's key, checked
 * by the caller's request parsing; without one, S3's refusal (400 InvalidRequest) applies.
 * SSE-KMS objects need the data key the caller unwrapped through the KMS key (`suppliedKey`).
 */
export function openingKey(
  record: SseRecord,
  secrets: SecretBox | undefined,
  customerKey: Buffer | null,
): Buffer {
  if (record.alg === 'AES256') {
    if (!secrets) throw s3Errors.internal();
    return Buffer.from(secrets.open(record.wrapped), 'base64');
  }
  if (record.alg === 'aws:kms') {
    if (!customerKey) throw s3Errors.internal();
    return customerKey;
  }
  if (!customerKey)
    throw s3Errors.invalidRequest(
      'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.',
    );
  if (!customerKeyMatches(record, customerKey)) throw new S3Error('AccessDenied', 403, 'Access Denied');
  return customerKey;
}
