import {
  GetBucketLifecycleConfigurationCommand,
  HeadObjectCommand,
  type LifecycleRule,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './testing/harness.js';

/** Lifecycle documents in the forms S3 takes (date, tags, sizes, delete markers) and what they do. */
let h: Harness;
let s3: S3Client;

beforeAll(async () => {
  h = await startHarness();
  h.directory.addBucket({ name: 'lc', customerId: 'c1' });
  h.directory.addKey({ accessKeyId: 'AKL', customerId: 'c1', grants: [{ bucket: 'lc', actions: 'all' }] });
  s3 = new S3Client({
    endpoint: h.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'AKL', secretAccessKey: 'secret-AKL' },
  });
});
afterAll(async () => {
  s3?.destroy();
  await h?.close();
});

const put = (Rules: LifecycleRule[]) =>
  s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'lc', LifecycleConfiguration: { Rules } }));
const refusal = (Rules: LifecycleRule[]) =>
  put(Rules).then(
    () => 'accepted',
    (err: { name: string }) => err.name,
  );
const exists = (Key: string) =>
  s3.send(new HeadObjectCommand({ Bucket: 'lc', Key })).then(
    () => true,
    () => false,
  );
const DATE = new Date('2030-01-01T00:00:00Z');
const DAY = 86_400_000;

describe('S3 lifecycle configuration', () => {
  it('keeps a date, a tag and size filter, and lone delete markers, and reads them back', async () => {
    await put([
      { ID: 'dated', Status: 'Enabled', Filter: { Prefix: 'tmp/' }, Expiration: { Date: DATE } },
      {
        ID: 'debug-logs',
        Status: 'Enabled',
        Filter: {
          And: { Prefix: 'logs/', Tags: [{ Key: 'class', Value: 'debug' }], ObjectSizeGreaterThan: 10 },
        },
        Expiration: { Days: 1 },
      },
      {
        ID: 'markers',
        Status: 'Enabled',
        Filter: { Prefix: '' },
        Expiration: { ExpiredObjectDeleteMarker: true },
      },
    ]);
    const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'lc' }));
    expect(got.Rules?.[0]).toMatchObject({
      ID: 'dated',
      Filter: { Prefix: 'tmp/' },
      Expiration: { Date: DATE },
    });
    expect(got.Rules?.[1]).toMatchObject({
      Filter: {
        And: { Prefix: 'logs/', Tags: [{ Key: 'class', Value: 'debug' }], ObjectSizeGreaterThan: 10 },
      },
      Expiration: { Days: 1 },
    });
    expect(got.Rules?.[2]).toMatchObject({ Expiration: { ExpiredObjectDeleteMarker: true } });
  });

  it('expires only what the filter names, and dated rules from their date on', async () => {
    const body = (n: number) => 'x'.repeat(n);
    await s3.send(new PutObjectCommand({ Bucket: 'lc', Key: 'tmp/a', Body: 'a' }));
    await s3.send(
      new PutObjectCommand({ Bucket: 'lc', Key: 'logs/big', Body: body(20), Tagging: 'class=debug' }),
    );
    await s3.send(
      new PutObjectCommand({ Bucket: 'lc', Key: 'logs/small', Body: body(5), Tagging: 'class=debug' }),
    );
    await s3.send(
      new PutObjectCommand({ Bucket: 'lc', Key: 'logs/info', Body: body(20), Tagging: 'class=info' }),
    );
    const bucket = (await h.directory.findBucket('lc'))!;
    await h.plane.stats.applyLifecycle(bucket, Date.now() + 2 * DAY);
    expect(await exists('logs/big')).toBe(false);
    expect(await exists('logs/small')).toBe(true); // not over 10 bytes
    expect(await exists('logs/info')).toBe(true); // another tag
    expect(await exists('tmp/a')).toBe(true); // the date is still ahead
    await h.plane.stats.applyLifecycle(bucket, DATE.getTime() - 1);
    expect(await exists('tmp/a')).toBe(true);
    await h.plane.stats.applyLifecycle(bucket, DATE.getTime());
    expect(await exists('tmp/a')).toBe(false);
  });

  it('walks a bucket of more versions than a page (500), each once', async () => {
    h.directory.addBucket({ name: 'lcpages', customerId: 'c1', versioning: 'Enabled' });
    h.directory.addKey({
      accessKeyId: 'AKP',
      customerId: 'c1',
      grants: [{ bucket: 'lcpages', actions: 'all' }],
    });
    const client = new S3Client({
      endpoint: h.endpoint,
      region: 'eu-north-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKP', secretAccessKey: 'secret-AKP' },
    });
    // 260 keys of two versions each (520 candidate rows: a second page), and 20 keys the rule does
    // not name.
    const keys = Array.from({ length: 260 }, (_, i) => `old/${String(i).padStart(4, '0')}`);
    for (let i = 0; i < keys.length; i += 50)
      await Promise.all(
        keys
          .slice(i, i + 50)
          .flatMap((Key) => [
            client.send(new PutObjectCommand({ Bucket: 'lcpages', Key, Body: 'v1' })),
            client.send(new PutObjectCommand({ Bucket: 'lcpages', Key, Body: 'v2' })),
          ]),
      );
    for (let i = 0; i < 20; i++)
      await client.send(new PutObjectCommand({ Bucket: 'lcpages', Key: `keep/${i}`, Body: 'k' }));
    await client.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: 'lcpages',
        LifecycleConfiguration: {
          Rules: [{ ID: 'old', Status: 'Enabled', Filter: { Prefix: 'old/' }, Expiration: { Days: 1 } }],
        },
      }),
    );
    const bucket = (await h.directory.findBucket('lcpages'))!;
    const { expired } = await h.plane.stats.applyLifecycle(bucket, Date.now() + 2 * DAY);
    // Each current version expired once (a delete marker on top of it), none twice.
    expect(expired).toBe(260);
    const versions = await h.plane.env.objects.repo.listVersions(
      bucket.id,
      '',
      { key: '', inclusive: true },
      5000,
    );
    expect(versions.filter((v) => v.key.startsWith('old/') && v.is_delete_marker).length).toBe(260);
    expect(versions.filter((v) => v.key.startsWith('keep/')).length).toBe(20);
    client.destroy();
  });

  it('refuses what it cannot do or S3 does not allow, instead of ignoring it', async () => {
    const base = { ID: 'r', Status: 'Enabled' as const, Filter: { Prefix: '' } };
    expect(
      await refusal([
        { ...base, Transitions: [{ Days: 30, StorageClass: 'GLACIER' }], Expiration: { Days: 60 } },
      ]),
    ).toBe('NotImplemented');
    expect(await refusal([{ ...base, Expiration: { Date: new Date('2030-01-01T12:00:00Z') } }])).toBe(
      'InvalidArgument',
    );
    expect(await refusal([{ ...base, Expiration: { Days: 3, Date: DATE } }])).toBe('InvalidArgument');
    expect(
      await refusal([
        {
          ID: 'r',
          Status: 'Enabled',
          Filter: { Tag: { Key: 'a', Value: 'b' } },
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 },
        },
      ]),
    ).toBe('InvalidRequest');
    expect(
      await refusal([
        { ...base, NoncurrentVersionExpiration: { NoncurrentDays: 3, NewerNoncurrentVersions: 101 } },
      ]),
    ).toBe('InvalidArgument');
    expect(await refusal([base])).toBe('InvalidRequest');
  });
});
