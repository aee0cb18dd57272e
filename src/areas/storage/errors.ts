import { AppError, type ErrorKind, type FieldProblem, kernelErrors } from '../../kernel/errors.js';

/** The storage area's error catalogue. The S3 data plane renders the same errors as S3 XML. */
export const storageErrors = {
  bucketNotFound: () => new AppError('not_found', 'bucket_not_found', 'Bucket not found.'),
  keyNotFound: () => new AppError('not_found', 'key_not_found', 'Key not found.'),
  corsNotFound: () => new AppError('not_found', 'cors_not_found', 'The bucket has no CORS configuration.'),
  lifecycleNotFound: () =>
    new AppError('not_found', 'lifecycle_not_found', 'The bucket has no lifecycle configuration.'),
  bucketNameTaken: () =>
    new AppError('conflict', 'bucket_name_taken', 'A bucket with this name already exists.'),
  bucketNameRetired: () =>
    new AppError(
      'conflict',
      'bucket_name_unavailable',
      'This name belonged to a deleted bucket; bucket names are never reused.',
    ),
  bucketNotEmpty: () =>
    new AppError(
      'conflict',
      'bucket_not_empty',
      'The bucket is not empty: delete every object, version and incomplete multipart upload first.',
    ),
  objectNotFound: (key: string) =>
    new AppError('not_found', 'object_not_found', `No object ${key} in the bucket.`),
  /** An object request through the API refused by the S3 data plane: its S3 error code, as a reason. */
  objectRequestRefused: (status: number, s3Code: string, message: string) =>
    new AppError(kindOfS3Status(status), 'object_request_refused', `${message} (S3 ${s3Code})`),
  objectCustomerEncrypted: (key: string) =>
    new AppError(
      'conflict',
      'object_customer_encrypted',
      `The object ${key} is encrypted with a customer-provided key (SSE-C); Fjord cannot read it without that key.`,
    ),
  objectKmsEncrypted: (key: string) =>
    new AppError(
      'conflict',
      'object_kms_encrypted',
      `The object ${key} is encrypted with an SSE-KMS key; Fjord's own services do not open such objects.`,
    ),
  bucketLimit: (max: number) =>
    new AppError('conflict', 'bucket_limit_reached', `An account can have at most ${max} buckets.`),
  keyLimit: (max: number, what: string) =>
    new AppError('conflict', 'key_limit_reached', `At most ${max} keys per ${what}.`),
  defaultKeyUndeletable: () =>
    new AppError(
      'conflict',
      'default_key_undeletable',
      'The default key of a bucket cannot be deleted; it goes with the bucket.',
    ),
  versioningLocked: () =>
    new AppError(
      'conflict',
      'invalid_bucket_state',
      'Versioning cannot be suspended on a bucket with object lock enabled.',
    ),
  publicAccessBlocked: () =>
    new AppError(
      'conflict',
      'public_access_blocked',
      'The bucket cannot be made public: its public access block (or the operator’s) refuses public ACLs.',
    ),
  kmsKeyNotFound: (ref: string) =>
    new AppError('not_found', 'kms_key_not_found', `KMS key ${ref} does not exist.`),
  kmsKeyDisabled: (arn: string) => new AppError('conflict', 'kms_key_disabled', `${arn} is disabled.`),
  /** S3 answers it as `KMS.KMSInvalidStateException`, as AWS does for a key pending deletion. */
  kmsKeyInvalidState: (arn: string, why: string) =>
    new AppError('conflict', 'kms_key_invalid_state', `${arn} ${why}.`),
  kmsKeyNotDeletable: () =>
    new AppError(
      'conflict',
      'kms_key_not_deletable',
      'The default key alias/aws/s3 is managed by Fjord and cannot be scheduled for deletion.',
    ),
  kmsAliasTaken: (alias: string) =>
    new AppError('conflict', 'kms_alias_taken', `The alias ${alias} already names a key of the account.`),
  kmsKeyLimit: (max: number) =>
    new AppError('conflict', 'kms_key_limit_reached', `An account can have at most ${max} KMS keys.`),
  invalid: (message: string, errors: FieldProblem[]) => kernelErrors.invalid(message, errors),
  unknownRegion: (region: string) =>
    kernelErrors.invalid(`Unknown storage region ${JSON.stringify(region)}; the only region is "no".`, [
      { path: '/body/region', message: 'must be "no" (or the legacy spelling "no-oslo-1")' },
    ]),
};

/** The API's error kind for an S3 status (the data plane's errors, answered through the API). */
function kindOfS3Status(status: number): ErrorKind {
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409 || status === 412) return 'conflict';
  if (status === 413) return 'payload_too_large';
  if (status === 503) return 'unavailable';
  if (status === 507) return 'insufficient_storage';
  if (status >= 500) return 'internal';
  return 'bad_request';
}
