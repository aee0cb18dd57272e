import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteBucketTaggingCommand,
  GetBucketCorsCommand,
  GetBucketTaggingCommand,
  GetObjectCommand,
  GetObjectLockConfigurationCommand,
  GetObjectTorrentCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutBucketCorsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
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

describe('x-amz-expected-bucket-owner', () => {
  it('lets the owner through and refuses another owner with 403 AccessDenied, as on AWS', async () => {
    const { name, s3 } = await f.bucketOf(f.a);
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'k', Body: 'x', ExpectedBucketOwner: f.a.id }));
    await expect(
      s3.send(
        new PutObjectCommand({ Bucket: name, Key: 'k', Body: 'y', ExpectedBucketOwner: 'someone-else' }),
      ),
    ).rejects.toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    await expect(
      s3.send(new GetObjectCommand({ Bucket: name, Key: 'k', ExpectedBucketOwner: 'someone-else' })),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
    await expect(
      s3.send(new ListObjectsV2Command({ Bucket: name, ExpectedBucketOwner: 'someone-else' })),
    ).rejects.toMatchObject({ name: 'AccessDenied' });
    await expect(
      s3.send(
        new CopyObjectCommand({
          Bucket: name,
          Key: 'copy',
          CopySource: `${name}/k`,
          ExpectedSourceBucketOwner: 'someone-else',
        }),
      ),
    ).rejects.toMatchObject({ name: 'AccessDenied' });
    const got = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'k', ExpectedBucketOwner: f.a.id }));
    expect(await got.Body?.transformToString()).toBe('x');
  });
});

describe('PutBucketCors through S3', () => {
  it('takes any origin with at most one wildcard, as AWS does, and matches it as a wildcard', async () => {
    const { name, s3 } = await f.bucketOf(f.a);
    const origins = ['*.get', '*suffix', 'start*end', 'prefix*', 'example', 'http://*.example.com'];
    await s3.send(
      new PutBucketCorsCommand({
        Bucket: name,
        CORSConfiguration: { CORSRules: [{ AllowedOrigins: origins, AllowedMethods: ['GET'] }] },
      }),
    );
    const got = await s3.send(new GetBucketCorsCommand({ Bucket: name }));
    expect(got.CORSRules?.[0]?.AllowedOrigins).toEqual(origins);
    const preflight = async (origin: string) =>
      (
        await fetch(`${f.endpoint}/${name}/k`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'GET' },
        })
      ).status;
    expect(await preflight('foo.get')).toBe(200);
    expect(await preflight('startXYZend')).toBe(200);
    expect(await preflight('http://a.example.com')).toBe(200);
    expect(await preflight('nope')).toBe(403);
    await expect(
      s3.send(
        new PutBucketCorsCommand({
          Bucket: name,
          CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['*a*'], AllowedMethods: ['GET'] }] },
        }),
      ),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 400 } });
  });

  it('leaves the API to its own rule: scheme://host[:port] or *', async () => {
    const { name } = await f.bucketOf(f.a);
    const r = await f.t.request('PUT', `/v1/storage/buckets/${name}/cors`, {
      key: f.a.pat,
      body: { rules: [{ allowed_origins: ['*.get'], allowed_methods: ['GET'] }] },
    });
    expect(r.status).toBe(422);
  });
});

describe('GetObjectTorrent', () => {
  it('is refused with 501 NotImplemented, never answered with the bytes', async () => {
    const { name, s3 } = await f.bucketOf(f.a);
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'k', Body: 'secret-bytes' }));
    await expect(s3.send(new GetObjectTorrentCommand({ Bucket: name, Key: 'k' }))).rejects.toMatchObject({
      name: 'NotImplemented',
      $metadata: { httpStatusCode: 501 },
    });
  });
});

describe('Lifecycle expiration', () => {
  it('tells x-amz-expiration on PUT, HEAD and GET of a covered object, and not of others', async () => {
    const { name, s3 } = await f.bucketOf(f.a);
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: name,
        LifecycleConfiguration: {
          Rules: [
            { ID: 'logs-30', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 30 } },
          ],
        },
      }),
    );
    // Fjord's test clock may run a little behind this process's: days are rounded.
    const before = Date.now();
    const put = await s3.send(new PutObjectCommand({ Bucket: name, Key: 'logs/a', Body: 'x' }));
    const parse = (v: string | undefined) => {
      const m = /^expiry-date="([^"]+)", rule-id="([^"]+)"$/.exec(v ?? '');
      expect(m).not.toBeNull();
      return { days: (Date.parse(m![1]!) - before) / 86_400_000, rule: m![2] };
    };
    for (const v of [
      put.Expiration,
      (await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'logs/a' }))).Expiration,
      (await s3.send(new GetObjectCommand({ Bucket: name, Key: 'logs/a' }))).Expiration,
    ]) {
      const { days, rule } = parse(v);
      expect(rule).toBe('logs-30');
      expect(Math.round(days)).toBe(30);
    }
    const other = await s3.send(new PutObjectCommand({ Bucket: name, Key: 'data/b', Body: 'x' }));
    expect(other.Expiration).toBeUndefined();
  });

  it('answers Days=0 with InvalidArgument, as AWS does', async () => {
    const { name, s3 } = await f.bucketOf(f.a);
    await expect(
      s3.send(
        new PutBucketLifecycleConfigurationCommand({
          Bucket: name,
          LifecycleConfiguration: {
            Rules: [{ ID: 'zero', Status: 'Enabled', Filter: { Prefix: '' }, Expiration: { Days: 0 } }],
          },
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidArgument' });
  });
});

describe('POST object with success_action_status=201', () => {
  it('answers a PostResponse without an XML namespace, as AWS documents it', async () => {
    const { name, s3 } = await f.bucketOf(f.a);
    const { url, fields } = await createPresignedPost(s3, {
      Bucket: name,
      Key: 'posted',
      Fields: { success_action_status: '201' },
    });
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('file', new Blob(['hello']), 'hello.txt');
    const r = await fetch(url, { method: 'POST', body: form });
    expect(r.status).toBe(201);
    const text = await r.text();
    expect(text).toMatch(/<PostResponse>/);
    expect(text).not.toMatch(/xmlns/);
    expect(text).toMatch(/<Key>posted<\/Key>/);
  });
});

describe('bucket tagging', () => {
  it('puts, gets in key order, and deletes a tag set; none is NoSuchTagSet', async () => {
    const { name, s3 } = await f.bucketOf(f.a);
    await expect(s3.send(new GetBucketTaggingCommand({ Bucket: name }))).rejects.toMatchObject({
      name: 'NoSuchTagSet',
    });
    await s3.send(
      new PutBucketTaggingCommand({
        Bucket: name,
        Tagging: {
          TagSet: [
            { Key: 'team', Value: 'storage' },
            { Key: 'env', Value: 'test' },
          ],
        },
      }),
    );
    const got = await s3.send(new GetBucketTaggingCommand({ Bucket: name }));
    expect(got.TagSet).toEqual([
      { Key: 'env', Value: 'test' },
      { Key: 'team', Value: 'storage' },
    ]);
    const tooMany = Array.from({ length: 51 }, (_, i) => ({ Key: `k${i}`, Value: 'v' }));
    await expect(
      s3.send(new PutBucketTaggingCommand({ Bucket: name, Tagging: { TagSet: tooMany } })),
    ).rejects.toMatchObject({ name: 'InvalidTag' });
    await s3.send(new DeleteBucketTaggingCommand({ Bucket: name }));
    await expect(s3.send(new GetBucketTaggingCommand({ Bucket: name }))).rejects.toMatchObject({
      name: 'NoSuchTagSet',
    });
  });
});

describe('bucket names with dots', () => {
  it('are taken by S3 CreateBucket as AWS takes them, and refused where AWS refuses', async () => {
    const made = await f.t.request('POST', '/v1/storage/keys', {
      key: f.a.pat,
      body: { name: 'dotted', actions: ['s3:CreateBucket', 's3:ListAllMyBuckets'] },
    });
    const s3 = new S3Client({
      endpoint: f.endpoint,
      region: 'eu-north-1',
      forcePathStyle: true,
      credentials: { accessKeyId: made.body.access_key, secretAccessKey: made.body.secret_key },
      maxAttempts: 1,
    });
    const name = `dots.${Date.now().toString(36)}.example`;
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'k', Body: 'v' }));
    const api = await f.t.request('GET', `/v1/storage/buckets/${name}`, { key: f.a.pat });
    expect(api.status).toBe(200);
    for (const bad of ['a..b.c', 'a.-bc', '192.168.5.4', 'xn--abc.d'])
      await expect(s3.send(new CreateBucketCommand({ Bucket: bad }))).rejects.toMatchObject({
        name: 'InvalidBucketName',
      });
    s3.destroy();
  });
});
