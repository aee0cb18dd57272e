import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  ListPartsCommand,
  PutObjectCommand,
  type StorageClass,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestCustomer } from '../helpers/fjord.js';
import { storageS3Fixture } from './storage-s3-fixture.js';

/**
 * S3 storage classes through the whole Fjord, with the AWS SDK: a label set on PutObject,
 * CopyObject and CreateMultipartUpload, reported where S3 reports it, refused for the archive
 * classes and anything S3 would not take on a general purpose bucket.
 */
const f = storageS3Fixture('sc');
let a: TestCustomer;

beforeAll(() => {
  a = f.a;
});

const bucket = (versioned = false) => f.bucketOf(a, { versioned });

const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (err: { name: string; $metadata?: { httpStatusCode?: number } }) =>
      `${err.$metadata?.httpStatusCode} ${err.name}`,
  );

describe('storage classes', () => {
  it('sets a class on PutObject and reports it on GET, HEAD, listings and attributes', async () => {
    const { name, s3 } = await bucket(true);
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'ia', Body: 'x', StorageClass: 'STANDARD_IA' }));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'plain', Body: 'y' }));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'std', Body: 'z', StorageClass: 'STANDARD' }));

    const head = await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'ia' }));
    expect(head.StorageClass).toBe('STANDARD_IA');
    const get = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'ia' }));
    expect(get.StorageClass).toBe('STANDARD_IA');
    expect(await get.Body!.transformToString()).toBe('x');
    // S3 sends no header for STANDARD objects.
    for (const Key of ['plain', 'std']) {
      const h = await s3.send(new HeadObjectCommand({ Bucket: name, Key }));
      expect(h.StorageClass, Key).toBeUndefined();
    }

    const classes = (list: { Key?: string; StorageClass?: string }[] | undefined) =>
      Object.fromEntries((list ?? []).map((c) => [c.Key, c.StorageClass]));
    const expected = { ia: 'STANDARD_IA', plain: 'STANDARD', std: 'STANDARD' };
    expect(classes((await s3.send(new ListObjectsV2Command({ Bucket: name }))).Contents)).toEqual(expected);
    expect(classes((await s3.send(new ListObjectsCommand({ Bucket: name }))).Contents)).toEqual(expected);
    expect(classes((await s3.send(new ListObjectVersionsCommand({ Bucket: name }))).Versions)).toEqual(
      expected,
    );
    const attrs = await s3.send(
      new GetObjectAttributesCommand({ Bucket: name, Key: 'ia', ObjectAttributes: ['StorageClass'] }),
    );
    expect(attrs.StorageClass).toBe('STANDARD_IA');
  });

  it('accepts every class Fjord labels', async () => {
    const { name, s3 } = await bucket();
    for (const c of [
      'REDUCED_REDUNDANCY',
      'STANDARD_IA',
      'ONEZONE_IA',
      'INTELLIGENT_TIERING',
      'GLACIER_IR',
    ] as StorageClass[]) {
      await s3.send(new PutObjectCommand({ Bucket: name, Key: c, Body: c, StorageClass: c }));
      expect((await s3.send(new HeadObjectCommand({ Bucket: name, Key: c }))).StorageClass).toBe(c);
    }
  });

  it('refuses archive classes and unknown ones with InvalidStorageClass, storing nothing', async () => {
    const { name, s3 } = await bucket();
    for (const c of ['GLACIER', 'DEEP_ARCHIVE', 'OUTPOSTS', 'SNOW', 'EXPRESS_ONEZONE', 'standard', 'GOLD']) {
      const put = s3.send(
        new PutObjectCommand({ Bucket: name, Key: 'k', Body: 'x', StorageClass: c as StorageClass }),
      );
      expect(await errorOf(put), c).toBe('400 InvalidStorageClass');
      const mp = s3.send(
        new CreateMultipartUploadCommand({ Bucket: name, Key: 'k', StorageClass: c as StorageClass }),
      );
      expect(await errorOf(mp), c).toBe('400 InvalidStorageClass');
    }
    expect((await s3.send(new ListObjectsV2Command({ Bucket: name }))).KeyCount).toBe(0);
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'src', Body: 'x' }));
    const copy = s3.send(
      new CopyObjectCommand({ Bucket: name, Key: 'dst', CopySource: `${name}/src`, StorageClass: 'GLACIER' }),
    );
    expect(await errorOf(copy)).toBe('400 InvalidStorageClass');
  });

  it('changes the class by copying an object onto itself; a copy is STANDARD unless it asks', async () => {
    const { name, s3 } = await bucket();
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'o', Body: 'data', StorageClass: 'ONEZONE_IA' }));
    await s3.send(new CopyObjectCommand({ Bucket: name, Key: 'o2', CopySource: `${name}/o` }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'o2' }))).StorageClass).toBeUndefined();
    await s3.send(
      new CopyObjectCommand({ Bucket: name, Key: 'o', CopySource: `${name}/o`, StorageClass: 'GLACIER_IR' }),
    );
    const head = await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'o' }));
    expect(head.StorageClass).toBe('GLACIER_IR');
    const body = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'o' }));
    expect(await body.Body!.transformToString()).toBe('data');
    await s3.send(
      new CopyObjectCommand({ Bucket: name, Key: 'o', CopySource: `${name}/o`, StorageClass: 'STANDARD' }),
    );
    expect((await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'o' }))).StorageClass).toBeUndefined();
  });

  it('gives a completed multipart upload the class it was created with', async () => {
    const { name, s3 } = await bucket();
    const up = await s3.send(
      new CreateMultipartUploadCommand({ Bucket: name, Key: 'mp', StorageClass: 'INTELLIGENT_TIERING' }),
    );
    const UploadId = up.UploadId!;
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: name }));
    expect(uploads.Uploads?.map((u) => u.StorageClass)).toEqual(['INTELLIGENT_TIERING']);
    const part = await s3.send(
      new UploadPartCommand({ Bucket: name, Key: 'mp', UploadId, PartNumber: 1, Body: 'part one' }),
    );
    const parts = await s3.send(new ListPartsCommand({ Bucket: name, Key: 'mp', UploadId }));
    expect(parts.StorageClass).toBe('INTELLIGENT_TIERING');
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: name,
        Key: 'mp',
        UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag! }] },
      }),
    );
    expect((await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'mp' }))).StorageClass).toBe(
      'INTELLIGENT_TIERING',
    );
    const list = await s3.send(new ListObjectsV2Command({ Bucket: name }));
    expect(list.Contents?.[0]?.StorageClass).toBe('INTELLIGENT_TIERING');
  });

  it('takes the class from a POST form field, and refuses an archive class there', async () => {
    const { name, s3 } = await bucket();
    const post = async (Key: string, cls: string) => {
      const fields = { 'x-amz-storage-class': cls };
      const p = await createPresignedPost(s3, {
        Bucket: name,
        Key,
        Fields: fields,
        Conditions: [{ 'x-amz-storage-class': cls }],
        Expires: 600,
      });
      const form = new FormData();
      for (const [f, v] of Object.entries(p.fields)) form.append(f, v);
      form.append('file', new Blob(['form body']), Key);
      return fetch(p.url, { method: 'POST', body: form });
    };
    const ok = await post('form', 'ONEZONE_IA');
    expect(ok.status, await ok.clone().text()).toBe(204);
    expect((await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'form' }))).StorageClass).toBe(
      'ONEZONE_IA',
    );
    const refused = await post('cold', 'DEEP_ARCHIVE');
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('<Code>InvalidStorageClass</Code>');
    expect((await s3.send(new ListObjectsV2Command({ Bucket: name }))).KeyCount).toBe(1);
  });
});
