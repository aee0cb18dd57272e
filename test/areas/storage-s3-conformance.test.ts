import {
  GetObjectLockConfigurationCommand,
  PutBucketVersioningCommand,
  PutObjectLockConfigurationCommand,
} from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { storageS3Fixture } from './storage-s3-fixture.js';

/** What the s3-tests conformance suite found, through the whole Fjord (docs/s3.md, Conformance). */
const f = storageS3Fixture('lock-later');

describe('PutObjectLockConfiguration on a bucket created without object lock', () => {
  it('turns object lock on once versioning is Enabled, as on AWS', async () => {
    const { name, s3 } = await f.bucketOf(f.a);
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
    const lock = await f.t.request('GET', `/v1/storage/buckets/${name}/object-lock`, { key: f.a.pat });
    expect(lock.body.object_lock_enabled).toBe(true);
  });
});
