import {
  CopyObjectCommand,
  CreateBucketCommand,
  GetObjectCommand,
  GetObjectLegalHoldCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  PutBucketPolicyCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
  PutObjectTaggingCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signV2 } from './sigv2.js';
import { type Harness, startHarness } from './testing/harness.js';

// Regression tests for what the Ceph s3-tests conformance suite found (docs/s3.md, Conformance).
let h: Harness;
const clients: S3Client[] = [];
const client = (region: string, key = 'AKCONF') => {
  const c = new S3Client({
    endpoint: h.endpoint,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId: key, secretAccessKey: `secret-${key}` },
  });
  clients.push(c);
  return c;
};
const failure = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: Error) => e.name,
  );

beforeAll(async () => {
  h = await startHarness();
  h.directory.addKey({
    accessKeyId: 'AKCONF',
    customerId: 'c1',
    mayCreateBuckets: true,
    grants: [{ bucket: '*', actions: 'all' }],
  });
  h.directory.addKey({ accessKeyId: 'AKOTHER', customerId: 'c2', mayCreateBuckets: true, grants: [] });
});
afterAll(async () => {
  for (const c of clients) c.destroy();
  await h?.close();
});

describe('CreateBucket on a bucket that exists', () => {
  it('is 200 and a no-op for its owner in us-east-1, BucketAlreadyOwnedByYou elsewhere', async () => {
    const east = client('us-east-1');
    await east.send(new CreateBucketCommand({ Bucket: 'again' }));
    expect(await failure(east.send(new CreateBucketCommand({ Bucket: 'again' })))).toBe('ok');
    expect(await failure(client('eu-north-1').send(new CreateBucketCommand({ Bucket: 'again' })))).toBe(
      'BucketAlreadyOwnedByYou',
    );
    expect(
      await failure(client('us-east-1', 'AKOTHER').send(new CreateBucketCommand({ Bucket: 'again' }))),
    ).toBe('BucketAlreadyExists');
  });
});

describe('PostObject with a policy document that is not one', () => {
  const post = async (policy: unknown) => {
    const text = Buffer.from(JSON.stringify(policy)).toString('base64');
    const form = new FormData();
    form.append('key', 'form.txt');
    form.append('AWSAccessKeyId', 'AKCONF');
    form.append('policy', text);
    form.append('signature', signV2('secret-AKCONF', text));
    form.append('file', new Blob(['bar']), 'form.txt');
    const res = await fetch(`${h.endpoint}/posted`, { method: 'POST', body: form });
    return [res.status, /<Code>(\w+)<\/Code>/.exec(await res.text())?.[1] ?? ''];
  };
  const later = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const conditions = [{ bucket: 'posted' }, ['starts-with', '$key', 'form']];

  it('is 400 InvalidPolicyDocument, and a good one still uploads', async () => {
    await client('eu-north-1').send(new CreateBucketCommand({ Bucket: 'posted' }));
    const bad = [
      { expiration: later.replace('T', ' ').replace('Z', '+00:00'), conditions },
      { expiration: later },
      { expiration: later, CONDITIONS: conditions },
      { expiration: later, conditions: [...conditions, {}] },
      { expiration: later, conditions: [...conditions, ['content-length-range', 0]] },
    ];
    for (const policy of bad)
      expect(await post(policy), JSON.stringify(policy)).toEqual([400, 'InvalidPolicyDocument']);
    expect(await post({ expiration: later, conditions })).toEqual([204, '']);
  });
});

describe('GET and HEAD with SSE-S3 or SSE-KMS request headers', () => {
  it('are 400, as S3 answers them; SSE-C headers stay how an SSE-C object is read', async () => {
    const s3 = client('eu-north-1');
    await s3.send(new CreateBucketCommand({ Bucket: 'sse-read' }));
    await s3.send(
      new PutObjectCommand({ Bucket: 'sse-read', Key: 'k', Body: 'x', ServerSideEncryption: 'AES256' }),
    );
    const withHeaders = (headers: Record<string, string>) => {
      const c = client('eu-north-1');
      c.middlewareStack.add(
        (next) => async (args) => {
          Object.assign((args.request as { headers: Record<string, string> }).headers, headers);
          return next(args);
        },
        { step: 'build' },
      );
      return c;
    };
    const sse = withHeaders({ 'x-amz-server-side-encryption': 'AES256' });
    expect(await failure(sse.send(new GetObjectCommand({ Bucket: 'sse-read', Key: 'k' })))).toBe(
      'InvalidArgument',
    );
    const head = await sse.send(new HeadObjectCommand({ Bucket: 'sse-read', Key: 'k' })).then(
      () => 200,
      (e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode,
    );
    expect(head).toBe(400);
    const kms = withHeaders({ 'x-amz-server-side-encryption-aws-kms-key-id': 'alias/aws/s3' });
    expect(await failure(kms.send(new GetObjectCommand({ Bucket: 'sse-read', Key: 'k' })))).toBe(
      'InvalidArgument',
    );
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'sse-read', Key: 'k' })))).toBe('ok');
  });
});

describe('bucket policy conditions on request headers', () => {
  it('take s3:RequestObjectTag/<key> and s3:x-amz-copy-source', async () => {
    const s3 = client('eu-north-1');
    await s3.send(new CreateBucketCommand({ Bucket: 'cond' }));
    await s3.send(new PutObjectCommand({ Bucket: 'cond', Key: 'public/a', Body: 'a' }));
    await s3.send(new PutObjectCommand({ Bucket: 'cond', Key: 'private/a', Body: 'b' }));
    const Policy = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: 'c2' },
          Action: 's3:PutObject',
          Resource: 'arn:aws:s3:::cond/*',
          Condition: {
            StringEquals: { 's3:RequestObjectTag/security': 'public' },
            StringLikeIfExists: { 's3:x-amz-copy-source': 'cond/public/*' },
          },
        },
        {
          Effect: 'Allow',
          Principal: { AWS: 'c2' },
          Action: 's3:GetObject',
          Resource: 'arn:aws:s3:::cond/*',
        },
      ],
    });
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'cond', Policy }));
    const other = client('eu-north-1', 'AKOTHER');
    const put = (Tagging?: string) =>
      other.send(new PutObjectCommand({ Bucket: 'cond', Key: 'up', Body: 'x', Tagging }));
    expect(await failure(put('security=public'))).toBe('ok');
    expect(await failure(put('security=secret'))).toBe('AccessDenied');
    expect(await failure(put())).toBe('AccessDenied');
    const copy = (from: string) =>
      other.send(
        new CopyObjectCommand({
          Bucket: 'cond',
          Key: 'copied',
          CopySource: `cond/${from}`,
          Tagging: 'security=public',
          TaggingDirective: 'REPLACE',
        }),
      );
    expect(await failure(copy('public/a'))).toBe('ok');
    expect(await failure(copy('private/a'))).toBe('AccessDenied');
  });
});

describe('bucket policy conditions on the object’s stored tags', () => {
  it('take s3:ExistingObjectTag/<key> for reads and tag writes', async () => {
    const s3 = client('eu-north-1');
    await s3.send(new CreateBucketCommand({ Bucket: 'tagged' }));
    for (const [Key, Tagging] of [
      ['public', 'security=public&foo=bar'],
      ['private', 'security=private'],
      ['other', 'security1=public'],
    ] as const)
      await s3.send(new PutObjectCommand({ Bucket: 'tagged', Key, Body: Key, Tagging }));
    const Policy = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: 'c2' },
          Action: ['s3:GetObject', 's3:PutObjectTagging'],
          Resource: 'arn:aws:s3:::tagged/*',
          Condition: { StringEquals: { 's3:ExistingObjectTag/security': 'public' } },
        },
      ],
    });
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'tagged', Policy }));
    const other = client('eu-north-1', 'AKOTHER');
    const get = (Key: string) => failure(other.send(new GetObjectCommand({ Bucket: 'tagged', Key })));
    expect(await get('public')).toBe('ok');
    expect(await get('private')).toBe('AccessDenied');
    expect(await get('other')).toBe('AccessDenied');
    expect(await get('missing')).toBe('AccessDenied');
    // Once its stored tag changes, the same request is judged by the new one.
    const retag = (value: string) =>
      failure(
        other.send(
          new PutObjectTaggingCommand({
            Bucket: 'tagged',
            Key: 'public',
            Tagging: { TagSet: [{ Key: 'security', Value: value }] },
          }),
        ),
      );
    expect(await retag('private')).toBe('ok');
    expect(await get('public')).toBe('AccessDenied');
    expect(await retag('public')).toBe('AccessDenied');
  });

  it('judge a copy’s source by its own tags, so a Deny cannot be copied around', async () => {
    const s3 = client('eu-north-1');
    await s3.send(new CreateBucketCommand({ Bucket: 'classified' }));
    await s3.send(
      new PutObjectCommand({ Bucket: 'classified', Key: 'secret', Body: 's', Tagging: 'class=secret' }),
    );
    await s3.send(new PutObjectCommand({ Bucket: 'classified', Key: 'plain', Body: 'p' }));
    const Policy = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Deny',
          Principal: '*',
          Action: 's3:GetObject',
          Resource: 'arn:aws:s3:::classified/*',
          Condition: { StringEquals: { 's3:ExistingObjectTag/class': 'secret' } },
        },
      ],
    });
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'classified', Policy }));
    const copy = (from: string) =>
      failure(
        s3.send(
          new CopyObjectCommand({
            Bucket: 'classified',
            Key: `copy-of-${from}`,
            CopySource: `classified/${from}`,
          }),
        ),
      );
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'classified', Key: 'secret' })))).toBe(
      'AccessDenied',
    );
    expect(await copy('secret')).toBe('AccessDenied');
    expect(await copy('plain')).toBe('ok');
  });
});

describe('a refused read of a missing object', () => {
  it('is 404 to a key that may list its name, 403 to others', async () => {
    const s3 = client('eu-north-1');
    await s3.send(new CreateBucketCommand({ Bucket: 'listable' }));
    await s3.send(new PutObjectCommand({ Bucket: 'listable', Key: 'public/there', Body: 'x' }));
    const Policy = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: '*' },
          Action: 's3:ListBucket',
          Resource: 'arn:aws:s3:::listable',
          Condition: { StringLike: { 's3:prefix': 'public/*' } },
        },
      ],
    });
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'listable', Policy }));
    const other = client('eu-north-1', 'AKOTHER');
    const head = (Key: string) =>
      other.send(new HeadObjectCommand({ Bucket: 'listable', Key })).then(
        () => 200,
        (e: { $metadata: { httpStatusCode: number } }) => e.$metadata.httpStatusCode,
      );
    expect(await head('public/missing')).toBe(404);
    expect(await head('private/missing')).toBe(403);
    // It exists: reading it is still refused.
    expect(await head('public/there')).toBe(403);
  });
});

describe('GetObjectLegalHold', () => {
  it('answers OFF once a legal hold was turned off, NoSuchObjectLockConfiguration before any', async () => {
    const s3 = client('eu-north-1');
    await s3.send(new CreateBucketCommand({ Bucket: 'held', ObjectLockEnabledForBucket: true }));
    await s3.send(new PutObjectCommand({ Bucket: 'held', Key: 'k', Body: 'x' }));
    const get = () => s3.send(new GetObjectLegalHoldCommand({ Bucket: 'held', Key: 'k' }));
    expect(await failure(get())).toBe('NoSuchObjectLockConfiguration');
    for (const Status of ['ON', 'OFF'] as const) {
      await s3.send(new PutObjectLegalHoldCommand({ Bucket: 'held', Key: 'k', LegalHold: { Status } }));
      expect((await get()).LegalHold).toEqual({ Status });
    }
    // HEAD shows the explicit OFF too, as S3 does.
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'held', Key: 'k' }));
    expect(head.ObjectLockLegalHoldStatus).toBe('OFF');
  });
});

describe('ListBuckets', () => {
  it('pages with max-buckets and continuation-token, in name order, and filters by prefix', async () => {
    h.directory.addKey({
      accessKeyId: 'AKPAGE',
      customerId: 'c3',
      mayCreateBuckets: true,
      accountActions: ['s3:ListAllMyBuckets'],
      grants: [{ bucket: '*', actions: 'all' }],
    });
    const s3 = client('eu-north-1', 'AKPAGE');
    for (const Bucket of ['page-b', 'page-a', 'page-c']) await s3.send(new CreateBucketCommand({ Bucket }));
    const names: string[] = [];
    let ContinuationToken: string | undefined;
    do {
      const r = await s3.send(new ListBucketsCommand({ MaxBuckets: 2, ContinuationToken }));
      names.push(...(r.Buckets ?? []).map((b) => b.Name!));
      ContinuationToken = r.ContinuationToken;
      expect(r.Buckets!.length).toBeLessThanOrEqual(2);
    } while (ContinuationToken);
    expect(names).toEqual(['page-a', 'page-b', 'page-c']);
    const some = await s3.send(new ListBucketsCommand({ Prefix: 'page-b' }));
    expect([some.Buckets?.map((b) => b.Name), some.Prefix]).toEqual([['page-b'], 'page-b']);
    expect(await failure(s3.send(new ListBucketsCommand({ MaxBuckets: 0 })))).toBe('InvalidArgument');
  });
});
