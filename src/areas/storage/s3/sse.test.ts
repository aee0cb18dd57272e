import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteBucketEncryptionCommand,
  GetBucketEncryptionCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutBucketEncryptionCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './testing/harness.js';

let h: Harness;
let s3: S3Client;
const Bucket = 'vault';

beforeAll(async () => {
  h = await startHarness();
  h.directory.addBucket({ name: Bucket, customerId: 'c1' });
  h.directory.addBucket({ name: 'plain', customerId: 'c1' });
  h.directory.addKey({ accessKeyId: 'AKSSE', customerId: 'c1', grants: [{ bucket: '*', actions: 'all' }] });
  s3 = new S3Client({
    endpoint: h.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'AKSSE', secretAccessKey: 'secret-AKSSE' },
  });
});
afterAll(async () => {
  s3?.destroy();
  await h?.close();
});

/** A body that says where every byte is (so a wrong range shows), with a marker to look for on disk. */
function marked(size: number, marker: string): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i += 64) b.write(`${marker}:${String(i).padStart(12, '0')}|`.padEnd(64, '.'), i);
  return b;
}

/** Whether any stored blob holds `marker` in clear. */
function onDisk(marker: string): boolean {
  const walk = (dir: string): boolean =>
    existsSync(dir) &&
    readdirSync(dir).some((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? walk(p) : readFileSync(p).includes(marker);
    });
  return walk(join(h.dataDir, 'objects'));
}

const bytes = async (r: { Body?: { transformToByteArray(): Promise<Uint8Array> } }) =>
  Buffer.from(await r.Body!.transformToByteArray());

const customerKey = () => randomBytes(32).toString('base64');
const ssec = (key: string) => ({ SSECustomerAlgorithm: 'AES256', SSECustomerKey: key });

describe('SSE-S3 (x-amz-server-side-encryption: AES256)', () => {
  const body = marked(200_000, 'SSES3PLAIN');

  it('seals the bytes at rest and serves them, whole and by range across chunks', async () => {
    // The check can see plaintext: an unsealed object's marker is found.
    await s3.send(
      new PutObjectCommand({ Bucket: 'plain', Key: 'control', Body: marked(1000, 'CONTROLPLAIN') }),
    );
    expect(onDisk('CONTROLPLAIN')).toBe(true);
    expect(onDisk('SSES3PLAIN')).toBe(false);
    const put = await s3.send(
      new PutObjectCommand({ Bucket, Key: 's3.bin', Body: body, ServerSideEncryption: 'AES256' }),
    );
    expect(put.ServerSideEncryption).toBe('AES256');
    expect(onDisk('SSES3PLAIN')).toBe(false);
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: 's3.bin' }));
    expect(got.ServerSideEncryption).toBe('AES256');
    expect((await bytes(got)).equals(body)).toBe(true);
    for (const [a, z] of [
      [65_530, 131_080],
      [0, 0],
      [65_536, 65_536],
      [199_999, 199_999],
      [10, 65_535],
    ] as const) {
      const r = await s3.send(new GetObjectCommand({ Bucket, Key: 's3.bin', Range: `bytes=${a}-${z}` }));
      expect((await bytes(r)).equals(body.subarray(a, z + 1)), `${a}-${z}`).toBe(true);
    }
    const tail = await s3.send(new GetObjectCommand({ Bucket, Key: 's3.bin', Range: 'bytes=-5' }));
    expect((await bytes(tail)).equals(body.subarray(-5))).toBe(true);
    const head = await s3.send(new HeadObjectCommand({ Bucket, Key: 's3.bin' }));
    expect(head.ServerSideEncryption).toBe('AES256');
    expect(head.ContentLength).toBe(body.length);
  });

  it('seals an empty object and a small one', async () => {
    for (const b of [Buffer.alloc(0), Buffer.from('tiny SSES3TINY')]) {
      await s3.send(new PutObjectCommand({ Bucket, Key: 'small', Body: b, ServerSideEncryption: 'AES256' }));
      const got = await s3.send(new GetObjectCommand({ Bucket, Key: 'small' }));
      expect((await bytes(got)).equals(b)).toBe(true);
    }
    expect(onDisk('SSES3TINY')).toBe(false);
  });

  it('applies the bucket default encryption (Get/Put/DeleteBucketEncryption)', async () => {
    await expect(s3.send(new GetBucketEncryptionCommand({ Bucket }))).rejects.toMatchObject({
      name: 'ServerSideEncryptionConfigurationNotFoundError',
      $metadata: { httpStatusCode: 404 },
    });
    await s3.send(
      new PutBucketEncryptionCommand({
        Bucket,
        ServerSideEncryptionConfiguration: {
          Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
      }),
    );
    const cfg = await s3.send(new GetBucketEncryptionCommand({ Bucket }));
    expect(cfg.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault).toEqual({
      SSEAlgorithm: 'AES256',
    });
    const put = await s3.send(new PutObjectCommand({ Bucket, Key: 'default', Body: 'DEFAULTSEALED' }));
    expect(put.ServerSideEncryption).toBe('AES256');
    expect(onDisk('DEFAULTSEALED')).toBe(false);
    expect((await s3.send(new HeadObjectCommand({ Bucket, Key: 'default' }))).ServerSideEncryption).toBe(
      'AES256',
    );
    await expect(
      s3.send(
        new PutBucketEncryptionCommand({
          Bucket,
          ServerSideEncryptionConfiguration: {
            Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms:dsse' } }],
          },
        }),
      ),
    ).rejects.toMatchObject({ name: 'NotImplemented', $metadata: { httpStatusCode: 501 } });
    await s3.send(new DeleteBucketEncryptionCommand({ Bucket }));
    await expect(s3.send(new GetBucketEncryptionCommand({ Bucket }))).rejects.toMatchObject({
      name: 'ServerSideEncryptionConfigurationNotFoundError',
    });
    const after = await s3.send(new PutObjectCommand({ Bucket, Key: 'after', Body: 'x' }));
    expect(after.ServerSideEncryption).toBeUndefined();
  });

  it('refuses DSSE-KMS, SSE-KMS without a key service, and unknown methods, and stores nothing', async () => {
    for (const ServerSideEncryption of ['aws:kms:dsse', 'aws:kms'] as const)
      await expect(
        s3.send(new PutObjectCommand({ Bucket, Key: 'kms', Body: 'KMSPLAIN', ServerSideEncryption })),
      ).rejects.toMatchObject({ name: 'NotImplemented', $metadata: { httpStatusCode: 501 } });
    await expect(
      s3.send(
        new PutObjectCommand({
          Bucket,
          Key: 'kms',
          Body: 'x',
          ServerSideEncryption: 'rot13' as 'AES256',
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidArgument' });
    await expect(s3.send(new HeadObjectCommand({ Bucket, Key: 'kms' }))).rejects.toMatchObject({
      $metadata: { httpStatusCode: 404 },
    });
    expect(onDisk('KMSPLAIN')).toBe(false);
  });
});

describe('SSE-C (customer-provided keys)', () => {
  const key = customerKey();
  const other = customerKey();
  const body = marked(150_000, 'SSECPLAIN');

  it('seals with the customer key and refuses GET and HEAD without it or with another', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket, Key: 'c.bin', Body: body, ...ssec(key) }));
    expect(put.SSECustomerAlgorithm).toBe('AES256');
    expect(put.SSECustomerKeyMD5).toBeTruthy();
    expect(onDisk('SSECPLAIN')).toBe(false);
    await expect(s3.send(new GetObjectCommand({ Bucket, Key: 'c.bin' }))).rejects.toMatchObject({
      name: 'InvalidRequest',
      $metadata: { httpStatusCode: 400 },
    });
    await expect(s3.send(new HeadObjectCommand({ Bucket, Key: 'c.bin' }))).rejects.toMatchObject({
      $metadata: { httpStatusCode: 400 },
    });
    await expect(
      s3.send(new GetObjectCommand({ Bucket, Key: 'c.bin', ...ssec(other) })),
    ).rejects.toMatchObject({
      name: 'AccessDenied',
      $metadata: { httpStatusCode: 403 },
    });
    await expect(
      s3.send(new HeadObjectCommand({ Bucket, Key: 'c.bin', ...ssec(other) })),
    ).rejects.toMatchObject({
      $metadata: { httpStatusCode: 403 },
    });
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: 'c.bin', ...ssec(key) }));
    expect(got.SSECustomerKeyMD5).toBe(put.SSECustomerKeyMD5);
    expect((await bytes(got)).equals(body)).toBe(true);
    const r = await s3.send(
      new GetObjectCommand({ Bucket, Key: 'c.bin', Range: 'bytes=70000-140000', ...ssec(key) }),
    );
    expect((await bytes(r)).equals(body.subarray(70_000, 140_001))).toBe(true);
  });

  it('refuses a customer key on an object not sealed with one', async () => {
    await s3.send(new PutObjectCommand({ Bucket, Key: 'open.txt', Body: 'hello' }));
    await expect(
      s3.send(new GetObjectCommand({ Bucket, Key: 'open.txt', ...ssec(key) })),
    ).rejects.toMatchObject({
      name: 'InvalidRequest',
    });
  });

  it('copies with the source key and seals the copy under the destination key', async () => {
    await expect(
      s3.send(
        new CopyObjectCommand({ Bucket, Key: 'c2.bin', CopySource: `${Bucket}/c.bin`, ...ssec(other) }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidRequest' });
    await s3.send(
      new CopyObjectCommand({
        Bucket,
        Key: 'c2.bin',
        CopySource: `${Bucket}/c.bin`,
        CopySourceSSECustomerAlgorithm: 'AES256',
        CopySourceSSECustomerKey: key,
        ...ssec(other),
      }),
    );
    await expect(
      s3.send(new GetObjectCommand({ Bucket, Key: 'c2.bin', ...ssec(key) })),
    ).rejects.toMatchObject({
      name: 'AccessDenied',
    });
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: 'c2.bin', ...ssec(other) }));
    expect((await bytes(got)).equals(body)).toBe(true);
    // Decrypted into a plain destination when the copy asks for no sealing.
    await s3.send(
      new CopyObjectCommand({
        Bucket: 'plain',
        Key: 'c3.bin',
        CopySource: `${Bucket}/c.bin`,
        CopySourceSSECustomerAlgorithm: 'AES256',
        CopySourceSSECustomerKey: key,
      }),
    );
    expect(
      (await bytes(await s3.send(new GetObjectCommand({ Bucket: 'plain', Key: 'c3.bin' })))).equals(body),
    ).toBe(true);
  });

  it('needs the key on every part of an SSE-C multipart upload', async () => {
    const Key = 'mp.bin';
    const big = marked(5 * 1024 * 1024 + 1000, 'MPSSEC');
    const { UploadId, SSECustomerAlgorithm } = await s3.send(
      new CreateMultipartUploadCommand({ Bucket, Key, ...ssec(key) }),
    );
    expect(SSECustomerAlgorithm).toBe('AES256');
    const part1 = big.subarray(0, 5 * 1024 * 1024);
    await expect(
      s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: 1, Body: part1 })),
    ).rejects.toMatchObject({ name: 'InvalidRequest', $metadata: { httpStatusCode: 400 } });
    await expect(
      s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: 1, Body: part1, ...ssec(other) })),
    ).rejects.toMatchObject({
      // Another key than the upload's is a request error on a write, not a read's 403 (as on AWS).
      name: 'InvalidRequest',
      message: 'The provided encryption parameters did not match the ones used originally.',
      $metadata: { httpStatusCode: 400 },
    });
    const p1 = await s3.send(
      new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: 1, Body: part1, ...ssec(key) }),
    );
    // Part 2 copied out of an SSE-S3 object: opened with its data key, sealed with the upload's.
    await s3.send(
      new PutObjectCommand({
        Bucket,
        Key: 'tail.src',
        Body: big.subarray(5 * 1024 * 1024),
        ServerSideEncryption: 'AES256',
      }),
    );
    const p2 = await s3.send(
      new UploadPartCopyCommand({
        Bucket,
        Key,
        UploadId,
        PartNumber: 2,
        CopySource: `${Bucket}/tail.src`,
        ...ssec(key),
      }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket,
        Key,
        UploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: p1.ETag! },
            { PartNumber: 2, ETag: p2.CopyPartResult!.ETag! },
          ],
        },
      }),
    );
    expect(onDisk('MPSSEC')).toBe(false);
    await expect(s3.send(new GetObjectCommand({ Bucket, Key }))).rejects.toMatchObject({
      name: 'InvalidRequest',
    });
    const got = await s3.send(new GetObjectCommand({ Bucket, Key, ...ssec(key) }));
    expect((await bytes(got)).equals(big)).toBe(true);
    const across = await s3.send(
      new GetObjectCommand({
        Bucket,
        Key,
        Range: `bytes=${5 * 1024 * 1024 - 10}-${5 * 1024 * 1024 + 10}`,
        ...ssec(key),
      }),
    );
    expect((await bytes(across)).equals(big.subarray(5 * 1024 * 1024 - 10, 5 * 1024 * 1024 + 11))).toBe(true);
  });

  it('completes an SSE-C upload with a checksum algorithm only with its key', async () => {
    const Key = 'mp-sum.bin';
    const { UploadId } = await s3.send(
      new CreateMultipartUploadCommand({ Bucket, Key, ChecksumAlgorithm: 'CRC32', ...ssec(key) }),
    );
    const part = await s3.send(
      new UploadPartCommand({
        Bucket,
        Key,
        UploadId,
        PartNumber: 1,
        Body: 'x',
        ChecksumAlgorithm: 'CRC32',
        ...ssec(key),
      }),
    );
    const complete = (extra: object) =>
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket,
          Key,
          UploadId,
          MultipartUpload: {
            Parts: [{ PartNumber: 1, ETag: part.ETag!, ChecksumCRC32: part.ChecksumCRC32! }],
          },
          ...extra,
        }),
      );
    await expect(complete({})).rejects.toMatchObject({
      name: 'InvalidRequest',
      $metadata: { httpStatusCode: 400 },
    });
    await expect(complete(ssec(other))).rejects.toMatchObject({ name: 'InvalidRequest' });
    expect((await complete(ssec(key))).ChecksumCRC32).toMatch(/-1$/);
  });

  it('completes an SSE-C upload without a checksum algorithm without its key, never with another', async () => {
    const Key = 'mp-nosum.bin';
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key, ...ssec(key) }));
    const part = await s3.send(
      new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: 1, Body: 'y', ...ssec(key) }),
    );
    const complete = (extra: object) =>
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket,
          Key,
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag! }] },
          ...extra,
        }),
      );
    // A key sent is checked even where none is needed: another one is a request error.
    await expect(complete(ssec(other))).rejects.toMatchObject({
      name: 'InvalidRequest',
      message: 'The provided encryption parameters did not match the ones used originally.',
      $metadata: { httpStatusCode: 400 },
    });
    // AWS asks for the key on Complete only when the upload has a checksum algorithm; sent, its
    // MD5 comes back as with every SSE-C answer.
    const headers: Record<string, string>[] = [];
    s3.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        headers.push((out.response as { headers: Record<string, string> }).headers);
        return out;
      },
      { step: 'deserialize', name: 'completeHeaders' },
    );
    try {
      await complete(ssec(key));
    } finally {
      s3.middlewareStack.remove('completeHeaders');
    }
    expect(headers.at(-1)?.['x-amz-server-side-encryption-customer-key-md5']).toBe(
      createHash('md5').update(Buffer.from(key, 'base64')).digest('base64'),
    );
    const withKey = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key, ...ssec(key) }));
    const again = await s3.send(
      new UploadPartCommand({
        Bucket,
        Key,
        UploadId: withKey.UploadId,
        PartNumber: 1,
        Body: 'y',
        ...ssec(key),
      }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket,
        Key,
        UploadId: withKey.UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: again.ETag! }] },
      }),
    );
    const got = await s3.send(new GetObjectCommand({ Bucket, Key, ...ssec(key) }));
    expect((await bytes(got)).toString()).toBe('y');
  });

  it('refuses SSE-C mixed with x-amz-server-side-encryption', async () => {
    await expect(
      s3.send(
        new PutObjectCommand({ Bucket, Key: 'mix', Body: 'x', ServerSideEncryption: 'AES256', ...ssec(key) }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidArgument' });
  });
});
