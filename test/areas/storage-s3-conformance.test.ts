import {
  GetObjectLockConfigurationCommand,
  PutBucketVersioningCommand,
  PutObjectLockConfigurationCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { s3ClientFor } from '../helpers/s3.js';

/** What the s3-tests conformance suite found, through the whole Fjord (docs/s3.md, Conformance). */
let t: TestFjord;
let a: TestCustomer;
let endpoint: string;

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_S3_PORT: '0' });
  await t.fjord.start(['s3']);
  a = await t.customer();
  endpoint = (await t.request('GET', '/storage/s3')).body.endpoint;
});
afterAll(() => t.close());

describe('PutObjectLockConfiguration on a bucket created without object lock', () => {
  it('turns object lock on once versioning is Enabled, as on AWS', async () => {
    const name = `lock-later-${Date.now().toString(36)}`;
    const r = await t.request('POST', '/v1/storage/buckets', { key: a.pat, body: { bucket_name: name } });
    expect(r.status).toBe(201);
    const s3 = s3ClientFor(r.body, endpoint);
    const put = () =>
      s3.send(
        new PutObjectLockConfigurationCommand({
          Bucket: name,
          ObjectLockConfiguration: {
            ObjectLockEnabled: 'Enabled',
            Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 1 } },
          },
        }),
      );
    const versioning = (Status: 'Enabled' | 'Suspended') =>
      s3.send(new PutBucketVersioningCommand({ Bucket: name, VersioningConfiguration: { Status } }));
    await expect(put()).rejects.toMatchObject({ name: 'InvalidBucketState' });
    await versioning('Suspended');
    await expect(put()).rejects.toMatchObject({ name: 'InvalidBucketState' });
    await versioning('Enabled');
    await put();
    const got = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: name }));
    expect(got.ObjectLockConfiguration).toEqual({
      ObjectLockEnabled: 'Enabled',
      Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 1 } },
    });
    await expect(versioning('Suspended')).rejects.toMatchObject({ name: 'InvalidBucketState' });
    const lock = await t.request('GET', `/v1/storage/buckets/${name}/object-lock`, { key: a.pat });
    expect(lock.body.object_lock_enabled).toBe(true);
  });
});
