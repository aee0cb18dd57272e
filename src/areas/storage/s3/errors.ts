import { isAppError } from '../../../kernel/errors.js';

/** An S3 protocol error: rendered as the S3 XML error document with its status. */
export class S3Error extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly extra: Record<string, string> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'S3Error';
  }
}

const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export const s3Errors = {
  accessDenied: (m = 'Access Denied') => new S3Error('AccessDenied', 403, m),
  noSuchBucket: (bucket: string) =>
    new S3Error('NoSuchBucket', 404, 'The specified bucket does not exist', { BucketName: bucket }),
  noSuchKey: (key: string) =>
    new S3Error('NoSuchKey', 404, 'The specified key does not exist.', { Key: key }),
  noSuchVersion: (key: string, versionId: string) =>
    new S3Error('NoSuchVersion', 404, 'The specified version does not exist.', {
      Key: key,
      VersionId: versionId,
    }),
  noSuchUpload: (id: string) =>
    new S3Error(
      'NoSuchUpload',
      404,
      'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
      { UploadId: id },
    ),
  noSuchCors: (bucket: string) =>
    new S3Error('NoSuchCORSConfiguration', 404, 'The CORS configuration does not exist', {
      BucketName: bucket,
    }),
  noSuchTagSet: () => new S3Error('NoSuchTagSet', 404, 'The TagSet does not exist'),
  noSuchLifecycle: (bucket: string) =>
    new S3Error('NoSuchLifecycleConfiguration', 404, 'The lifecycle configuration does not exist', {
      BucketName: bucket,
    }),
  signatureMismatch: () =>
    new S3Error(
      'SignatureDoesNotMatch',
      403,
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    ),
  invalidAccessKeyId: () =>
    new S3Error(
      'InvalidAccessKeyId',
      403,
      'The AWS Access Key Id you provided does not exist in our records.',
    ),
  skewed: (requestTime: string, serverTime: string) =>
    new S3Error(
      'RequestTimeTooSkewed',
      403,
      'The difference between the request time and the current time is too large.',
      { RequestTime: requestTime, ServerTime: serverTime, MaxAllowedSkewMilliseconds: '900000' },
    ),
  /** A presigned URL past its window; AWS names the window and the server's time (ISO 8601, seconds). */
  expired: (window?: { expiresSeconds: number; expiresAtMs: number; nowMs: number }) =>
    new S3Error(
      'AccessDenied',
      403,
      'Request has expired',
      window
        ? {
            'X-Amz-Expires': String(window.expiresSeconds),
            Expires: isoSeconds(window.expiresAtMs),
            ServerTime: isoSeconds(window.nowMs),
          }
        : {},
    ),
  authorizationHeaderMalformed: (m: string) => new S3Error('AuthorizationHeaderMalformed', 400, m),
  authorizationQueryParametersError: (m: string) => new S3Error('AuthorizationQueryParametersError', 400, m),
  bucketNotEmpty: (bucket: string) =>
    new S3Error('BucketNotEmpty', 409, 'The bucket you tried to delete is not empty', { BucketName: bucket }),
  bucketAlreadyExists: (bucket: string) =>
    new S3Error(
      'BucketAlreadyExists',
      409,
      'The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.',
      { BucketName: bucket },
    ),
  bucketAlreadyOwnedByYou: (bucket: string) =>
    new S3Error(
      'BucketAlreadyOwnedByYou',
      409,
      'Your previous request to create the named bucket succeeded and you already own it.',
      { BucketName: bucket },
    ),
  /** MinIO's answer to a full drive (`XMinioStorageFull`), under Fjord's name; 507 like MinIO. */
  storageFull: () =>
    new S3Error(
      'XFjordStorageFull',
      507,
      'Storage backend has no space left. Delete objects or free space on the server; writes resume by themselves.',
    ),
  invalidBucketName: (bucket: string) =>
    new S3Error('InvalidBucketName', 400, 'The specified bucket is not valid.', { BucketName: bucket }),
  invalidRange: (size: number) =>
    new S3Error('InvalidRange', 416, 'The requested range is not satisfiable', {
      ActualObjectSize: String(size),
    }),
  preconditionFailed: (condition: string) =>
    new S3Error('PreconditionFailed', 412, 'At least one of the pre-conditions you specified did not hold', {
      Condition: condition,
    }),
  entityTooSmall: () =>
    new S3Error(
      'EntityTooSmall',
      400,
      'Your proposed upload is smaller than the minimum allowed object size.',
    ),
  bandwidthExceeded: (max: number) =>
    new S3Error(
      'BandwidthLimitExceeded',
      403,
      `The bucket owner's plan allows ${max} bytes of downloads a month and they are used; downloads resume on the 1st (UTC) or with a larger plan.`,
    ),
  quotaExceeded: (max: number) =>
    new S3Error(
      'QuotaExceeded',
      403,
      `The account's plan allows ${max} bytes of storage and this write would pass it; delete objects or change plan.`,
    ),
  entityTooLarge: () =>
    new S3Error('EntityTooLarge', 400, 'Your proposed upload exceeds the maximum allowed object size.'),
  invalidPartNumber: () =>
    new S3Error('InvalidPartNumber', 416, 'The requested partnumber is not satisfiable'),
  invalidPart: () =>
    new S3Error(
      'InvalidPart',
      400,
      "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
    ),
  invalidPartOrder: () =>
    new S3Error(
      'InvalidPartOrder',
      400,
      'The list of parts was not in ascending order. Parts must be ordered by part number.',
    ),
  malformedXml: () =>
    new S3Error(
      'MalformedXML',
      400,
      'The XML you provided was not well-formed or did not validate against our published schema',
    ),
  invalidArgument: (m: string, name?: string, value?: string) =>
    new S3Error(
      'InvalidArgument',
      400,
      m,
      name ? { ArgumentName: name, ...(value !== undefined ? { ArgumentValue: value } : {}) } : {},
    ),
  invalidRequest: (m: string) => new S3Error('InvalidRequest', 400, m),
  invalidStorageClass: (requested: string) =>
    new S3Error('InvalidStorageClass', 400, 'The storage class you specified is not valid', {
      StorageClassRequested: requested,
    }),
  badDigest: () =>
    new S3Error('BadDigest', 400, 'The Content-MD5 you specified did not match what we received.'),
  invalidDigest: () => new S3Error('InvalidDigest', 400, 'The Content-MD5 you specified is not valid.'),
  sha256Mismatch: () =>
    new S3Error(
      'XAmzContentSHA256Mismatch',
      400,
      "The provided 'x-amz-content-sha256' header does not match what was computed.",
    ),
  checksumMismatch: (alg: string) =>
    new S3Error('BadDigest', 400, `The ${alg} you specified did not match the calculated checksum.`),
  incompleteBody: () =>
    new S3Error(
      'IncompleteBody',
      400,
      'You did not provide the number of bytes specified by the Content-Length HTTP header',
    ),
  missingContentLength: () =>
    new S3Error('MissingContentLength', 411, 'You must provide the Content-Length HTTP header.'),
  invalidChunk: (m = 'The chunked encoding of the request body is not valid.') =>
    new S3Error('InvalidRequest', 400, m),
  notImplemented: (m = 'A header or query you provided implies functionality that is not implemented.') =>
    new S3Error('NotImplemented', 501, m),
  methodNotAllowed: () =>
    new S3Error('MethodNotAllowed', 405, 'The specified method is not allowed against this resource.'),
  keyTooLong: () => new S3Error('KeyTooLongError', 400, 'Your key is too long'),
  invalidTag: (m: string) => new S3Error('InvalidTag', 400, m),
  corsNotAllowed: () =>
    new S3Error('AccessForbidden', 403, 'CORSResponse: This CORS request is not allowed.'),
  malformedAcl: () =>
    new S3Error(
      'MalformedACLError',
      400,
      'The XML you provided was not well-formed or did not validate against our published schema.',
    ),
  aclNotSupported: () =>
    new S3Error(
      'AccessControlListNotSupported',
      400,
      'The bucket does not allow ACLs: its object ownership is BucketOwnerEnforced (PutBucketOwnershipControls turns ACLs on).',
    ),
  publicAclBlocked: () =>
    new S3Error(
      'AccessDenied',
      403,
      'Access Denied: the public access block of this bucket (or of the operator) refuses public ACLs.',
    ),
  publicPolicyBlocked: () =>
    new S3Error(
      'AccessDenied',
      403,
      'Access Denied: the public access block of this bucket (or of the operator) refuses public policies.',
    ),
  malformedPolicy: (reason: string) => new S3Error('MalformedPolicy', 400, reason),
  noSuchBucketPolicy: (bucket: string) =>
    new S3Error('NoSuchBucketPolicy', 404, 'The bucket policy does not exist', { BucketName: bucket }),
  noOwnershipControls: (bucket: string) =>
    new S3Error('OwnershipControlsNotFoundError', 404, 'The bucket ownership controls were not found', {
      BucketName: bucket,
    }),
  noPublicAccessBlock: (bucket: string) =>
    new S3Error(
      'NoSuchPublicAccessBlockConfiguration',
      404,
      'The public access block configuration was not found',
      { BucketName: bucket },
    ),
  tooManyConnections: () => new S3Error('SlowDown', 503, 'Please reduce your request rate.'),
  internal: () => new S3Error('InternalError', 500, 'We encountered an internal error. Please try again.'),
};

/** The control plane's AppErrors, seen through S3 (CreateBucket, PutBucketCors …). */
export function fromAppError(err: unknown, bucket?: string): S3Error | null {
  if (err instanceof S3Error) return err;
  if (!isAppError(err)) return null;
  switch (err.kind) {
    case 'conflict':
      return bucket
        ? s3Errors.bucketAlreadyExists(bucket)
        : new S3Error('OperationAborted', 409, err.message);
    case 'not_found':
      return bucket ? s3Errors.noSuchBucket(bucket) : new S3Error('NoSuchKey', 404, err.message);
    case 'forbidden':
    case 'unauthenticated':
      return s3Errors.accessDenied(err.message);
    case 'invalid':
    case 'bad_request':
      return bucket && /name/i.test(err.code)
        ? s3Errors.invalidBucketName(bucket)
        : s3Errors.invalidArgument(err.message);
    case 'rate_limited':
      return new S3Error('SlowDown', 503, err.message);
    case 'insufficient_storage':
      return s3Errors.storageFull();
    default:
      return null;
  }
}
