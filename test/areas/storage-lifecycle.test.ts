import {
  GetBucketLifecycleConfigurationCommand,
  ListObjectVersionsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { storageS3Fixture } from './storage-s3-fixture.js';

/**
 * Lifecycle `NewerNoncurrentVersions` through the whole Fjord: set with the AWS SDK, read back
 * through S3 and the control API, and applied by the `storage.lifecycle` job as the clock moves.
 */
const f = storageS3Fixture('lc');
const DAY = 86_400;

const versionedBucket = () => f.bucketOf(f.a, { versioned: true });

async function versionsOf(s3: S3Client, Bucket: string, Key: string): Promise<string[]> {
  const r = await s3.send(new ListObjectVersionsCommand({ Bucket, Prefix: Key }));
  return (r.Versions ?? []).filter((v) => v.Key === Key).map((v) => v.VersionId!);
}

async function write(s3: S3Client, Bucket: string, Key: string, times: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < times; i++)
    ids.push((await s3.send(new PutObjectCommand({ Bucket, Key, Body: `${Key}-${i}` }))).VersionId!);
  return ids;
}

const refusal = (s3: S3Client, Bucket: string, NoncurrentVersionExpiration: Record<string, number>) =>
  s3
    .send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket,
        LifecycleConfiguration: {
          Rules: [{ ID: 'r', Status: 'Enabled', Filter: { Prefix: '' }, NoncurrentVersionExpiration }],
        },
      }),
    )
    .then(
      () => 'accepted',
      (err: { name: string }) => err.name,
    );

describe('lifecycle NewerNoncurrentVersions', () => {
  it('keeps the newest N noncurrent versions of each key and expires older ones once old enough', async () => {
    const { name, s3 } = await versionedBucket();
    const k = await write(s3, name, 'doc', 5); // k[4] current, k[0..3] noncurrent
    const other = await write(s3, name, 'other', 2);
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: name,
        LifecycleConfiguration: {
          Rules: [
            {
              ID: 'keep-two',
              Status: 'Enabled',
              Filter: { Prefix: '' },
              NoncurrentVersionExpiration: { NoncurrentDays: 2, NewerNoncurrentVersions: 2 },
            },
          ],
        },
      }),
    );
    const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: name }));
    expect(got.Rules?.[0]?.NoncurrentVersionExpiration).toEqual({
      NoncurrentDays: 2,
      NewerNoncurrentVersions: 2,
    });
    const view = await f.t.request('GET', `/v1/storage/buckets/${name}/lifecycle`, { key: f.a.pat });
    expect(view.body.rules[0]).toMatchObject({
      id: 'keep-two',
      noncurrent_version_expiration_days: 2,
      newer_noncurrent_versions: 2,
    });

    // Not yet two days noncurrent: nothing goes, however many versions there are.
    await f.t.advance(DAY + 3600);
    expect(await versionsOf(s3, name, 'doc')).toEqual([...k].reverse());

    // Two days on: the two newest noncurrent versions stay, the older ones go.
    await f.t.advance(DAY + 3600);
    expect(await versionsOf(s3, name, 'doc')).toEqual([k[4], k[3], k[2]]);
    expect(await versionsOf(s3, name, 'other')).toEqual([...other].reverse());

    // A new version pushes one more out, once the rank and the days both allow it.
    const k5 = (await write(s3, name, 'doc', 1))[0]!;
    await f.t.advance(3 * DAY);
    expect(await versionsOf(s3, name, 'doc')).toEqual([k5, k[4], k[3]]);
  });

  it('applies NewerNoncurrentVersions set through the control API', async () => {
    const { name, s3 } = await versionedBucket();
    const k = await write(s3, name, 'x', 4);
    const put = await f.t.request('PUT', `/v1/storage/buckets/${name}/lifecycle`, {
      key: f.a.pat,
      body: { rules: [{ id: 'one', noncurrent_version_expiration_days: 1, newer_noncurrent_versions: 1 }] },
    });
    expect(put.status).toBe(200);
    expect(put.body.rules[0].newer_noncurrent_versions).toBe(1);
    const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: name }));
    expect(got.Rules?.[0]?.NoncurrentVersionExpiration).toEqual({
      NoncurrentDays: 1,
      NewerNoncurrentVersions: 1,
    });
    await f.t.advance(2 * DAY);
    expect(await versionsOf(s3, name, 'x')).toEqual([k[3], k[2]]);
  });

  it('refuses NewerNoncurrentVersions outside 1-100 or without NoncurrentDays', async () => {
    const { name, s3 } = await versionedBucket();
    expect(await refusal(s3, name, { NoncurrentDays: 1, NewerNoncurrentVersions: 0 })).toBe(
      'InvalidArgument',
    );
    expect(await refusal(s3, name, { NoncurrentDays: 1, NewerNoncurrentVersions: 101 })).toBe(
      'InvalidArgument',
    );
    expect(await refusal(s3, name, { NewerNoncurrentVersions: 3 })).toBe('MalformedXML');
    expect(await refusal(s3, name, { NoncurrentDays: 1, NewerNoncurrentVersions: 100 })).toBe('accepted');
    const url = `/v1/storage/buckets/${name}/lifecycle`;
    for (const rule of [
      { noncurrent_version_expiration_days: 1, newer_noncurrent_versions: 0 },
      { noncurrent_version_expiration_days: 1, newer_noncurrent_versions: 101 },
      { expiration_days: 1, newer_noncurrent_versions: 3 },
    ]) {
      const r = await f.t.request('PUT', url, { key: f.a.pat, body: { rules: [rule] } });
      expect(r.status, JSON.stringify(rule)).toBe(422);
    }
  });
});

describe('S3-only lifecycle forms survive the store (found by the s3-tests conformance suite)', () => {
  it('keeps Date, ExpiredObjectDeleteMarker, tag and size filters and the older rule Prefix', async () => {
    const { name, s3 } = await versionedBucket();
    const Rules = [
      {
        ID: 'date',
        Status: 'Enabled',
        Prefix: 'old/',
        Expiration: { Date: new Date('2017-09-27T00:00:00Z') },
      },
      { ID: 'markers', Status: 'Enabled', Filter: {}, Expiration: { ExpiredObjectDeleteMarker: true } },
      {
        ID: 'tagged',
        Status: 'Enabled',
        Filter: { And: { Tags: [{ Key: 'tmp', Value: 'yes' }], ObjectSizeGreaterThan: 10 } },
        Expiration: { Days: 3 },
      },
    ] as const;
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: name,
        LifecycleConfiguration: { Rules: Rules.map((r) => ({ ...r })) as never },
      }),
    );
    const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: name }));
    expect(got.Rules).toEqual([
      {
        ID: 'date',
        Status: 'Enabled',
        Prefix: 'old/',
        Expiration: { Date: new Date('2017-09-27T00:00:00Z') },
      },
      {
        ID: 'markers',
        Status: 'Enabled',
        Filter: { Prefix: '' },
        Expiration: { ExpiredObjectDeleteMarker: true },
      },
      {
        ID: 'tagged',
        Status: 'Enabled',
        Filter: { And: { Tags: [{ Key: 'tmp', Value: 'yes' }], ObjectSizeGreaterThan: 10 } },
        Expiration: { Days: 3 },
      },
    ]);
  });
});
