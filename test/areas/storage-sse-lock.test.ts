import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetBucketEncryptionCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  PutBucketEncryptionCommand,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { storageS3Fixture } from './storage-s3-fixture.js';

/**
 * Encryption and object lock through the whole Fjord: the control plane keeps the bucket's
 * default encryption and default retention, the API reports them, the real data key seals.
 */
const f = storageS3Fixture('sse');
let aKey: string;
let n = 0;
const fresh = (stem: string) => `${stem}-${Date.now().toString(36)}-${(n++).toString(36)}`;

beforeAll(async () => {
  aKey = (await f.t.kernel.identity.createServiceKey(f.a.id, 'storage', null)).key;
});

const client = (accessKeyId: string, secretAccessKey: string) =>
  new S3Client({
    endpoint: f.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    maxAttempts: 1,
  });

function stored(marker: string): boolean {
  const dir = join(f.t.kernel.config.dataDir, 'objects');
  const walk = (d: string): boolean =>
    existsSync(d) &&
    readdirSync(d).some((name) => {
      const p = join(d, name);
      return statSync(p).isDirectory() ? walk(p) : readFileSync(p).includes(marker);
    });
  return walk(dir);
}

describe('server-side encryption and object lock with the control plane', () => {
  it('creates a lock bucket through S3 and reports its default retention in the API', async () => {
    const made = await f.t.request('POST', '/v1/storage/keys', {
      key: aKey,
      body: { name: 'locker', actions: ['s3:CreateBucket', 's3:ListAllMyBuckets'] },
    });
    const s3 = client(made.body.access_key, made.body.secret_key);
    const Bucket = fresh('lock');
    await s3.send(new CreateBucketCommand({ Bucket, ObjectLockEnabledForBucket: true }));
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status).toBe('Enabled');
    await s3.send(
      new PutObjectLockConfigurationCommand({
        Bucket,
        ObjectLockConfiguration: {
          ObjectLockEnabled: 'Enabled',
          Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 3 } },
        },
      }),
    );
    const lock = await f.t.request('GET', `/v1/storage/buckets/${Bucket}/object-lock`, { key: aKey });
    expect(lock.body).toEqual({
      bucket_name: Bucket,
      object_lock_enabled: true,
      versioning: 'Enabled',
      default_retention: { mode: 'COMPLIANCE', days: 3, years: null },
    });
    const { VersionId } = await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'v' }));
    await expect(s3.send(new DeleteObjectCommand({ Bucket, Key: 'k', VersionId }))).rejects.toMatchObject({
      name: 'AccessDenied',
    });
  });

  it('keeps a bucket default encryption and seals with the server data key', async () => {
    const name = fresh('sealed');
    const r = await f.t.request('POST', '/v1/storage/buckets', { key: aKey, body: { bucket_name: name } });
    const s3 = client(r.body.access_key, r.body.secret_key);
    await s3.send(
      new PutBucketEncryptionCommand({
        Bucket: name,
        ServerSideEncryptionConfiguration: {
          Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
      }),
    );
    const cfg = await s3.send(new GetBucketEncryptionCommand({ Bucket: name }));
    expect(
      cfg.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault?.SSEAlgorithm,
    ).toBe('AES256');
    const put = await s3.send(new PutObjectCommand({ Bucket: name, Key: 'doc', Body: 'FULLFJORDPLAINTEXT' }));
    expect(put.ServerSideEncryption).toBe('AES256');
    expect(stored('FULLFJORDPLAINTEXT')).toBe(false);
    const got = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'doc' }));
    expect(await got.Body!.transformToString()).toBe('FULLFJORDPLAINTEXT');
  });
});
