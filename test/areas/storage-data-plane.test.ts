import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListBucketsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * The control plane against the real S3 data plane (role `s3` on a free port): the endpoint it
 * hands out, counters, delete-only-when-empty, key grants and revocation taking effect on the
 * next request, visibility, CORS and lifecycle.
 */
let t: TestFjord;
let a: TestCustomer;
let aKey: string;
let endpoint: string;
let n = 0;
const fresh = (stem = 'dp') => `${stem}-${Date.now().toString(36)}-${(n++).toString(36)}`;

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_S3_PORT: '0' });
  await t.fjord.start(['s3']);
  a = await t.customer();
  aKey = (await t.kernel.identity.createServiceKey(a.id, 'storage', null)).key;
  endpoint = (await t.request('GET', '/storage/s3')).body.endpoint;
});
afterAll(() => t.close());

const client = (accessKeyId: string, secretAccessKey: string) =>
  new S3Client({
    endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    maxAttempts: 1,
  });

async function bucket(body: Record<string, unknown> = {}) {
  const name = fresh();
  const r = await t.request('POST', '/v1/storage/buckets', {
    key: aKey,
    body: { bucket_name: name, ...body },
  });
  expect(r.status).toBe(201);
  return { name, s3: client(r.body.access_key, r.body.secret_key), endpoint: r.body.endpoint as string };
}
const errorName = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { name?: string; Code?: string }) => e.Code ?? e.name,
  );

describe('the control plane with the S3 data plane', () => {
  it('never acknowledges a write that a racing bucket deletion then discards', async () => {
    for (let round = 0; round < 5; round++) {
      const b = await bucket();
      const puts = Array.from({ length: 6 }, (_, i) =>
        errorName(b.s3.send(new PutObjectCommand({ Bucket: b.name, Key: `k${i}`, Body: `v${i}` }))),
      );
      const del = t.request('DELETE', `/v1/storage/buckets/${b.name}`, { key: aKey });
      const [results, deleted] = await Promise.all([Promise.all(puts), del]);
      const acknowledged = results.filter((r) => r === 'ok').length;
      // Either the deletion lost (409) or no write was acknowledged.
      if (deleted.status === 200) expect(acknowledged, `round ${round}`).toBe(0);
      else expect(deleted.status).toBe(409);
      if (deleted.status === 409) {
        const listed = await t.request('GET', `/v1/storage/buckets/${b.name}`, { key: aKey });
        expect(listed.status).toBe(200);
      }
    }
  });

  it('hands out the bound S3 endpoint, whose default key works', async () => {
    expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(endpoint).not.toBe('http://127.0.0.1:9000');
    const b = await bucket();
    expect(b.endpoint).toBe(endpoint);
    await b.s3.send(new PutObjectCommand({ Bucket: b.name, Key: 'hello.txt', Body: 'Hello' }));
    const got = await b.s3.send(new GetObjectCommand({ Bucket: b.name, Key: 'hello.txt' }));
    expect(await got.Body!.transformToString()).toBe('Hello');
  });

  it('shows exact usage from the data plane’s counters and deletes only when empty', async () => {
    const b = await bucket();
    await b.s3.send(new PutObjectCommand({ Bucket: b.name, Key: 'a', Body: Buffer.alloc(1000, 1) }));
    await b.s3.send(new PutObjectCommand({ Bucket: b.name, Key: 'b/c', Body: Buffer.alloc(2500, 2) }));
    const got = await t.request('GET', `/v1/storage/buckets/${b.name}`, { key: aKey });
    expect(got.body).toMatchObject({
      total_objects: 2,
      object_count: 2,
      size_bytes: 3500,
      total_storage_gb: 3.5e-6,
    });

    const refused = await t.request('DELETE', `/v1/storage/buckets/${b.name}`, { key: aKey });
    expect(refused.status).toBe(409);
    expect(refused.body.detail.code).toBe('bucket_not_empty');
    await b.s3.send(new DeleteObjectCommand({ Bucket: b.name, Key: 'a' }));
    await b.s3.send(new DeleteObjectCommand({ Bucket: b.name, Key: 'b/c' }));
    expect((await t.request('GET', `/v1/storage/buckets/${b.name}`, { key: aKey })).body.total_objects).toBe(
      0,
    );
    // An incomplete multipart upload does not keep the bucket: it goes with it, as on AWS.
    const open = await b.s3.send(new CreateMultipartUploadCommand({ Bucket: b.name, Key: 'unfinished' }));
    await b.s3.send(
      new UploadPartCommand({
        Bucket: b.name,
        Key: 'unfinished',
        UploadId: open.UploadId,
        PartNumber: 1,
        Body: 'x',
      }),
    );
    expect((await t.request('DELETE', `/v1/storage/buckets/${b.name}`, { key: aKey })).status).toBe(200);
    expect(await errorName(b.s3.send(new ListBucketsCommand({})))).toBe('InvalidAccessKeyId');
  });

  it('enforces a key’s actions, and a PATCH or DELETE on the next request', async () => {
    const b = await bucket();
    await b.s3.send(new PutObjectCommand({ Bucket: b.name, Key: 'doc', Body: 'x' }));
    const made = await t.request('POST', `/v1/storage/buckets/${b.name}/keys`, {
      key: aKey,
      body: { name: 'reader', actions: ['s3:GetObject'] },
    });
    const reader = client(made.body.access_key, made.body.secret_key);
    const got = await reader.send(new GetObjectCommand({ Bucket: b.name, Key: 'doc' }));
    expect(await got.Body!.transformToString()).toBe('x');
    expect(
      await errorName(reader.send(new PutObjectCommand({ Bucket: b.name, Key: 'new', Body: 'y' }))),
    ).toBe('AccessDenied');

    const url = `/v1/storage/buckets/${b.name}/keys/${made.body.id}`;
    await t.request('PATCH', url, { key: aKey, body: { actions: ['s3:GetObject', 's3:PutObject'] } });
    expect(
      await errorName(reader.send(new PutObjectCommand({ Bucket: b.name, Key: 'new', Body: 'y' }))),
    ).toBe('ok');

    await t.request('DELETE', url, { key: aKey });
    expect(await errorName(reader.send(new GetObjectCommand({ Bucket: b.name, Key: 'doc' })))).toBe(
      'InvalidAccessKeyId',
    );
    const keys = await t.request('GET', `/v1/storage/buckets/${b.name}/keys`, { key: aKey });
    expect(keys.body[0].last_used_at).toMatch(/^\d{4}-/);
  });

  it('lets anonymous clients read a public bucket only', async () => {
    const b = await bucket();
    await b.s3.send(new PutObjectCommand({ Bucket: b.name, Key: 'pic', Body: 'public bytes' }));
    expect((await fetch(`${endpoint}/${b.name}/pic`)).status).toBe(403);
    await t.request('PATCH', `/v1/storage/buckets/${b.name}/visibility`, {
      key: aKey,
      body: { is_public: true },
    });
    const open = await fetch(`${endpoint}/${b.name}/pic`);
    expect(open.status).toBe(200);
    expect(await open.text()).toBe('public bytes');
    expect((await fetch(`${endpoint}/${b.name}/pic2`, { method: 'PUT', body: 'no' })).status).toBe(403);
  });

  it('answers CORS preflights from the document set through the API', async () => {
    const b = await bucket();
    const preflight = () =>
      fetch(`${endpoint}/${b.name}/x`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'PUT' },
      });
    expect((await preflight()).status).toBe(403);
    await t.request('PUT', `/v1/storage/buckets/${b.name}/cors`, {
      key: aKey,
      body: {
        rules: [
          { allowed_origins: ['https://app.example.com'], allowed_methods: ['PUT'], max_age_seconds: 600 },
        ],
      },
    });
    const ok = await preflight();
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(ok.headers.get('access-control-max-age')).toBe('600');
  });

  it('applies lifecycle rules with the storage.lifecycle job when the clock moves', async () => {
    const b = await bucket();
    await b.s3.send(new PutObjectCommand({ Bucket: b.name, Key: 'tmp/old', Body: 'x' }));
    await b.s3.send(new PutObjectCommand({ Bucket: b.name, Key: 'keep/me', Body: 'y' }));
    await t.request('PUT', `/v1/storage/buckets/${b.name}/lifecycle`, {
      key: aKey,
      body: { rules: [{ prefix: 'tmp/', expiration_days: 1 }] },
    });
    await t.advance(2 * 86400 + 3600);
    const usage = await t.request('GET', `/v1/storage/buckets/${b.name}`, { key: aKey });
    expect(usage.body.total_objects).toBe(1);
    expect(await errorName(b.s3.send(new GetObjectCommand({ Bucket: b.name, Key: 'tmp/old' })))).toBe(
      'NoSuchKey',
    );
  });

  it('lets an account key with s3:CreateBucket create buckets through S3, and the older credentials list them', async () => {
    const made = await t.request('POST', '/v1/storage/keys', {
      key: aKey,
      body: { name: 'creator', actions: ['s3:CreateBucket', 's3:ListAllMyBuckets'] },
    });
    const creator = client(made.body.access_key, made.body.secret_key);
    const name = fresh('via-s3');
    await creator.send(new CreateBucketCommand({ Bucket: name }));
    await creator.send(new PutObjectCommand({ Bucket: name, Key: 'k', Body: 'v' }));
    const listed = await t.request('GET', `/v1/storage/buckets/${name}`, { key: aKey });
    expect(listed.status).toBe(200);
    expect(listed.body.total_objects).toBe(1);

    const limited = await t.request('POST', '/v1/storage/keys', { key: aKey, body: { name: 'no-create' } });
    const noCreate = client(limited.body.access_key, limited.body.secret_key);
    expect(await errorName(noCreate.send(new CreateBucketCommand({ Bucket: fresh('nope') })))).toBe(
      'AccessDenied',
    );

    const creds = (await t.request('GET', '/v1/storage/credentials', { key: aKey })).body;
    const legacy = new S3Client({
      endpoint: creds.endpoint_url,
      region: creds.region,
      forcePathStyle: true,
      credentials: { accessKeyId: creds.access_key_id, secretAccessKey: creds.secret_access_key },
    });
    const all = await legacy.send(new ListBucketsCommand({}));
    expect(all.Buckets?.map((x) => x.Name)).toContain(name);
  });
});
