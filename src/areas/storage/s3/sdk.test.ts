import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSameBytes } from '../../../../test/helpers/bytes.js';
import { type Harness, startHarness } from './testing/harness.js';

const sha = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

let h: Harness;
let s3: S3Client;

beforeAll(async () => {
  h = await startHarness();
  h.directory.addBucket({ name: 'photos', customerId: 'c1' });
  h.directory.addKey({
    accessKeyId: 'AKFULL',
    customerId: 'c1',
    grants: [{ bucket: 'photos', actions: 'all' }],
  });
  s3 = new S3Client({
    endpoint: h.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'AKFULL', secretAccessKey: 'secret-AKFULL' },
  });
});
afterAll(async () => {
  s3?.destroy();
  await h?.close();
});

async function roundTrip(key: string, body: Buffer) {
  await s3.send(
    new PutObjectCommand({
      Bucket: 'photos',
      Key: key,
      Body: body,
      ContentType: 'image/png',
      Metadata: { colour: 'blue' },
    }),
  );
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: key }));
  const bytes = Buffer.from(await got.Body!.transformToByteArray());
  expect(sha(bytes)).toBe(sha(body));
  expect(got.ContentType).toBe('image/png');
  expect(got.Metadata).toEqual({ colour: 'blue' });
  expect(got.ETag).toBe(`"${createHash('md5').update(body).digest('hex')}"`);
}

describe('the S3 data plane with the AWS SDK (CRC trailers on)', () => {
  it('round-trips 0 B, 1 B and 5 MiB + 1 B', async () => {
    await roundTrip('empty', Buffer.alloc(0));
    await roundTrip('one', Buffer.from('x'));
    await roundTrip('dir/big.bin', randomBytes(5 * 1024 * 1024 + 1));
  });

  it('answers ranges and conditions', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'r.txt', Body: 'hello world' }));
    const part = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'r.txt', Range: 'bytes=6-' }));
    expect(await part.Body!.transformToString()).toBe('world');
    expect(part.ContentRange).toBe('bytes 6-10/11');
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'r.txt' }));
    await expect(
      s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'r.txt', IfNoneMatch: head.ETag })),
    ).rejects.toMatchObject({
      $metadata: { httpStatusCode: 304 },
    });
    await expect(
      s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'r.txt', IfMatch: '"nope"' })),
    ).rejects.toMatchObject({
      name: 'PreconditionFailed',
    });
    await expect(
      s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'r.txt', Range: 'bytes=20-' })),
    ).rejects.toMatchObject({
      name: 'InvalidRange',
    });
    await expect(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'missing' }))).rejects.toMatchObject({
      name: 'NoSuchKey',
    });
  });

  it('uploads 50 MiB in parts with a "<md5>-N" ETag, and enforces the part rules', async () => {
    const body = randomBytes(50 * 1024 * 1024);
    const { UploadId } = await s3.send(
      new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'multi.bin' }),
    );
    const size = 8 * 1024 * 1024;
    const parts: { PartNumber: number; ETag: string }[] = [];
    const md5s: Buffer[] = [];
    for (let i = 0, n = 1; i < body.length; i += size, n++) {
      const chunk = body.subarray(i, i + size);
      md5s.push(createHash('md5').update(chunk).digest());
      const r = await s3.send(
        new UploadPartCommand({ Bucket: 'photos', Key: 'multi.bin', UploadId, PartNumber: n, Body: chunk }),
      );
      parts.push({ PartNumber: n, ETag: r.ETag! });
    }
    const listed = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'multi.bin', UploadId }));
    expect(listed.Parts?.length).toBe(parts.length);
    await expect(
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: 'photos',
          Key: 'multi.bin',
          UploadId,
          MultipartUpload: { Parts: [...parts].reverse() },
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidPartOrder' });
    const done = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'photos',
        Key: 'multi.bin',
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
    expect(done.ETag).toBe(
      `"${createHash('md5').update(Buffer.concat(md5s)).digest('hex')}-${parts.length}"`,
    );
    const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'multi.bin' }));
    expect(sha(Buffer.from(await got.Body!.transformToByteArray()))).toBe(sha(body));
    const mid = await s3.send(
      new GetObjectCommand({ Bucket: 'photos', Key: 'multi.bin', Range: `bytes=${size - 2}-${size + 1}` }),
    );
    expect(Buffer.from(await mid.Body!.transformToByteArray())).toEqual(body.subarray(size - 2, size + 2));
    // One part of it, by its number: a ranged read with the parts count.
    const second = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'multi.bin', PartNumber: 2 }));
    expect(second.PartsCount).toBe(parts.length);
    expect(second.ContentRange).toBe(`bytes ${size}-${2 * size - 1}/${body.length}`);
    expectSameBytes(await second.Body!.transformToByteArray(), body.subarray(size, 2 * size), 'part 2');
    const attributes = await s3.send(
      new GetObjectAttributesCommand({
        Bucket: 'photos',
        Key: 'multi.bin',
        ObjectAttributes: ['ETag', 'ObjectSize', 'ObjectParts', 'StorageClass'],
        MaxParts: 2,
      }),
    );
    expect(attributes).toMatchObject({
      ETag: done.ETag!.replace(/"/g, ''),
      ObjectSize: body.length,
      StorageClass: 'STANDARD',
      ObjectParts: { TotalPartsCount: parts.length, IsTruncated: true, NextPartNumberMarker: '2' },
    });
    expect(attributes.ObjectParts?.Parts?.map((p) => p.Size)).toEqual([size, size]);
    const last = await s3.send(
      new HeadObjectCommand({ Bucket: 'photos', Key: 'multi.bin', PartNumber: parts.length }),
    );
    expect(last.ContentLength).toBe(body.length - (parts.length - 1) * size);
    await expect(
      s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'multi.bin', PartNumber: parts.length + 1 })),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 416 } });

    const small = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'small.bin' }));
    const p1 = await s3.send(
      new UploadPartCommand({
        Bucket: 'photos',
        Key: 'small.bin',
        UploadId: small.UploadId,
        PartNumber: 1,
        Body: 'a',
      }),
    );
    const p2 = await s3.send(
      new UploadPartCommand({
        Bucket: 'photos',
        Key: 'small.bin',
        UploadId: small.UploadId,
        PartNumber: 2,
        Body: 'b',
      }),
    );
    await expect(
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: 'photos',
          Key: 'small.bin',
          UploadId: small.UploadId,
          MultipartUpload: {
            Parts: [
              { PartNumber: 1, ETag: p1.ETag },
              { PartNumber: 2, ETag: p2.ETag },
            ],
          },
        }),
      ),
    ).rejects.toMatchObject({ name: 'EntityTooSmall' });
    await s3.send(
      new AbortMultipartUploadCommand({ Bucket: 'photos', Key: 'small.bin', UploadId: small.UploadId }),
    );
    await expect(
      s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'small.bin', UploadId: small.UploadId })),
    ).rejects.toMatchObject({
      name: 'NoSuchUpload',
    });
    // 50 MiB through SigV4 chunk signing and CRC trailers: on a loaded 2-core machine this took 130 s.
  }, 300_000);

  it('lists with prefix, delimiter and continuation', async () => {
    for (const k of ['l/a/1', 'l/a/2', 'l/b/1', 'l/c', 'l/d', 'l/e']) {
      await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: k, Body: k }));
    }
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({
          Bucket: 'photos',
          Prefix: 'l/',
          Delimiter: '/',
          MaxKeys: 2,
          ContinuationToken: token,
        }),
      );
      seen.push(
        ...(page.CommonPrefixes ?? []).map((p) => p.Prefix!),
        ...(page.Contents ?? []).map((c) => c.Key!),
      );
      token = page.NextContinuationToken;
    } while (token);
    expect(seen.sort()).toEqual(['l/a/', 'l/b/', 'l/c', 'l/d', 'l/e']);
    const zero = await s3.send(new ListObjectsV2Command({ Bucket: 'photos', MaxKeys: 0 }));
    expect(zero.KeyCount).toBe(0);
  });

  it('copies, deletes in bulk, and keeps versions when enabled', async () => {
    await s3.send(
      new PutObjectCommand({ Bucket: 'photos', Key: 'src', Body: 'copy me', Metadata: { a: '1' } }),
    );
    await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'dst', CopySource: 'photos/src' }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'dst' }));
    expect(await got.Body!.transformToString()).toBe('copy me');
    expect(got.Metadata).toEqual({ a: '1' });
    const del = await s3.send(
      new DeleteObjectsCommand({ Bucket: 'photos', Delete: { Objects: [{ Key: 'src' }, { Key: 'dst' }] } }),
    );
    expect(del.Deleted?.length).toBe(2);

    h.directory.update('photos', { versioning: 'Enabled' });
    const v1 = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'v', Body: 'one' }));
    const v2 = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'v', Body: 'two' }));
    expect(v1.VersionId).not.toBe(v2.VersionId);
    const marker = await s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'v' }));
    expect(marker.DeleteMarker).toBe(true);
    await expect(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'v' }))).rejects.toMatchObject({
      name: 'NoSuchKey',
    });
    const old = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'v', VersionId: v1.VersionId }));
    expect(await old.Body!.transformToString()).toBe('one');
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: 'photos', Prefix: 'v' }));
    expect(versions.Versions?.map((v) => v.VersionId)).toEqual([v2.VersionId, v1.VersionId]);
    expect(versions.DeleteMarkers?.[0]?.IsLatest).toBe(true);
    await s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'v', VersionId: marker.VersionId }));
    const back = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'v' }));
    expect(await back.Body!.transformToString()).toBe('two');
    h.directory.update('photos', { versioning: 'Suspended' });
  });

  it('keeps the counters exact', async () => {
    const usage = await h.plane.stats.usage('b-photos');
    const all = await s3.send(new ListObjectVersionsCommand({ Bucket: 'photos' }));
    const versions = all.Versions ?? [];
    expect(usage.objects).toBe(versions.length);
    expect(usage.bytes).toBe(versions.reduce((n, v) => n + (v.Size ?? 0), 0));
  });
});

describe('retries and edge cases clients meet', () => {
  it('answers a Complete sent again for a completed upload with the first answer (same parts only)', async () => {
    const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'twice.bin' }));
    const part = await s3.send(
      new UploadPartCommand({
        Bucket: 'photos',
        Key: 'twice.bin',
        UploadId: up.UploadId,
        PartNumber: 1,
        Body: 'only part',
      }),
    );
    const complete = (etag: string | undefined) =>
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: 'photos',
          Key: 'twice.bin',
          UploadId: up.UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: etag }] },
        }),
      );
    const first = await complete(part.ETag);
    const again = await complete(part.ETag);
    expect(again.ETag).toBe(first.ETag);
    expect(again.VersionId).toBe(first.VersionId);
    await expect(complete('"00000000000000000000000000000000"')).rejects.toMatchObject({
      name: 'NoSuchUpload',
    });
  });

  it('refuses a Complete with If-None-Match: * when the key exists', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'exists.bin', Body: 'here' }));
    const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'exists.bin' }));
    const part = await s3.send(
      new UploadPartCommand({
        Bucket: 'photos',
        Key: 'exists.bin',
        UploadId: up.UploadId,
        PartNumber: 1,
        Body: 'x',
      }),
    );
    const complete = new CompleteMultipartUploadCommand({
      Bucket: 'photos',
      Key: 'exists.bin',
      UploadId: up.UploadId,
      IfNoneMatch: '*',
      MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
    });
    await expect(s3.send(complete)).rejects.toMatchObject({ $metadata: { httpStatusCode: 412 } });
    const still = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'exists.bin' }));
    expect(await still.Body!.transformToString()).toBe('here');
  });

  it('replaces a part uploaded again under the same number', async () => {
    const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'again.bin' }));
    const put = (body: string) =>
      s3.send(
        new UploadPartCommand({
          Bucket: 'photos',
          Key: 'again.bin',
          UploadId: up.UploadId,
          PartNumber: 1,
          Body: body,
        }),
      );
    await put('first');
    const second = await put('second');
    const listed = await s3.send(
      new ListPartsCommand({ Bucket: 'photos', Key: 'again.bin', UploadId: up.UploadId }),
    );
    expect(listed.Parts?.map((p) => p.ETag)).toEqual([second.ETag]);
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'photos',
        Key: 'again.bin',
        UploadId: up.UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: second.ETag }] },
      }),
    );
    const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'again.bin' }));
    expect(await got.Body!.transformToString()).toBe('second');
  });

  it('takes an empty continuation token as the top of the listing', async () => {
    const r = await s3.send(
      new ListObjectsV2Command({ Bucket: 'photos', ContinuationToken: '', MaxKeys: 1000 }),
    );
    expect(r.ContinuationToken).toBe('');
    expect(r.Contents?.length).toBeGreaterThan(0);
  });

  it('ignores an Expect header other than 100-continue, as S3 does', async () => {
    for (const expect100 of ['200', '']) {
      const cmd = new PutObjectCommand({ Bucket: 'photos', Key: 'expect-other', Body: `bar${expect100}` });
      cmd.middlewareStack.add(
        (next) => async (args) => {
          (args.request as { headers: Record<string, string> }).headers['expect'] = expect100;
          return next(args);
        },
        { step: 'build' },
      );
      await s3.send(cmd);
      const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'expect-other' }));
      expect(await got.Body!.transformToString()).toBe(`bar${expect100}`);
    }
  });

  it('sends 100 Continue only once the request is authorised', async () => {
    const send = (headers: Record<string, string>) =>
      new Promise<{ continued: boolean; status: number }>((resolve, reject) => {
        const u = new URL(h.endpoint);
        let continued = false;
        const req = request({
          host: u.hostname,
          port: u.port,
          method: 'PUT',
          path: '/photos/expect.txt',
          headers: { 'content-length': '5', expect: '100-continue', ...headers },
        });
        req.on('continue', () => {
          continued = true;
          req.end('hello');
        });
        req.on('response', (res) => {
          res.resume();
          resolve({ continued, status: res.statusCode ?? 0 });
          if (!continued) req.destroy();
        });
        req.on('error', (err) => (continued ? reject(err) : undefined));
        req.flushHeaders();
      });
    // Unsigned, to a private bucket: refused before the body is ever asked for.
    expect(await send({})).toEqual({ continued: false, status: 403 });
  });
});

describe('emptying a bucket, as clients do', () => {
  it('deletes keys that are or end in spaces with DeleteObjects: keys are never trimmed', async () => {
    h.directory.addBucket({ name: 'spaces', customerId: 'c1' });
    h.directory.addKey({
      accessKeyId: 'AKSPACE',
      customerId: 'c1',
      grants: [{ bucket: 'spaces', actions: 'all' }],
    });
    const c = new S3Client({
      endpoint: h.endpoint,
      region: 'eu-north-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKSPACE', secretAccessKey: 'secret-AKSPACE' },
    });
    for (const Key of [' ', '_ ', ' lead', 'plain'])
      await c.send(new PutObjectCommand({ Bucket: 'spaces', Key, Body: 'x' }));
    const del = await c.send(
      new DeleteObjectsCommand({
        Bucket: 'spaces',
        Delete: { Objects: [{ Key: ' ' }, { Key: '_ ' }, { Key: ' lead' }, { Key: 'plain' }] },
      }),
    );
    expect(del.Deleted?.map((d) => d.Key).sort()).toEqual([' ', ' lead', '_ ', 'plain']);
    expect((await c.send(new ListObjectsV2Command({ Bucket: 'spaces' }))).KeyCount).toBe(0);
    c.destroy();
  });

  it('pages ListObjectVersions after a marker whose version was just deleted', async () => {
    h.directory.addBucket({ name: 'versioned', customerId: 'c1' });
    h.directory.addKey({
      accessKeyId: 'AKVER',
      customerId: 'c1',
      grants: [{ bucket: 'versioned', actions: 'all' }],
    });
    h.directory.update('versioned', { versioning: 'Enabled' });
    const c = new S3Client({
      endpoint: h.endpoint,
      region: 'eu-north-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKVER', secretAccessKey: 'secret-AKVER' },
    });
    for (const Key of ['a', 'b', 'c'])
      for (const Body of ['1', '2']) await c.send(new PutObjectCommand({ Bucket: 'versioned', Key, Body }));
    // Page by page, deleting each page before asking for the next, as `aws s3 rb --force` does.
    let KeyMarker: string | undefined;
    let VersionIdMarker: string | undefined;
    let deleted = 0;
    for (let pages = 0; pages < 10; pages++) {
      const page = await c.send(
        new ListObjectVersionsCommand({ Bucket: 'versioned', MaxKeys: 2, KeyMarker, VersionIdMarker }),
      );
      const objects = (page.Versions ?? []).map((v) => ({ Key: v.Key!, VersionId: v.VersionId! }));
      if (objects.length)
        await c.send(new DeleteObjectsCommand({ Bucket: 'versioned', Delete: { Objects: objects } }));
      deleted += objects.length;
      if (!page.IsTruncated) break;
      KeyMarker = page.NextKeyMarker;
      VersionIdMarker = page.NextVersionIdMarker;
    }
    expect(deleted).toBe(6);
    expect((await c.send(new ListObjectVersionsCommand({ Bucket: 'versioned' }))).Versions ?? []).toEqual([]);
    c.destroy();
  });
});

describe('what Fjord does not do is refused, never ignored', () => {
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (err: { name: string }) => err.name,
    );

  it('refuses bad SSE-C keys, SSE-KMS, canned ACLs, grants and object lock outside lock buckets with S3’s own errors, and stores nothing', async () => {
    const put = (extra: object) =>
      failure(s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'refused', Body: 'secret', ...extra })));
    expect(
      await put({
        SSECustomerAlgorithm: 'AES256',
        // 16 bytes: not an AES-256 key (sse.test.ts covers SSE-C itself).
        SSECustomerKey: Buffer.alloc(16, 7).toString('base64'),
      }),
    ).toBe('InvalidArgument');
    expect(await put({ ServerSideEncryption: 'aws:kms:dsse' })).toBe('NotImplemented');
    // ACLs are off in a BucketOwnerEnforced bucket (the default), as on AWS.
    expect(await put({ ACL: 'public-read' })).toBe('AccessControlListNotSupported');
    expect(await put({ GrantRead: 'uri="http://acs.amazonaws.com/groups/global/AllUsers"' })).toBe(
      'AccessControlListNotSupported',
    );
    expect(await put({ ACL: 'log-delivery-write' })).toBe('NotImplemented');
    expect(
      await put({
        ObjectLockMode: 'GOVERNANCE',
        ObjectLockRetainUntilDate: new Date(Date.now() + 86_400_000),
      }),
    ).toBe('InvalidRequest');
    expect(await failure(s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'refused' })))).toBe(
      'NotFound',
    );
    expect(
      await failure(
        s3.send(
          new CreateMultipartUploadCommand({
            Bucket: 'photos',
            Key: 'refused',
            ServerSideEncryption: 'aws:kms:dsse',
          }),
        ),
      ),
    ).toBe('NotImplemented');
    // Reads Fjord does not do yet are refused, not answered with the whole object.
    expect(
      await failure(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'src', PartNumber: 1 }))),
    ).not.toBe('ok');
    const badName = await failure(s3.send(new CreateBucketCommand({ Bucket: 'Bad_Name' })));
    expect(badName).toBe('InvalidBucketName');
    // Standard headers come back as written.
    await s3.send(
      new PutObjectCommand({ Bucket: 'photos', Key: 'enc', Body: 'x', ContentEncoding: 'deflate, gzip' }),
    );
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'enc' }))).ContentEncoding).toBe(
      'deflate, gzip',
    );
    // What every Fjord object already is, and SSE-S3 (sse.test.ts), are accepted.
    expect(await put({ ACL: 'private' })).toBe('ok');
    expect(await put({ ServerSideEncryption: 'AES256' })).toBe('ok');
  });
});
