import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetBucketEncryptionCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutBucketEncryptionCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestCustomer, TestFjord } from '../helpers/fjord.js';
import { storageS3Fixture } from './storage-s3-fixture.js';

/**
 * SSE-KMS through the whole Fjord: keys made and managed through the API, objects sealed under
 * them through S3 (PUT, copy, multipart, bucket default), rotation, disable and enable, and
 * another customer's key refused.
 */
const f = storageS3Fixture('kms');
const { bucketOf, newKey } = f;
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  t = f.t;
  a = f.a;
  b = await t.customer();
});

function marked(size: number, marker: string): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i += 64)
    out.write(`${marker}:${String(i).padStart(12, '0')}|`.padEnd(64, '.'), i);
  return out;
}

function stored(marker: string): boolean {
  const walk = (d: string): boolean =>
    existsSync(d) &&
    readdirSync(d).some((name) => {
      const p = join(d, name);
      return statSync(p).isDirectory() ? walk(p) : readFileSync(p).includes(marker);
    });
  return walk(join(t.kernel.config.dataDir, 'objects'));
}

const bytes = async (r: { Body?: { transformToByteArray(): Promise<Uint8Array> } }) =>
  Buffer.from(await r.Body!.transformToByteArray());

describe('the KMS key service', () => {
  it('creates, lists, gets by id, ARN and alias, rotates, disables and enables keys', async () => {
    const c = await t.customer();
    const k = await newKey(c, 'alias/app-data');
    expect(k.key_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(k.arn).toBe(`arn:aws:kms:eu-north-1:${c.id}:key/${k.key_id}`);
    expect(k.key_state).toBe('Enabled');
    for (const ref of [k.key_id, encodeURIComponent(k.arn), encodeURIComponent('alias/app-data')]) {
      const got = await t.request('GET', `/v1/storage/kms-keys/${ref}`, { key: c.pat });
      expect(got.status).toBe(200);
      expect(got.body.key_id).toBe(k.key_id);
    }
    const dup = await t.request('POST', '/v1/storage/kms-keys', {
      key: c.pat,
      body: { alias: 'alias/app-data' },
    });
    expect(dup.status).toBe(409);
    const rotated = await t.request('POST', `/v1/storage/kms-keys/${k.key_id}/rotate`, { key: c.pat });
    expect(rotated.body.current_version).toBe(2);
    expect(rotated.body.versions).toHaveLength(2);
    const off = await t.request('POST', `/v1/storage/kms-keys/${k.key_id}/disable`, { key: c.pat });
    expect(off.body.key_state).toBe('Disabled');
    const on = await t.request('POST', `/v1/storage/kms-keys/${k.key_id}/enable`, { key: c.pat });
    expect(on.body.key_state).toBe('Enabled');
    const list = await t.request('GET', '/v1/storage/kms-keys', { key: c.pat });
    expect(list.body.map((x: { key_id: string }) => x.key_id)).toEqual([k.key_id]);
    expect(JSON.stringify(list.body)).not.toContain('material');
  });

  it('shows another customer none of a customer’s keys (404)', async () => {
    const k = await newKey(a);
    const other = await t.request('GET', `/v1/storage/kms-keys/${k.key_id}`, { key: b.pat });
    expect(other.status).toBe(404);
    const rotate = await t.request('POST', `/v1/storage/kms-keys/${k.key_id}/rotate`, { key: b.pat });
    expect(rotate.status).toBe(404);
    const list = await t.request('GET', '/v1/storage/kms-keys', { key: b.pat });
    expect(list.body.map((x: { key_id: string }) => x.key_id)).not.toContain(k.key_id);
  });
});

describe('SSE-KMS through S3', () => {
  it('seals a PUT under a named key and answers with its ARN on PUT, GET and HEAD', async () => {
    const { name, s3 } = await bucketOf(a);
    const k = await newKey(a);
    const body = marked(200_000, 'KMSNAMEDPLAIN');
    const put = await s3.send(
      new PutObjectCommand({
        Bucket: name,
        Key: 'named',
        Body: body,
        ServerSideEncryption: 'aws:kms',
        SSEKMSKeyId: k.key_id,
      }),
    );
    expect(put.ServerSideEncryption).toBe('aws:kms');
    expect(put.SSEKMSKeyId).toBe(k.arn);
    expect(stored('KMSNAMEDPLAIN')).toBe(false);
    const got = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'named' }));
    expect(got.ServerSideEncryption).toBe('aws:kms');
    expect(got.SSEKMSKeyId).toBe(k.arn);
    expect((await bytes(got)).equals(body)).toBe(true);
    const head = await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'named' }));
    expect(head.SSEKMSKeyId).toBe(k.arn);
    // A range across the sealed chunks.
    const part = await s3.send(
      new GetObjectCommand({ Bucket: name, Key: 'named', Range: 'bytes=65000-140000' }),
    );
    expect((await bytes(part)).equals(body.subarray(65000, 140001))).toBe(true);
  });

  it('uses the customer’s default key (alias/aws/s3), made on first use, when none is named', async () => {
    const { name, s3 } = await bucketOf(a);
    const put = await s3.send(
      new PutObjectCommand({
        Bucket: name,
        Key: 'd',
        Body: 'DEFAULTKMSPLAIN',
        ServerSideEncryption: 'aws:kms',
      }),
    );
    const keys = await t.request('GET', '/v1/storage/kms-keys', { key: a.pat });
    const def = keys.body.find((k: { alias: string | null }) => k.alias === 'alias/aws/s3');
    expect(def.is_default).toBe(true);
    expect(put.SSEKMSKeyId).toBe(def.arn);
    const got = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'd' }));
    expect(await got.Body!.transformToString()).toBe('DEFAULTKMSPLAIN');
  });

  it('copies into SSE-KMS and seals multipart uploads under the key', async () => {
    const { name, s3 } = await bucketOf(a);
    const k = await newKey(a);
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'src', Body: 'COPYKMSPLAIN' }));
    const copy = await s3.send(
      new CopyObjectCommand({
        Bucket: name,
        Key: 'dst',
        CopySource: `${name}/src`,
        ServerSideEncryption: 'aws:kms',
        SSEKMSKeyId: k.arn,
      }),
    );
    expect(copy.ServerSideEncryption).toBe('aws:kms');
    expect(copy.SSEKMSKeyId).toBe(k.arn);
    const got = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'dst' }));
    expect(await got.Body!.transformToString()).toBe('COPYKMSPLAIN');
    // And back out of SSE-KMS into a plain copy.
    await s3.send(new CopyObjectCommand({ Bucket: name, Key: 'plain', CopySource: `${name}/dst` }));
    const plain = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'plain' }));
    expect(plain.ServerSideEncryption).toBeUndefined();
    expect(await plain.Body!.transformToString()).toBe('COPYKMSPLAIN');

    const first = marked(5 * 1024 * 1024, 'KMSPARTONE');
    const second = marked(70_000, 'KMSPARTTWO');
    const up = await s3.send(
      new CreateMultipartUploadCommand({
        Bucket: name,
        Key: 'mp',
        ServerSideEncryption: 'aws:kms',
        SSEKMSKeyId: k.key_id,
      }),
    );
    expect(up.SSEKMSKeyId).toBe(k.arn);
    const parts = [];
    for (const [i, Body] of [first, second].entries()) {
      const p = await s3.send(
        new UploadPartCommand({ Bucket: name, Key: 'mp', UploadId: up.UploadId, PartNumber: i + 1, Body }),
      );
      expect(p.ServerSideEncryption).toBe('aws:kms');
      parts.push({ PartNumber: i + 1, ETag: p.ETag });
    }
    const done = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: name,
        Key: 'mp',
        UploadId: up.UploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
    expect(done.ServerSideEncryption).toBe('aws:kms');
    expect(stored('KMSPARTONE') || stored('KMSPARTTWO')).toBe(false);
    const all = await bytes(await s3.send(new GetObjectCommand({ Bucket: name, Key: 'mp' })));
    expect(all.equals(Buffer.concat([first, second]))).toBe(true);
    const across = 5 * 1024 * 1024 - 10;
    const r = await s3.send(
      new GetObjectCommand({ Bucket: name, Key: 'mp', Range: `bytes=${across}-${across + 99}` }),
    );
    expect((await bytes(r)).equals(Buffer.concat([first, second]).subarray(across, across + 100))).toBe(true);
  });

  it('seals under the bucket default (aws:kms with a KMSMasterKeyID)', async () => {
    const { name, s3 } = await bucketOf(a);
    const k = await newKey(a);
    await s3.send(
      new PutBucketEncryptionCommand({
        Bucket: name,
        ServerSideEncryptionConfiguration: {
          Rules: [
            { ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: k.key_id } },
          ],
        },
      }),
    );
    const cfg = await s3.send(new GetBucketEncryptionCommand({ Bucket: name }));
    const rule = cfg.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault;
    expect(rule).toMatchObject({ SSEAlgorithm: 'aws:kms', KMSMasterKeyID: k.arn });
    const put = await s3.send(new PutObjectCommand({ Bucket: name, Key: 'x', Body: 'BUCKETDEFAULTKMS' }));
    expect(put.ServerSideEncryption).toBe('aws:kms');
    expect(put.SSEKMSKeyId).toBe(k.arn);
    expect(stored('BUCKETDEFAULTKMS')).toBe(false);
    const got = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'x' }));
    expect(await got.Body!.transformToString()).toBe('BUCKETDEFAULTKMS');
  });

  it('reads objects sealed before a rotation; a disabled key refuses GET and PUT until enabled', async () => {
    const { name, s3 } = await bucketOf(a);
    const k = await newKey(a);
    const kms = { ServerSideEncryption: 'aws:kms' as const, SSEKMSKeyId: k.key_id };
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'old', Body: 'BEFOREROTATION', ...kms }));
    await t.request('POST', `/v1/storage/kms-keys/${k.key_id}/rotate`, { key: a.pat });
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'new', Body: 'AFTERROTATION', ...kms }));
    for (const [Key, text] of [
      ['old', 'BEFOREROTATION'],
      ['new', 'AFTERROTATION'],
    ] as const) {
      const got = await s3.send(new GetObjectCommand({ Bucket: name, Key }));
      expect(await got.Body!.transformToString()).toBe(text);
    }
    await t.request('POST', `/v1/storage/kms-keys/${k.key_id}/disable`, { key: a.pat });
    await expect(s3.send(new GetObjectCommand({ Bucket: name, Key: 'old' }))).rejects.toMatchObject({
      name: 'KMS.DisabledException',
      $metadata: { httpStatusCode: 400 },
    });
    await expect(
      s3.send(new PutObjectCommand({ Bucket: name, Key: 'more', Body: 'x', ...kms })),
    ).rejects.toMatchObject({ name: 'KMS.DisabledException', $metadata: { httpStatusCode: 400 } });
    // HEAD answers without the key, as S3's does.
    const head = await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'old' }));
    expect(head.SSEKMSKeyId).toBe(k.arn);
    await t.request('POST', `/v1/storage/kms-keys/${k.key_id}/enable`, { key: a.pat });
    const again = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'old' }));
    expect(await again.Body!.transformToString()).toBe('BEFOREROTATION');
  });

  it('refuses another customer’s key and an unknown key (KMS.NotFoundException), and DSSE', async () => {
    const { name, s3 } = await bucketOf(b);
    // A customer of its own: the free plan allows 5 keys, and `a` has used them.
    const theirs = await newKey(await t.customer());
    for (const SSEKMSKeyId of [theirs.arn, theirs.key_id, '00000000-0000-4000-8000-000000000000']) {
      await expect(
        s3.send(
          new PutObjectCommand({
            Bucket: name,
            Key: 'k',
            Body: 'x',
            ServerSideEncryption: 'aws:kms',
            SSEKMSKeyId,
          }),
        ),
      ).rejects.toMatchObject({ name: 'KMS.NotFoundException', $metadata: { httpStatusCode: 400 } });
    }
    await expect(
      s3.send(
        new PutObjectCommand({ Bucket: name, Key: 'k', Body: 'x', ServerSideEncryption: 'aws:kms:dsse' }),
      ),
    ).rejects.toMatchObject({ name: 'NotImplemented', $metadata: { httpStatusCode: 501 } });
  });

  it('seals a POST form upload under a named key; a bucket default without a key uses the default key', async () => {
    const c = await t.customer();
    const { name, s3 } = await bucketOf(c);
    const k = await newKey(c);
    const fields = {
      'x-amz-server-side-encryption': 'aws:kms',
      'x-amz-server-side-encryption-aws-kms-key-id': k.key_id,
    };
    const post = await createPresignedPost(s3, {
      Bucket: name,
      Key: 'form.txt',
      Fields: fields,
      Conditions: Object.entries(fields).map(([f, v]) => ({ [f]: v })),
      Expires: 600,
    });
    const form = new FormData();
    for (const [f, v] of Object.entries(post.fields)) form.append(f, v);
    form.append('file', new Blob(['FORMKMSPLAIN']), 'form.txt');
    const res = await fetch(post.url, { method: 'POST', body: form });
    expect(res.status, await res.clone().text()).toBe(204);
    expect(stored('FORMKMSPLAIN')).toBe(false);
    const got = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'form.txt' }));
    expect(got.SSEKMSKeyId).toBe(k.arn);
    expect(await got.Body!.transformToString()).toBe('FORMKMSPLAIN');

    const encryption = (KMSMasterKeyID?: string) =>
      new PutBucketEncryptionCommand({
        Bucket: name,
        ServerSideEncryptionConfiguration: {
          Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID } }],
        },
      });
    const foreign = await newKey(b);
    await expect(s3.send(encryption(foreign.arn))).rejects.toMatchObject({ name: 'KMS.NotFoundException' });
    await s3.send(encryption());
    const put = await s3.send(new PutObjectCommand({ Bucket: name, Key: 'd', Body: 'x' }));
    const keys = await t.request('GET', '/v1/storage/kms-keys', { key: c.pat });
    const def = keys.body.find((x: { is_default: boolean }) => x.is_default);
    expect(put.SSEKMSKeyId).toBe(def.arn);
  });
});
