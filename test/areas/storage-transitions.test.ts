import {
  GetBucketLifecycleConfigurationCommand,
  HeadObjectCommand,
  type LifecycleRule,
  ListObjectVersionsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestCustomer, TestFjord } from '../helpers/fjord.js';
import { storageS3Fixture } from './storage-s3-fixture.js';

/**
 * Lifecycle transitions between storage classes through the whole Fjord: set with the AWS SDK,
 * read back through S3 and the control API, applied by the `storage.lifecycle` job as the
 * emulator clock moves (a label change: bytes, ETag and dates stay), and refused as S3 refuses.
 */
const f = storageS3Fixture('tr');
let t: TestFjord;
let a: TestCustomer;
const DAY = 86_400;
/** Larger than the 128 KiB S3 keeps out of transitions by default. */
const BIG = Buffer.alloc(130 * 1024, 7);

beforeAll(() => {
  t = f.t;
  a = f.a;
});

const bucket = (versioned = false) => f.bucketOf(a, { versioned });

const putRules = (s3: S3Client, Bucket: string, Rules: LifecycleRule[]) =>
  s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket, LifecycleConfiguration: { Rules } }));
const classOf = async (s3: S3Client, Bucket: string, Key: string) =>
  (await s3.send(new HeadObjectCommand({ Bucket, Key }))).StorageClass ?? 'STANDARD';

describe('lifecycle transitions', () => {
  it('moves current versions down the classes by days, leaving bytes, ETag and dates as they were', async () => {
    const { name, s3 } = await bucket();
    for (const Key of ['a/big', 'b/big'])
      await s3.send(new PutObjectCommand({ Bucket: name, Key, Body: BIG }));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'a/small', Body: 'tiny' }));
    const before = await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'a/big' }));
    const rule: LifecycleRule = {
      ID: 'down',
      Status: 'Enabled',
      Filter: { Prefix: 'a/' },
      Transitions: [
        { Days: 30, StorageClass: 'STANDARD_IA' },
        { Days: 60, StorageClass: 'GLACIER_IR' },
      ],
      Expiration: { Days: 365 },
    };
    await putRules(s3, name, [rule]);
    const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: name }));
    expect(got.Rules?.[0]?.Transitions).toEqual(rule.Transitions);
    expect(got.TransitionDefaultMinimumObjectSize).toBe('all_storage_classes_128K');
    const view = await t.request('GET', `/v1/storage/buckets/${name}/lifecycle`, { key: a.pat });
    expect(view.body.rules[0].transitions).toEqual([
      { days: 30, storage_class: 'STANDARD_IA' },
      { days: 60, storage_class: 'GLACIER_IR' },
    ]);

    await t.advance(29 * DAY);
    expect(await classOf(s3, name, 'a/big')).toBe('STANDARD');
    await t.advance(2 * DAY);
    expect(await classOf(s3, name, 'a/big')).toBe('STANDARD_IA');
    expect(await classOf(s3, name, 'b/big')).toBe('STANDARD'); // outside the prefix
    expect(await classOf(s3, name, 'a/small')).toBe('STANDARD'); // under 128 KiB
    const after = await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'a/big' }));
    expect(after.ETag).toBe(before.ETag);
    expect(after.LastModified).toEqual(before.LastModified);
    await t.advance(30 * DAY);
    expect(await classOf(s3, name, 'a/big')).toBe('GLACIER_IR');
  });

  it('moves small objects when the rule filters by size, and at a date', async () => {
    const { name, s3 } = await bucket();
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'small', Body: 'tiny' }));
    const now = (await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'small' }))).LastModified!;
    const date = new Date(Math.ceil(now.getTime() / (DAY * 1000)) * DAY * 1000 + DAY * 1000);
    await putRules(s3, name, [
      {
        ID: 'at-date',
        Status: 'Enabled',
        Filter: { ObjectSizeGreaterThan: 0 },
        Transitions: [{ Date: date, StorageClass: 'INTELLIGENT_TIERING' }],
      },
    ]);
    const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: name }));
    expect(got.Rules?.[0]?.Transitions?.[0]?.Date).toEqual(date);
    await t.advance(3600);
    expect(await classOf(s3, name, 'small')).toBe('STANDARD');
    await t.advance(2 * DAY);
    expect(await classOf(s3, name, 'small')).toBe('INTELLIGENT_TIERING');
  });

  it('never moves an object back up the classes', async () => {
    const { name, s3 } = await bucket();
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'ir', Body: BIG, StorageClass: 'GLACIER_IR' }));
    await putRules(s3, name, [
      {
        ID: 'ia',
        Status: 'Enabled',
        Filter: { Prefix: '' },
        Transitions: [{ Days: 30, StorageClass: 'STANDARD_IA' }],
      },
    ]);
    await t.advance(31 * DAY);
    expect(await classOf(s3, name, 'ir')).toBe('GLACIER_IR');
  });

  it('moves noncurrent versions, keeping the newest NewerNoncurrentVersions where they are', async () => {
    const { name, s3 } = await bucket(true);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await s3.send(new PutObjectCommand({ Bucket: name, Key: 'doc', Body: BIG }))).VersionId!);
    const rule: LifecycleRule = {
      ID: 'nc',
      Status: 'Enabled',
      Filter: { Prefix: '' },
      NoncurrentVersionTransitions: [
        { NoncurrentDays: 2, StorageClass: 'GLACIER_IR', NewerNoncurrentVersions: 1 },
      ],
      NoncurrentVersionExpiration: { NoncurrentDays: 100 },
    };
    await putRules(s3, name, [rule]);
    const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: name }));
    expect(got.Rules?.[0]?.NoncurrentVersionTransitions).toEqual(rule.NoncurrentVersionTransitions);
    const classes = async () => {
      const r = await s3.send(new ListObjectVersionsCommand({ Bucket: name }));
      return Object.fromEntries((r.Versions ?? []).map((v) => [v.VersionId, v.StorageClass]));
    };
    await t.advance(DAY);
    expect(Object.values(await classes())).toEqual(['STANDARD', 'STANDARD', 'STANDARD', 'STANDARD']);
    await t.advance(2 * DAY);
    expect(await classes()).toEqual({
      [ids[3]!]: 'STANDARD',
      [ids[2]!]: 'STANDARD',
      [ids[1]!]: 'GLACIER_IR',
      [ids[0]!]: 'GLACIER_IR',
    });
  });

  it('refuses archive classes with NotImplemented and what S3 refuses with its own errors', async () => {
    const { name, s3 } = await bucket();
    const refusal = (r: Partial<LifecycleRule>) =>
      putRules(s3, name, [{ ID: 'r', Status: 'Enabled', Filter: { Prefix: '' }, ...r }]).then(
        () => 'accepted',
        (err: { name: string; $metadata?: { httpStatusCode?: number } }) =>
          `${err.$metadata?.httpStatusCode} ${err.name}`,
      );
    expect(await refusal({ Transitions: [{ Days: 30, StorageClass: 'GLACIER' }] })).toBe(
      '501 NotImplemented',
    );
    expect(
      await refusal({ NoncurrentVersionTransitions: [{ NoncurrentDays: 30, StorageClass: 'DEEP_ARCHIVE' }] }),
    ).toBe('501 NotImplemented');
    expect(await refusal({ Transitions: [{ Days: 29, StorageClass: 'STANDARD_IA' }] })).toBe(
      '400 InvalidArgument',
    );
    expect(
      await refusal({ NoncurrentVersionTransitions: [{ NoncurrentDays: 10, StorageClass: 'ONEZONE_IA' }] }),
    ).toBe('400 InvalidArgument');
    expect(await refusal({ Transitions: [{ Days: 30, StorageClass: 'STANDARD' as 'GLACIER' }] })).toBe(
      '400 MalformedXML',
    );
    expect(
      await refusal({
        Transitions: [
          { Days: 30, StorageClass: 'GLACIER_IR' },
          { Days: 60, StorageClass: 'GLACIER_IR' },
        ],
      }),
    ).toBe('400 InvalidArgument');
    expect(
      await refusal({ Transitions: [{ Days: 40, StorageClass: 'STANDARD_IA' }], Expiration: { Days: 40 } }),
    ).toBe('400 InvalidArgument');
    expect(
      await refusal({
        Transitions: [{ Days: 1, Date: new Date('2030-01-01T00:00:00Z'), StorageClass: 'GLACIER_IR' }],
      }),
    ).toBe('400 InvalidArgument');
    expect(await refusal({ Transitions: [{ Days: 0, StorageClass: 'INTELLIGENT_TIERING' }] })).toBe(
      'accepted',
    );
    expect(await refusal({ Transitions: [{ Days: 30, StorageClass: 'ONEZONE_IA' }] })).toBe('accepted');
  });

  it('round-trips transitions through the control API and refuses what S3 refuses', async () => {
    const { name, s3 } = await bucket();
    const url = `/v1/storage/buckets/${name}/lifecycle`;
    const rule = {
      id: 'api',
      transitions: [{ days: 30, storage_class: 'ONEZONE_IA' }],
      noncurrent_version_transitions: [
        { noncurrent_days: 5, storage_class: 'GLACIER_IR', newer_noncurrent_versions: 2 },
      ],
    };
    const put = await t.request('PUT', url, { key: a.pat, body: { rules: [rule] } });
    expect(put.status, put.text).toBe(200);
    const view = await t.request('GET', url, { key: a.pat });
    expect(view.body.rules[0]).toMatchObject(rule);
    const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: name }));
    expect(got.Rules?.[0]?.Transitions).toEqual([{ Days: 30, StorageClass: 'ONEZONE_IA' }]);
    expect(got.Rules?.[0]?.NoncurrentVersionTransitions).toEqual([
      { NoncurrentDays: 5, StorageClass: 'GLACIER_IR', NewerNoncurrentVersions: 2 },
    ]);
    for (const bad of [
      { transitions: [{ days: 10, storage_class: 'STANDARD_IA' }] },
      { transitions: [{ days: 10, storage_class: 'GLACIER' }] },
      { expiration_days: 20, transitions: [{ days: 20, storage_class: 'GLACIER_IR' }] },
    ]) {
      const r = await t.request('PUT', url, { key: a.pat, body: { rules: [bad] } });
      expect(r.status, JSON.stringify(bad)).toBe(422);
    }
  });

  it('keeps the forms only S3 writes (tags, sizes, dates, delete markers) through the control plane', async () => {
    const { name, s3 } = await bucket();
    const Rules: LifecycleRule[] = [
      {
        ID: 'tagged',
        Status: 'Enabled',
        Filter: { And: { Prefix: 'p/', Tags: [{ Key: 'tier', Value: 'cold' }], ObjectSizeGreaterThan: 10 } },
        Transitions: [{ Days: 40, StorageClass: 'STANDARD_IA' }],
      },
      {
        ID: 'markers',
        Status: 'Enabled',
        Filter: { Prefix: '' },
        Expiration: { ExpiredObjectDeleteMarker: true },
      },
      {
        ID: 'dated',
        Status: 'Enabled',
        Filter: { Prefix: 'd/' },
        Expiration: { Date: new Date('2031-01-01T00:00:00Z') },
      },
    ];
    await putRules(s3, name, Rules);
    const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: name }));
    expect(got.Rules?.map((r) => r.ID)).toEqual(['tagged', 'markers', 'dated']);
    expect(got.Rules?.[0]?.Filter?.And?.Tags).toEqual([{ Key: 'tier', Value: 'cold' }]);
    expect(got.Rules?.[0]?.Filter?.And?.ObjectSizeGreaterThan).toBe(10);
    expect(got.Rules?.[1]?.Expiration).toEqual({ ExpiredObjectDeleteMarker: true });
    expect(got.Rules?.[2]?.Expiration?.Date).toEqual(new Date('2031-01-01T00:00:00Z'));
  });
});
