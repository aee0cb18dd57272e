import { describe, expect, it } from 'vitest';
import { s3OperationOf } from './operation-lookup.js';
import { S3_OPERATIONS, type S3Level } from './operations.js';

const lookup = (method: string, level: S3Level, query = '', headers: Record<string, string> = {}) =>
  s3OperationOf(method, level, new URLSearchParams(query), (n) => headers[n])?.name ?? null;

describe('the S3 operation table', () => {
  it('names each request as AWS does, sub-resource before the plain form', () => {
    expect(lookup('GET', 'service')).toBe('ListBuckets');
    expect(lookup('GET', 'bucket', 'cors')).toBe('GetBucketCors');
    expect(lookup('PUT', 'bucket', 'cors')).toBe('PutBucketCors');
    expect(lookup('DELETE', 'bucket', 'cors')).toBe('DeleteBucketCors');
    expect(lookup('GET', 'bucket', 'list-type=2&prefix=a')).toBe('ListObjectsV2');
    expect(lookup('GET', 'bucket', 'prefix=a')).toBe('ListObjects');
    expect(lookup('GET', 'bucket', 'policyStatus')).toBe('GetBucketPolicyStatus');
    expect(lookup('GET', 'bucket', 'website')).toBe('GetBucketWebsite');
    expect(lookup('PUT', 'bucket')).toBe('CreateBucket');
    expect(lookup('PUT', 'bucket', 'x-id=CreateBucket')).toBe('CreateBucket');
    expect(lookup('PUT', 'bucket', 'website')).toBe('PutBucketUnsupported');
    expect(lookup('POST', 'bucket', 'delete')).toBe('DeleteObjects');
    expect(lookup('POST', 'bucket', '', { 'content-type': 'multipart/form-data; boundary=x' })).toBe(
      'PostObject',
    );
    expect(lookup('POST', 'bucket')).toBeNull();
    expect(lookup('PUT', 'object', 'partNumber=1&uploadId=u')).toBe('UploadPart');
    expect(lookup('PUT', 'object', '', { 'x-amz-copy-source': '/b/k' })).toBe('CopyObject');
    expect(lookup('PUT', 'object')).toBe('PutObject');
    expect(lookup('HEAD', 'object', 'versionId=1')).toBe('HeadObject');
    expect(lookup('GET', 'object', 'uploadId=u')).toBe('ListParts');
    expect(lookup('DELETE', 'object', 'uploadId=u')).toBe('AbortMultipartUpload');
    expect(lookup('POST', 'object', 'uploads')).toBe('CreateMultipartUpload');
    expect(lookup('PATCH', 'object')).toBeNull();
  });

  it('reaches every declared operation from its own selectors', () => {
    for (const o of S3_OPERATIONS) {
      const query = [...(o.query ?? []).map((q) => `${q}=1`)].join('&');
      const headers: Record<string, string> = {};
      if (o.header) headers[o.header] = 'x';
      if (o.contentType) headers['content-type'] = 'multipart/form-data; boundary=x';
      // Fallbacks for unknown sub-resources are reached with one no other entry selects.
      const probe = o.name.endsWith('Unsupported') ? 'no-such-subresource' : query;
      expect(lookup(o.method, o.level, probe, headers), `${o.method} ${o.level} ?${probe}`).toBe(o.name);
    }
  });

  it('gives each operation an s3: policy action', () => {
    for (const o of S3_OPERATIONS) {
      expect(o.action, o.name).toMatch(/^s3:[A-Z]\w+$/);
      if (o.versionAction) expect(o.versionAction, o.name).toMatch(/^s3:[A-Z]\w+Version\w*$/);
    }
  });
});
