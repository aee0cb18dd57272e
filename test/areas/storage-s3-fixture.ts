/**
 * What the storage test files that drive S3 share: a Fjord serving S3, a customer, buckets with
 * S3 clients for their keys (versioned on request), and KMS keys made through the API.
 */
import { PutBucketVersioningCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { s3ClientFor } from '../helpers/s3.js';

export interface StorageS3Fixture {
  readonly t: TestFjord;
  /** A customer made at the start. */
  readonly a: TestCustomer;
  /** The S3 endpoint. */
  readonly endpoint: string;
  /** A new bucket of `c`, with an S3 client holding its key; `versioned`: versioning Enabled. */
  bucketOf(c: TestCustomer, opts?: { versioned?: boolean }): Promise<{ name: string; s3: S3Client }>;
  newKey(
    c: TestCustomer,
    alias?: string,
  ): Promise<{ key_id: string; arn: string; key_state: string; current_version: number }>;
}

/** Starts the Fjord before the file's tests and closes it after; `stem` begins bucket names. */
export function storageS3Fixture(stem: string): StorageS3Fixture {
  let t: TestFjord;
  let a: TestCustomer;
  let endpoint: string;
  let n = 0;
  beforeAll(async () => {
    t = await TestFjord.create({ FJORD_S3_PORT: '0' });
    await t.fjord.start(['s3']);
    a = await t.customer();
    endpoint = (await t.request('GET', '/storage/s3')).body.endpoint;
  });
  afterAll(() => t.close());
  return {
    get t() {
      return t;
    },
    get a() {
      return a;
    },
    get endpoint() {
      return endpoint;
    },
    async bucketOf(c, opts = {}) {
      const name = `${stem}-${Date.now().toString(36)}-${(n++).toString(36)}`;
      const r = await t.request('POST', '/v1/storage/buckets', { key: c.pat, body: { bucket_name: name } });
      expect(r.status).toBe(201);
      const s3 = s3ClientFor(r.body, endpoint);
      if (opts.versioned)
        await s3.send(
          new PutBucketVersioningCommand({ Bucket: name, VersioningConfiguration: { Status: 'Enabled' } }),
        );
      return { name, s3 };
    },
    async newKey(c, alias) {
      const r = await t.request('POST', '/v1/storage/kms-keys', { key: c.pat, body: alias ? { alias } : {} });
      expect(r.status).toBe(201);
      return r.body;
    },
  };
}
