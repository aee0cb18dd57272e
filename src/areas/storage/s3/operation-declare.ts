import type { S3Call } from './context.js';
import { s3Errors } from './errors.js';

export type Method = 'GET' | 'HEAD' | 'PUT' | 'DELETE' | 'POST';
export type S3Level = 'service' | 'bucket' | 'object';

/**
 * One S3 operation, declared once: what selects it (method, what the path addresses, the
 * sub-resource or header), its name as AWS gives it (PutBucketCors: the label of its metrics and
 * log lines), the handler, and the policy action it is authorised as (`call.requireBucket()`
 * reads it from here).
 */
export interface S3Operation {
  readonly name: string;
  readonly method: Method;
  readonly level: S3Level;
  /** Query parameters that must all be present. */
  readonly query?: readonly string[];
  /** A header that must be present (CopyObject: `x-amz-copy-source`). */
  readonly header?: string;
  /** A content type the request must have (PostObject's form). */
  readonly contentType?: RegExp;
  /** Only with no query parameter but `x-id` (the SDKs' operation hint): CreateBucket, DeleteBucket. */
  readonly bareQuery?: true;
  /** The bucket-policy action; `versionAction` instead when the request names a `versionId`. */
  readonly action: string;
  readonly versionAction?: string;
  /** The form carries its own signed policy: no request signature is read. */
  readonly formAuth?: true;
  readonly run: (call: S3Call) => Promise<void>;
}

/** Refused, after the same bucket check AWS makes first: a sub-resource Fjord does not keep. */
export const notKept = (what?: string) => async (call: S3Call) => {
  await call.requireBucket();
  throw s3Errors.notImplemented(what);
};

export const op = (
  name: string,
  method: Method,
  level: S3Level,
  action: string,
  run: (call: S3Call) => Promise<void>,
  select: Partial<
    Pick<S3Operation, 'query' | 'header' | 'contentType' | 'bareQuery' | 'versionAction' | 'formAuth'>
  > = {},
): S3Operation => ({ name, method, level, action, run, ...select });
export const sub = (...query: string[]) => ({ query });
