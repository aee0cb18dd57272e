import { createHash, randomBytes } from 'node:crypto';
import { Xxh3_64, Xxh3_128, Xxh64 } from '@aws-sdk/checksums/xxh';
import {
  type ChecksumAlgorithm,
  CompleteMultipartUploadCommand,
  type CompleteMultipartUploadCommandInput,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksumReady, createChecksum } from './checksums.js';
import { type Harness, startHarness } from './testing/harness.js';

// Multipart checksums through the AWS SDK: composite and full-object, checked on Complete and
// shown on HEAD, GET (whole or by part), GetObjectAttributes, ListParts and ListMultipartUploads.

let h: Harness;
let s3: S3Client;
/** SHA-512 in the shape the SDK takes a checksum implementation. */
class Sha512 {
  private readonly hash = createHash('sha512');
  update(data: Uint8Array) {
    this.hash.update(data);
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
  reset() {}
}

/** Sends only the checksums a test names: the SDK's default CRC32 would hide a missing one. */
let bare: S3Client;

const Bucket = 'sums';
const MiB5 = 5 * 1024 * 1024;
const first = randomBytes(MiB5);
const second = randomBytes(70_000);
const whole = Buffer.concat([first, second]);

const b64 = (alg: string, ...pieces: Buffer[]) => {
  const c = createChecksum(alg as Parameters<typeof createChecksum>[0]);
  for (const p of pieces) c.update(p);
  return c.digest();
};
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();

async function errorOf(p: Promise<unknown>): Promise<{ code: string; status: number | undefined }> {
  try {
    await p;
  } catch (err) {
    const e = err as { name: string; $metadata?: { httpStatusCode?: number } };
    return { code: e.name, status: e.$metadata?.httpStatusCode };
  }
  throw new Error('expected the request to fail');
}

beforeAll(async () => {
  h = await startHarness();
  h.directory.addBucket({ name: Bucket, customerId: 'c1' });
  h.directory.addKey({
    accessKeyId: 'AKSUM',
    customerId: 'c1',
    grants: [{ bucket: Bucket, actions: 'all' }],
  });
  const options = {
    endpoint: h.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'AKSUM', secretAccessKey: 'secret-AKSUM' },
  };
  // The SDK computes the newer algorithms with the implementations it is given: AWS's own xxHash.
  s3 = new S3Client({
    ...options,
    checksumAlgorithms: { XXHASH64: Xxh64, XXHASH3: Xxh3_64, XXHASH128: Xxh3_128, SHA512: Sha512 },
  } as S3ClientConfig);
  await checksumReady('XXHASH64');
  bare = new S3Client({ ...options, requestChecksumCalculation: 'WHEN_REQUIRED' });
});
afterAll(async () => {
  s3?.destroy();
  bare?.destroy();
  await h?.close();
});

/** Starts a FULL_OBJECT upload of `key` with `algorithm`. */
const fullObjectUpload = (key: string, algorithm: ChecksumAlgorithm) =>
  s3.send(
    new CreateMultipartUploadCommand({
      Bucket,
      Key: key,
      ChecksumAlgorithm: algorithm,
      ChecksumType: 'FULL_OBJECT',
    }),
  );

/** Starts an upload of `key` and sends the two parts with their checksums of `algorithm`. */
async function twoParts(key: string, algorithm: ChecksumAlgorithm, type?: 'COMPOSITE' | 'FULL_OBJECT') {
  const created = await s3.send(
    new CreateMultipartUploadCommand({ Bucket, Key: key, ChecksumAlgorithm: algorithm, ChecksumType: type }),
  );
  const UploadId = created.UploadId!;
  const parts = [];
  for (const [i, body] of [first, second].entries()) {
    const value = b64(algorithm, body);
    const sent = await bare.send(
      new UploadPartCommand({
        Bucket,
        Key: key,
        UploadId,
        PartNumber: i + 1,
        Body: body,
        [`Checksum${algorithm}`]: value,
      }),
    );
    expect((sent as unknown as Record<string, unknown>)[`Checksum${algorithm}`]).toBe(value);
    parts.push({ PartNumber: i + 1, ETag: sent.ETag!, [`Checksum${algorithm}`]: value });
  }
  return { created, UploadId, parts };
}

describe('a composite multipart checksum', () => {
  const key = 'composite.bin';
  const partSums = [first, second].map((p) => sha256(p).toString('base64'));
  const composite = `${createHash('sha256')
    .update(Buffer.concat([sha256(first), sha256(second)]))
    .digest('base64')}-2`;

  it('is the checksum of the parts’ checksums, given back by Complete and by a retried Complete', async () => {
    const { created, UploadId, parts } = await twoParts(key, 'SHA256');
    expect(created.ChecksumAlgorithm).toBe('SHA256');
    expect(created.ChecksumType).toBe('COMPOSITE');
    const listed = await s3.send(new ListPartsCommand({ Bucket, Key: key, UploadId }));
    expect(listed.ChecksumType).toBe('COMPOSITE');
    expect(listed.Parts?.map((p) => p.ChecksumSHA256)).toEqual(partSums);
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket, Prefix: key }));
    expect(uploads.Uploads?.[0]).toMatchObject({ ChecksumAlgorithm: 'SHA256', ChecksumType: 'COMPOSITE' });

    const complete: CompleteMultipartUploadCommandInput = {
      Bucket,
      Key: key,
      UploadId,
      ChecksumSHA256: composite,
      MultipartUpload: { Parts: parts },
    };
    const done = await s3.send(new CompleteMultipartUploadCommand(complete));
    expect(done.ChecksumSHA256).toBe(composite);
    expect(done.ChecksumType).toBe('COMPOSITE');
    const again = await s3.send(new CompleteMultipartUploadCommand(complete));
    expect(again.ChecksumSHA256).toBe(composite);
    expect(again.ETag).toBe(done.ETag);
  });

  it('is shown on HEAD and GET only with checksum mode on, and per part with partNumber', async () => {
    expect((await s3.send(new HeadObjectCommand({ Bucket, Key: key }))).ChecksumSHA256).toBeUndefined();
    const head = await s3.send(new HeadObjectCommand({ Bucket, Key: key, ChecksumMode: 'ENABLED' }));
    expect(head).toMatchObject({ ChecksumSHA256: composite, ChecksumType: 'COMPOSITE' });
    const part = await s3.send(
      new GetObjectCommand({ Bucket, Key: key, PartNumber: 2, ChecksumMode: 'ENABLED' }),
    );
    expect(part).toMatchObject({ ChecksumSHA256: partSums[1], ChecksumType: 'COMPOSITE', PartsCount: 2 });
    expect(Buffer.from(await part.Body!.transformToByteArray()).equals(second)).toBe(true);
    const ranged = await s3.send(
      new GetObjectCommand({ Bucket, Key: key, Range: 'bytes=0-9', ChecksumMode: 'ENABLED' }),
    );
    expect(ranged.ChecksumSHA256).toBeUndefined();
    await ranged.Body!.transformToByteArray();
  });

  it('is in GetObjectAttributes, with each part’s', async () => {
    const attrs = await s3.send(
      new GetObjectAttributesCommand({ Bucket, Key: key, ObjectAttributes: ['Checksum', 'ObjectParts'] }),
    );
    expect(attrs.Checksum).toEqual({ ChecksumSHA256: composite, ChecksumType: 'COMPOSITE' });
    expect(attrs.ObjectParts?.Parts?.map((p) => p.ChecksumSHA256)).toEqual(partSums);
  });
});

describe('a full-object multipart checksum', () => {
  for (const algorithm of ['CRC32', 'CRC32C', 'CRC64NVME'] as const) {
    it(`is the ${algorithm} of the whole object, checked against the one the client sends`, async () => {
      const key = `full-${algorithm}.bin`;
      const { created, UploadId, parts } = await twoParts(key, algorithm, 'FULL_OBJECT');
      expect(created.ChecksumType).toBe('FULL_OBJECT');
      const complete = (value: string) =>
        s3.send(
          new CompleteMultipartUploadCommand({
            Bucket,
            Key: key,
            UploadId,
            [`Checksum${algorithm}`]: value,
            MultipartUpload: { Parts: parts },
          }),
        );
      // A wrong checksum for the object refuses the Complete and keeps the upload.
      expect(await errorOf(complete(b64(algorithm, second, first)))).toEqual({
        code: 'BadDigest',
        status: 400,
      });
      const expected = b64(algorithm, whole);
      const done = await complete(expected);
      expect(done).toMatchObject({ [`Checksum${algorithm}`]: expected, ChecksumType: 'FULL_OBJECT' });
      const head = await s3.send(new HeadObjectCommand({ Bucket, Key: key, ChecksumMode: 'ENABLED' }));
      expect(head).toMatchObject({ [`Checksum${algorithm}`]: expected, ChecksumType: 'FULL_OBJECT' });
    });
  }

  it('is CRC64NVME’s only form, and the default for it', async () => {
    const created = await s3.send(
      new CreateMultipartUploadCommand({ Bucket, Key: 'nvme', ChecksumAlgorithm: 'CRC64NVME' }),
    );
    expect(created.ChecksumType).toBe('FULL_OBJECT');
    const refused = s3.send(
      new CreateMultipartUploadCommand({
        Bucket,
        Key: 'nvme',
        ChecksumAlgorithm: 'CRC64NVME',
        ChecksumType: 'COMPOSITE',
      }),
    );
    expect(await errorOf(refused)).toEqual({ code: 'InvalidRequest', status: 400 });
    const sha = s3.send(
      new CreateMultipartUploadCommand({
        Bucket,
        Key: 'sha',
        ChecksumAlgorithm: 'SHA1',
        ChecksumType: 'FULL_OBJECT',
      }),
    );
    expect(await errorOf(sha)).toEqual({ code: 'InvalidRequest', status: 400 });
  });
});

describe('CompleteMultipartUpload with checksums', () => {
  it('refuses a listed part checksum that is not the part’s, and one left out', async () => {
    const key = 'checked.bin';
    const { UploadId, parts } = await twoParts(key, 'CRC32');
    const send = (list: Record<string, unknown>[]) =>
      bare.send(
        new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId, MultipartUpload: { Parts: list } }),
      );
    const wrong = [parts[0]!, { ...parts[1]!, ChecksumCRC32: b64('CRC32', first) }];
    expect(await errorOf(send(wrong))).toEqual({ code: 'InvalidPart', status: 400 });
    const missing = [parts[0]!, { PartNumber: 2, ETag: parts[1]!.ETag }];
    expect(await errorOf(send(missing))).toEqual({ code: 'InvalidRequest', status: 400 });
    const typeChanged = bare.send(
      new CompleteMultipartUploadCommand({
        Bucket,
        Key: key,
        UploadId,
        ChecksumType: 'FULL_OBJECT',
        MultipartUpload: { Parts: parts },
      }),
    );
    expect(await errorOf(typeChanged)).toEqual({ code: 'InvalidRequest', status: 400 });
    const sized = bare.send(
      new CompleteMultipartUploadCommand({
        Bucket,
        Key: key,
        UploadId,
        MpuObjectSize: whole.length + 1,
        MultipartUpload: { Parts: parts },
      }),
    );
    expect(await errorOf(sized)).toEqual({ code: 'InvalidRequest', status: 400 });
    const done = await send(parts);
    expect(done.ChecksumCRC32).toMatch(/-2$/);
  });

  it('refuses a part of another algorithm, or a composite upload’s part without its checksum', async () => {
    const key = 'composite-parts.bin';
    const { UploadId } = await s3.send(
      new CreateMultipartUploadCommand({ Bucket, Key: key, ChecksumAlgorithm: 'SHA1' }),
    );
    const part = (checksum: Record<string, string>) =>
      bare.send(
        new UploadPartCommand({ Bucket, Key: key, UploadId, PartNumber: 1, Body: second, ...checksum }),
      );
    expect(await errorOf(part({ ChecksumCRC32: b64('CRC32', second) }))).toEqual({
      code: 'InvalidRequest',
      status: 400,
    });
    // A composite checksum is made of what the client vouched for: AWS requires each part's.
    expect(await errorOf(part({}))).toEqual({ code: 'InvalidRequest', status: 400 });
    expect((await part({ ChecksumSHA1: b64('SHA1', second) })).ChecksumSHA1).toBe(b64('SHA1', second));
  });

  it('checksums a full-object upload’s part sent without one, and needs no part checksums listed', async () => {
    const key = 'full-parts.bin';
    const { UploadId } = await fullObjectUpload(key, 'CRC32C');
    const parts = [];
    for (const [i, Body] of [first, second].entries()) {
      const sent = await bare.send(
        new UploadPartCommand({ Bucket, Key: key, UploadId, PartNumber: i + 1, Body }),
      );
      expect(sent.ChecksumCRC32C).toBe(b64('CRC32C', Body));
      parts.push({ PartNumber: i + 1, ETag: sent.ETag! });
    }
    const done = await bare.send(
      new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
    );
    expect(done.ChecksumCRC32C).toBe(b64('CRC32C', whole));
  });

  it('gives a copied part its checksum, and a copied object its source’s algorithm', async () => {
    await s3.send(
      new PutObjectCommand({ Bucket, Key: 'source', Body: second, ChecksumCRC32C: b64('CRC32C', second) }),
    );
    const key = 'copied-part.bin';
    const { UploadId } = await fullObjectUpload(key, 'CRC32C');
    const part = await s3.send(
      new UploadPartCopyCommand({
        Bucket,
        Key: key,
        UploadId,
        PartNumber: 1,
        CopySource: `${Bucket}/source`,
      }),
    );
    expect(part.CopyPartResult?.ChecksumCRC32C).toBe(b64('CRC32C', second));
    const copy = await s3.send(
      new CopyObjectCommand({ Bucket, Key: 'copy', CopySource: `${Bucket}/source` }),
    );
    expect(copy.CopyObjectResult).toMatchObject({
      ChecksumCRC32C: b64('CRC32C', second),
      ChecksumType: 'FULL_OBJECT',
    });
    const asked = await s3.send(
      new CopyObjectCommand({
        Bucket,
        Key: 'copy',
        CopySource: `${Bucket}/source`,
        ChecksumAlgorithm: 'SHA256',
      }),
    );
    expect(asked.CopyObjectResult?.ChecksumSHA256).toBe(sha256(second).toString('base64'));
    // An empty object has a checksum too (of nothing), copied or not.
    await s3.send(new PutObjectCommand({ Bucket, Key: 'empty', Body: '' }));
    const empty = await s3.send(
      new CopyObjectCommand({
        Bucket,
        Key: 'empty-copy',
        CopySource: `${Bucket}/empty`,
        ChecksumAlgorithm: 'CRC32',
      }),
    );
    expect(empty.CopyObjectResult?.ChecksumCRC32).toBe('AAAAAA==');
  });
});

describe('every algorithm S3 offers', () => {
  for (const algorithm of ['MD5', 'SHA512', 'XXHASH64', 'XXHASH3', 'XXHASH128'] as const) {
    it(`${algorithm} is checked on PUT and given back on HEAD`, async () => {
      const key = `single-${algorithm}`;
      const value = b64(algorithm, second);
      // The SDK sends its MD5 as Content-MD5; S3's x-amz-checksum-md5 is named explicitly.
      const put =
        algorithm === 'MD5'
          ? await bare.send(new PutObjectCommand({ Bucket, Key: key, Body: second, ChecksumMD5: value }))
          : await s3.send(
              new PutObjectCommand({ Bucket, Key: key, Body: second, ChecksumAlgorithm: algorithm }),
            );
      expect(put).toMatchObject({ [`Checksum${algorithm}`]: value, ChecksumType: 'FULL_OBJECT' });
      const head = await s3.send(new HeadObjectCommand({ Bucket, Key: key, ChecksumMode: 'ENABLED' }));
      expect(head).toMatchObject({ [`Checksum${algorithm}`]: value });
      const wrong = bare.send(
        new PutObjectCommand({
          Bucket,
          Key: key,
          Body: second,
          [`Checksum${algorithm}`]: b64(algorithm, first),
        }),
      );
      expect(await errorOf(wrong)).toEqual({ code: 'BadDigest', status: 400 });
      // A value that is no checksum at all is a BadDigest too, as Ceph's suite expects of S3.
      const junk = bare.send(
        new PutObjectCommand({ Bucket, Key: key, Body: second, [`Checksum${algorithm}`]: 'bad' }),
      );
      expect(await errorOf(junk)).toEqual({ code: 'BadDigest', status: 400 });
    });
  }

  it('XXHASH128 joins parts into a composite checksum', async () => {
    const { created, UploadId, parts } = await twoParts('composite-xxh', 'XXHASH128');
    expect(created.ChecksumType).toBe('COMPOSITE');
    const done = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket,
        Key: 'composite-xxh',
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
    const joined = b64(
      'XXHASH128',
      ...[first, second].map((p) => Buffer.from(b64('XXHASH128', p), 'base64')),
    );
    expect(done.ChecksumXXHASH128).toBe(`${joined}-2`);
  });
});

describe('checksums a client gets wrong', () => {
  // A small deterministic generator: the same cases every run, so a failure can be replayed.
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return Math.floor(seed / 65536) % n; // the low bits of this generator repeat quickly
  };
  const junk = () =>
    [
      '',
      'bad',
      '====',
      'AAAA',
      'AAAAAA==-2',
      '-1',
      'A'.repeat(200),
      'not base64!',
      'AAAAAA==',
      b64('SHA256', first),
    ][rand(10)]!;

  it('are refused with a 4xx, never a 5xx, and never become the object’s checksum', async () => {
    const algorithms = [
      'CRC32',
      'CRC32C',
      'CRC64NVME',
      'SHA1',
      'SHA256',
      'MD5',
      'SHA512',
      'XXHASH3',
    ] as const;
    const seen = { created: 0, completed: 0, refused: 0 };
    for (let i = 0; i < 40; i++) {
      const algorithm = algorithms[rand(algorithms.length)]!;
      const key = `fuzz-${i}`;
      const type = rand(3) === 0 ? 'FULL_OBJECT' : undefined;
      const created = await s3
        .send(
          new CreateMultipartUploadCommand({
            Bucket,
            Key: key,
            ChecksumAlgorithm: algorithm,
            ChecksumType: type,
          }),
        )
        .catch((e: { $metadata: { httpStatusCode: number } }) => e.$metadata.httpStatusCode);
      if (typeof created === 'number') {
        expect(created, `create ${algorithm} ${type}`).toBe(400);
        continue;
      }
      seen.created++;
      const UploadId = created.UploadId!;
      const body = Buffer.from(`part of ${key}`);
      const sent = await bare
        .send(
          new UploadPartCommand({
            Bucket,
            Key: key,
            UploadId,
            PartNumber: 1,
            Body: body,
            [`Checksum${rand(2) ? algorithm : 'CRC32'}`]: rand(2) ? b64(algorithm, body) : junk(),
          }),
        )
        .catch((e: { $metadata: { httpStatusCode: number } }) => e.$metadata.httpStatusCode);
      if (typeof sent === 'number') {
        expect(sent, `part ${algorithm}`).toBe(400);
        continue;
      }
      const listed = rand(2) ? { [`Checksum${algorithm}`]: rand(2) ? b64(algorithm, body) : junk() } : {};
      const done = await bare
        .send(
          new CompleteMultipartUploadCommand({
            Bucket,
            Key: key,
            UploadId,
            ...(rand(2) ? { [`Checksum${algorithm}`]: junk() } : {}),
            ...(rand(3) === 0 ? { MpuObjectSize: rand(40) } : {}),
            MultipartUpload: { Parts: [{ PartNumber: 1, ETag: sent.ETag!, ...listed }] },
          }),
        )
        .then(
          (r) => r as unknown as Record<string, string>,
          (e: { $metadata: { httpStatusCode: number } }) => e.$metadata.httpStatusCode,
        );
      if (typeof done === 'number') {
        expect([400, 403], `complete ${algorithm}`).toContain(done);
        seen.refused++;
        continue;
      }
      seen.completed++;
      // Whatever was accepted, the object's checksum is the one its bytes have.
      const own = b64(algorithm, Buffer.from(b64(algorithm, body), 'base64'));
      const expected =
        type === 'FULL_OBJECT' || algorithm === 'CRC64NVME' ? b64(algorithm, body) : `${own}-1`;
      expect(done[`Checksum${algorithm}`], `complete ${algorithm}`).toBe(expected);
    }
    // The cases reach every outcome, so the checks above are not vacuous.
    expect(seen.created).toBeGreaterThan(10);
    expect(seen.completed).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });
});
