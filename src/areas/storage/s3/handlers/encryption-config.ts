import type { S3Call } from '../context.js';
import { viaKms } from '../encryption.js';
import { S3Error, s3Errors } from '../errors.js';
import { asText, el, parseXml } from '../xml.js';
import { viaDirectory } from './configuration.js';

/**
 * Bucket default encryption (`?encryption`): writes that ask for no sealing get SSE-S3. A bucket
 * without one answers ServerSideEncryptionConfigurationNotFoundError, as S3 did before it made
 * SSE-S3 every bucket's default; Fjord stores objects unsealed unless asked (docs/s3.md).
 */

export async function getBucketEncryption(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.defaultEncryption)
    throw new S3Error(
      'ServerSideEncryptionConfigurationNotFoundError',
      404,
      'The server side encryption configuration was not found',
      { BucketName: bucket.name },
    );
  call.xml(
    200,
    'ServerSideEncryptionConfiguration',
    `<Rule><ApplyServerSideEncryptionByDefault>${el('SSEAlgorithm', bucket.defaultEncryption)}${
      bucket.defaultKmsKeyId ? el('KMSMasterKeyID', bucket.defaultKmsKeyId) : ''
    }</ApplyServerSideEncryptionByDefault>${el('BucketKeyEnabled', false)}</Rule>`,
  );
}

export async function putBucketEncryption(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'ServerSideEncryptionConfiguration');
  const rules = Array.isArray(doc.Rule) ? doc.Rule : doc.Rule === undefined ? [] : [doc.Rule];
  if (rules.length !== 1) throw s3Errors.malformedXml();
  const rule = rules[0] as Record<string, unknown>;
  const apply = (rule['ApplyServerSideEncryptionByDefault'] ?? {}) as Record<string, unknown>;
  const algorithm = asText(apply['SSEAlgorithm']);
  if (algorithm === 'aws:kms:dsse')
    throw s3Errors.notImplemented('DSSE-KMS is not supported as a bucket default; use aws:kms or AES256.');
  if (algorithm !== 'AES256' && algorithm !== 'aws:kms') throw s3Errors.malformedXml();
  const keyRef = apply['KMSMasterKeyID'] === undefined ? null : asText(apply['KMSMasterKeyID']);
  if (keyRef !== null && algorithm !== 'aws:kms')
    throw s3Errors.invalidArgument(
      'a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms',
    );
  // A named key must be one of the bucket owner's; it is kept as its ARN. No key: the default key.
  const arn = keyRef
    ? (await viaKms(call, (kms) => kms.resolve(bucket.customerId, keyRef))).arn
    : algorithm === 'aws:kms'
      ? await viaKms(call, async () => null)
      : null;
  await viaDirectory(call, () => call.env.directory.putDefaultEncryption(bucket.name, algorithm, arn));
  call.send(200);
}

export async function deleteBucketEncryption(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  await viaDirectory(call, () => call.env.directory.putDefaultEncryption(bucket.name, null));
  call.send(204);
}
