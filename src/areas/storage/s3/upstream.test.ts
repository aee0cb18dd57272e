import { createHash, randomBytes } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Harness, startHarness } from './testing/harness.js';

/** FJORD_S3_DRIVER=s3: one data plane keeps its bytes in another (any S3-compatible store would do). */
let upstream: Harness;
let front: Harness;
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const client = (h: Harness, id: string) =>
  new S3Client({
    endpoint: h.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: id, secretAccessKey: `secret-${id}` },
  });

beforeAll(async () => {
  upstream = await startHarness();
  upstream.directory.addBucket({ name: 'blobs', customerId: 'ops' });
  upstream.directory.addKey({
    accessKeyId: 'AKUP',
    customerId: 'ops',
    grants: [{ bucket: 'blobs', actions: 'all' }],
  });
  front = await startHarness({
    FJORD_S3_DRIVER: 's3',
    FJORD_S3_UPSTREAM_ENDPOINT: upstream.endpoint,
    FJORD_S3_UPSTREAM_BUCKET: 'blobs',
    FJORD_S3_UPSTREAM_REGION: 'eu-north-1',
    FJORD_S3_UPSTREAM_ACCESS_KEY_ID: 'AKUP',
    FJORD_S3_UPSTREAM_SECRET_ACCESS_KEY: 'secret-AKUP',
    FJORD_S3_UPSTREAM_PREFIX: 'fjord/',
  });
  front.directory.addBucket({ name: 'app', customerId: 'c1' });
  front.directory.addKey({
    accessKeyId: 'AKAPP',
    customerId: 'c1',
    grants: [{ bucket: 'app', actions: 'all' }],
  });
});
afterAll(async () => {
  await front?.close();
  await upstream?.close();
});

describe('the upstream S3 driver', () => {
  it('stores bytes upstream, reads them back whole and in ranges, and deletes them there', async () => {
    const s3 = client(front, 'AKAPP');
    const body = randomBytes(5 * 1024 * 1024 + 1);
    await s3.send(new PutObjectCommand({ Bucket: 'app', Key: 'big.bin', Body: body }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'app', Key: 'big.bin' }));
    expect(sha(await got.Body!.transformToByteArray())).toBe(sha(body));
    const part = await s3.send(
      new GetObjectCommand({ Bucket: 'app', Key: 'big.bin', Range: 'bytes=100-199' }),
    );
    expect(Buffer.from(await part.Body!.transformToByteArray())).toEqual(body.subarray(100, 200));
    const up = client(upstream, 'AKUP');
    const stored = await up.send(new ListObjectsV2Command({ Bucket: 'blobs', Prefix: 'fjord/' }));
    expect(stored.Contents?.length).toBe(1);
    expect(stored.Contents?.[0]?.Size).toBe(body.length);
    await s3.send(new DeleteObjectCommand({ Bucket: 'app', Key: 'big.bin' }));
    // Blob deletes run after the commit: polled, as a loaded machine may take a while to send them.
    await vi.waitFor(
      async () => {
        const after = await up.send(new ListObjectsV2Command({ Bucket: 'blobs', Prefix: 'fjord/' }));
        expect(after.KeyCount).toBe(0);
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it('joins multipart uploads from upstream parts', async () => {
    const s3 = client(front, 'AKAPP');
    const a = randomBytes(5 * 1024 * 1024);
    const b = randomBytes(1000);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'app', Key: 'm.bin' }));
    const p1 = await s3.send(
      new UploadPartCommand({ Bucket: 'app', Key: 'm.bin', UploadId, PartNumber: 1, Body: a }),
    );
    const p2 = await s3.send(
      new UploadPartCommand({ Bucket: 'app', Key: 'm.bin', UploadId, PartNumber: 2, Body: b }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'app',
        Key: 'm.bin',
        UploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: p1.ETag },
            { PartNumber: 2, ETag: p2.ETag },
          ],
        },
      }),
    );
    const got = await s3.send(new GetObjectCommand({ Bucket: 'app', Key: 'm.bin' }));
    expect(sha(await got.Body!.transformToByteArray())).toBe(sha(Buffer.concat([a, b])));
  });

  it('keeps SSE-S3 and SSE-C objects sealed upstream and serves ranges from them', async () => {
    const s3 = client(front, 'AKAPP');
    const body = Buffer.alloc(300_000, 'UPSTREAMPLAIN|');
    const key = randomBytes(32).toString('base64');
    const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: key };
    await s3.send(
      new PutObjectCommand({ Bucket: 'app', Key: 's3.bin', Body: body, ServerSideEncryption: 'AES256' }),
    );
    await s3.send(new PutObjectCommand({ Bucket: 'app', Key: 'c.bin', Body: body, ...ssec }));
    const up = client(upstream, 'AKUP');
    const stored = await up.send(new ListObjectsV2Command({ Bucket: 'blobs', Prefix: 'fjord/' }));
    for (const o of stored.Contents ?? []) {
      const raw = await up.send(new GetObjectCommand({ Bucket: 'blobs', Key: o.Key! }));
      expect(Buffer.from(await raw.Body!.transformToByteArray()).includes('UPSTREAMPLAIN')).toBe(false);
    }
    for (const [Key, extra] of [
      ['s3.bin', {}],
      ['c.bin', ssec],
    ] as const) {
      const r = await s3.send(
        new GetObjectCommand({ Bucket: 'app', Key, Range: 'bytes=65000-200000', ...extra }),
      );
      expect(Buffer.from(await r.Body!.transformToByteArray()).equals(body.subarray(65_000, 200_001))).toBe(
        true,
      );
    }
  });
});
