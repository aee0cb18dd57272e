/**
 * A bounded name for an S3 request, for metrics and logs: the method, what it addresses (the
 * service, a bucket or an object) and its sub-resource, e.g. `PUT object ?uploadId`,
 * `GET bucket ?versioning`. Never the bucket or key names themselves.
 */
const SUBRESOURCES = [
  'uploads',
  'uploadId',
  'partNumber',
  'delete',
  'cors',
  'versioning',
  'lifecycle',
  'location',
  'versions',
  'object-lock',
  'retention',
  'legal-hold',
  'acl',
  'tagging',
  'policy',
  'policyStatus',
  'ownershipControls',
  'publicAccessBlock',
  'website',
  'encryption',
  'list-type',
];

export function s3OperationLabel(
  method: string,
  bucket: string | null,
  key: string | null,
  query: URLSearchParams,
): string {
  const level = !bucket ? 'service' : !key ? 'bucket' : 'object';
  const sub = query.size === 0 ? undefined : SUBRESOURCES.find((s) => query.has(s));
  return sub ? `${method} ${level} ?${sub}` : `${method} ${level}`;
}
