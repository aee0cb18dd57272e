import { randomBytes } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectTaggingCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './testing/harness.js';

let h: Harness;
let s3: S3Client;

beforeAll(async () => {
  h = await startHarness();
  h.directory.addBucket({ name: 'ops', customerId: 'c1' });
  h.directory.addKey({ accessKeyId: 'AKO', customerId: 'c1', grants: [{ bucket: 'ops', actions: 'all' }] });
  s3 = new S3Client({
    endpoint: h.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'AKO', secretAccessKey: 'secret-AKO' },
  });
});
afterAll(async () => {
  s3?.destroy();
  await h?.close();
});

describe('object operations', () => {
  it('round-trips the standard headers and replaces metadata on a REPLACE copy', async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: 'ops',
        Key: 'page.html',
        Body: '<p>hi</p>',
        ContentType: 'text/html',
        CacheControl: 'max-age=60',
        ContentDisposition: 'inline',
        ContentLanguage: 'nb',
        Metadata: { author: 'kari' },
        Tagging: 'team=web',
      }),
    );
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'ops', Key: 'page.html' }));
    expect(head).toMatchObject({
      ContentType: 'text/html',
      CacheControl: 'max-age=60',
      ContentDisposition: 'inline',
      ContentLanguage: 'nb',
      Metadata: { author: 'kari' },
    });
    await s3.send(
      new CopyObjectCommand({
        Bucket: 'ops',
        Key: 'page.html',
        CopySource: 'ops/page.html',
        MetadataDirective: 'REPLACE',
        ContentType: 'text/plain',
        Metadata: { author: 'ola' },
      }),
    );
    const after = await s3.send(new HeadObjectCommand({ Bucket: 'ops', Key: 'page.html' }));
    expect(after.ContentType).toBe('text/plain');
    expect(after.Metadata).toEqual({ author: 'ola' });
    await expect(
      s3.send(new CopyObjectCommand({ Bucket: 'ops', Key: 'page.html', CopySource: 'ops/page.html' })),
    ).rejects.toMatchObject({
      name: 'InvalidRequest',
    });
    await expect(
      s3.send(
        new CopyObjectCommand({
          Bucket: 'ops',
          Key: 'other.html',
          CopySource: 'ops/page.html',
          CopySourceIfMatch: '"nope"',
        }),
      ),
    ).rejects.toMatchObject({ name: 'PreconditionFailed' });
  });

  it('reads, replaces and deletes object tags', async () => {
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'ops', Key: 'page.html' }))).TagSet).toEqual([
      { Key: 'team', Value: 'web' },
    ]);
    await s3.send(
      new PutObjectTaggingCommand({
        Bucket: 'ops',
        Key: 'page.html',
        Tagging: {
          TagSet: [
            { Key: 'b', Value: '2' },
            { Key: 'a', Value: '1' },
          ],
        },
      }),
    );
    // Listed in key order, as S3 lists them, whatever order they were set in.
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'ops', Key: 'page.html' }))).TagSet).toEqual([
      { Key: 'a', Value: '1' },
      { Key: 'b', Value: '2' },
    ]);
    await s3.send(new DeleteObjectTaggingCommand({ Bucket: 'ops', Key: 'page.html' }));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'ops', Key: 'page.html' }))).TagSet).toEqual(
      [],
    );
  });

  it('builds an object from ranges of another with UploadPartCopy, and lists open uploads', async () => {
    const source = randomBytes(6 * 1024 * 1024);
    await s3.send(new PutObjectCommand({ Bucket: 'ops', Key: 'source.bin', Body: source }));
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'ops', Key: 'copy.bin' }));
    const open = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'ops' }));
    expect(open.Uploads?.map((u) => u.UploadId)).toEqual([UploadId]);
    const p1 = await s3.send(
      new UploadPartCopyCommand({
        Bucket: 'ops',
        Key: 'copy.bin',
        UploadId,
        PartNumber: 1,
        CopySource: 'ops/source.bin',
        CopySourceRange: `bytes=0-${5 * 1024 * 1024 - 1}`,
      }),
    );
    const p2 = await s3.send(
      new UploadPartCopyCommand({
        Bucket: 'ops',
        Key: 'copy.bin',
        UploadId,
        PartNumber: 2,
        CopySource: 'ops/source.bin',
        CopySourceRange: `bytes=${5 * 1024 * 1024}-${source.length - 1}`,
      }),
    );
    // A range past the source's end is InvalidRange (S3's code), not InvalidArgument.
    await expect(
      s3.send(
        new UploadPartCopyCommand({
          Bucket: 'ops',
          Key: 'copy.bin',
          UploadId,
          PartNumber: 3,
          CopySource: 'ops/source.bin',
          CopySourceRange: `bytes=0-${source.length}`,
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidRange' });
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'ops',
        Key: 'copy.bin',
        UploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: p1.CopyPartResult?.ETag },
            { PartNumber: 2, ETag: p2.CopyPartResult?.ETag },
          ],
        },
      }),
    );
    const got = await s3.send(new GetObjectCommand({ Bucket: 'ops', Key: 'copy.bin' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(source)).toBe(true);
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'ops' }))).Uploads ?? []).toEqual([]);
  });

  it('keeps one null version when versioning is suspended', async () => {
    h.directory.update('ops', { versioning: 'Enabled' });
    const v1 = await s3.send(new PutObjectCommand({ Bucket: 'ops', Key: 's', Body: 'one' }));
    h.directory.update('ops', { versioning: 'Suspended' });
    const n1 = await s3.send(new PutObjectCommand({ Bucket: 'ops', Key: 's', Body: 'two' }));
    const n2 = await s3.send(new PutObjectCommand({ Bucket: 'ops', Key: 's', Body: 'three' }));
    expect(n1.VersionId).toBeUndefined();
    expect(n2.VersionId).toBeUndefined();
    const old = await s3.send(new GetObjectCommand({ Bucket: 'ops', Key: 's', VersionId: v1.VersionId }));
    expect(await old.Body!.transformToString()).toBe('one');
    const del = await s3.send(new DeleteObjectCommand({ Bucket: 'ops', Key: 's' }));
    expect(del.DeleteMarker).toBe(true);
    expect(del.VersionId).toBe('null');
    const usage = await h.plane.stats.usage('b-ops');
    const sizes = [9, 6 * 1024 * 1024, 6 * 1024 * 1024, 3]; // page.html, source.bin, copy.bin, the Enabled version
    expect(usage).toEqual({ objects: sizes.length, bytes: sizes.reduce((a, b) => a + b, 0) });
  });

  it('leaves one current version and exact counters after concurrent writers of one key', async () => {
    const before = await h.plane.stats.usage('b-ops');
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        s3.send(
          new PutObjectCommand({ Bucket: 'ops', Key: 'race', Body: `writer ${String(i).padStart(2, '0')}` }),
        ),
      ),
    );
    const after = await h.plane.stats.usage('b-ops');
    expect(after.objects - before.objects).toBe(1);
    expect(after.bytes - before.bytes).toBe(9);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'ops', Key: 'race' }));
    expect(await got.Body!.transformToString()).toMatch(/^writer \d\d$/);
    await s3.send(new DeleteObjectCommand({ Bucket: 'ops', Key: 'race', VersionId: 'null' }));
  });

  it('applies lifecycle rules: expiry, noncurrent expiry and aborting old uploads', async () => {
    await s3.send(new CreateMultipartUploadCommand({ Bucket: 'ops', Key: 'logs/forgotten' }));
    await s3.send(new PutObjectCommand({ Bucket: 'ops', Key: 'logs/old.txt', Body: 'old' }));
    const bucket = (await h.directory.findBucket('ops'))!;
    const rules = [
      {
        id: 'logs',
        enabled: true,
        prefix: 'logs/',
        expiration_days: 30,
        noncurrent_version_expiration_days: null,
        abort_incomplete_multipart_upload_days: 7,
      },
      {
        id: 'all',
        enabled: true,
        prefix: '',
        expiration_days: null,
        noncurrent_version_expiration_days: 1,
        abort_incomplete_multipart_upload_days: null,
      },
    ];
    const early = await h.plane.stats.applyLifecycle({ ...bucket, lifecycle: rules }, Date.now() + 3600_000);
    expect(early).toEqual({ expired: 0, aborted: 0, transitioned: 0 });
    const later = await h.plane.stats.applyLifecycle(
      { ...bucket, lifecycle: rules },
      Date.now() + 31 * 86_400_000,
    );
    expect(later.aborted).toBe(1);
    await expect(
      s3.send(new HeadObjectCommand({ Bucket: 'ops', Key: 'logs/old.txt' })),
    ).rejects.toMatchObject({ name: 'NotFound' });
    // The Enabled-era version of "s" was noncurrent for over a day: gone, and the lone marker with it.
    await expect(
      s3.send(new GetObjectCommand({ Bucket: 'ops', Key: 's', VersionId: 'null' })),
    ).rejects.toBeTruthy();
    expect((await h.plane.stats.usage('b-ops')).objects).toBe(3);
  });
});
