import {
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { storageS3Fixture } from './storage-s3-fixture.js';

/**
 * SSE-KMS encryption contexts and the bucket-key flag: kept with the object, the context bound to
 * its wrapped data key (as AWS KMS binds it), given back where S3 gives them back.
 */
const f = storageS3Fixture('kmsctx');
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64');
const errorName = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (e: { name?: string }) => e.name ?? String(e),
  );

describe('SSE-KMS encryption context and bucket key', () => {
  it('keeps the context with the object, answers it on writes, and opens the object with it', async () => {
    const { name, s3 } = await f.bucketOf(f.a);
    const k = await f.newKey(f.a);
    const context = { project: 'fjord', team: 'storage' };
    const put = await s3.send(
      new PutObjectCommand({
        Bucket: name,
        Key: 'ctx',
        Body: 'sealed with a context',
        ServerSideEncryption: 'aws:kms',
        SSEKMSKeyId: k.key_id,
        // The same pairs in another order are the same context.
        SSEKMSEncryptionContext: b64({ team: 'storage', project: 'fjord' }),
        BucketKeyEnabled: true,
      }),
    );
    expect(JSON.parse(Buffer.from(put.SSEKMSEncryptionContext!, 'base64').toString())).toEqual(context);
    expect(put.BucketKeyEnabled).toBe(true);
    const got = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'ctx' }));
    expect(await got.Body!.transformToString()).toBe('sealed with a context');
    expect(got.BucketKeyEnabled).toBe(true);
    const head = await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'ctx' }));
    expect(head.BucketKeyEnabled).toBe(true);

    // A copy reads the source with its context and seals the copy with the one it is given.
    const copy = await s3.send(
      new CopyObjectCommand({
        Bucket: name,
        Key: 'ctx-copy',
        CopySource: `${name}/ctx`,
        ServerSideEncryption: 'aws:kms',
        SSEKMSKeyId: k.key_id,
        SSEKMSEncryptionContext: b64({ copy: 'yes' }),
      }),
    );
    expect(Buffer.from(copy.SSEKMSEncryptionContext!, 'base64').toString()).toBe('{"copy":"yes"}');
    const copied = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'ctx-copy' }));
    expect(await copied.Body!.transformToString()).toBe('sealed with a context');

    const upload = await s3.send(
      new CreateMultipartUploadCommand({
        Bucket: name,
        Key: 'ctx-mpu',
        ServerSideEncryption: 'aws:kms',
        SSEKMSEncryptionContext: b64({ upload: '1' }),
      }),
    );
    expect(Buffer.from(upload.SSEKMSEncryptionContext!, 'base64').toString()).toBe('{"upload":"1"}');
  });

  it('binds the context to the wrapped data key: a row whose context was changed does not open', async () => {
    const { name, s3 } = await f.bucketOf(f.a);
    await s3.send(
      new PutObjectCommand({
        Bucket: name,
        Key: 'bound',
        Body: 'x',
        ServerSideEncryption: 'aws:kms',
        SSEKMSEncryptionContext: b64({ tenant: 'a' }),
      }),
    );
    await sql`UPDATE storage_objects SET sse = replace(sse, '{\\"tenant\\":\\"a\\"}', '{\\"tenant\\":\\"b\\"}')
      WHERE "key" = 'bound'`.execute(f.t.kernel.store.db);
    const row = await sql<{ sse: string }>`SELECT sse FROM storage_objects WHERE "key" = 'bound'`.execute(
      f.t.kernel.store.db,
    );
    expect(JSON.parse(row.rows[0]!.sse).context).toBe('{"tenant":"b"}');
    expect(await errorName(s3.send(new GetObjectCommand({ Bucket: name, Key: 'bound' })))).not.toBe('ok');
  });

  it('refuses a context that is not base64 JSON of strings, and a context without aws:kms', async () => {
    const { name, s3 } = await f.bucketOf(f.a);
    const put = (extra: Record<string, unknown>) =>
      errorName(s3.send(new PutObjectCommand({ Bucket: name, Key: 'bad', Body: 'x', ...extra })));
    expect(await put({ ServerSideEncryption: 'aws:kms', SSEKMSEncryptionContext: b64({ n: 1 }) })).toBe(
      'InvalidArgument',
    );
    expect(await put({ ServerSideEncryption: 'aws:kms', SSEKMSEncryptionContext: b64(['a']) })).toBe(
      'InvalidArgument',
    );
    expect(await put({ ServerSideEncryption: 'aws:kms', SSEKMSEncryptionContext: '%%%' })).toBe(
      'InvalidArgument',
    );
    expect(await put({ ServerSideEncryption: 'AES256', SSEKMSEncryptionContext: b64({ a: 'b' }) })).toBe(
      'InvalidArgument',
    );
    expect(await errorName(s3.send(new GetObjectCommand({ Bucket: name, Key: 'bad' })))).toBe('NoSuchKey');
  });
});
