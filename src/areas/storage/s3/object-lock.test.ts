import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketVersioningCommand,
  GetObjectLegalHoldCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
  PutObjectLockConfigurationCommand,
  PutObjectRetentionCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './testing/harness.js';

let h: Harness;
let s3: S3Client;
let limited: S3Client;
const Bucket = 'locked';
const DAY = 86_400;

const client = (id: string) =>
  new S3Client({
    endpoint: h.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: id, secretAccessKey: `secret-${id}` },
  });

beforeAll(async () => {
  h = await startHarness();
  h.directory.addBucket({ name: 'unlocked', customerId: 'c1' });
  h.directory.addKey({
    accessKeyId: 'AKLOCK',
    customerId: 'c1',
    kind: 'account',
    grants: [{ bucket: '*', actions: 'all' }],
    mayCreateBuckets: true,
  });
  // Everything a writer needs, but not the permission to bypass GOVERNANCE retention.
  h.directory.addKey({
    accessKeyId: 'AKNOBYPASS',
    customerId: 'c1',
    grants: [
      {
        bucket: Bucket,
        actions: [
          's3:PutObject',
          's3:GetObject',
          's3:DeleteObject',
          's3:DeleteObjectVersion',
          's3:PutObjectRetention',
        ],
      },
    ],
  });
  s3 = client('AKLOCK');
  limited = client('AKNOBYPASS');
  await s3.send(new CreateBucketCommand({ Bucket, ObjectLockEnabledForBucket: true }));
});
afterAll(async () => {
  s3?.destroy();
  limited?.destroy();
  await h?.close();
});

const inDays = (days: number) => new Date(h.clock.nowMs() + days * DAY * 1000);

async function putLocked(Key: string, mode: 'GOVERNANCE' | 'COMPLIANCE', days: number) {
  const r = await s3.send(
    new PutObjectCommand({
      Bucket,
      Key,
      Body: Key,
      ObjectLockMode: mode,
      ObjectLockRetainUntilDate: inDays(days),
    }),
  );
  return r.VersionId!;
}

const denied = { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } };

describe('object lock', () => {
  it('creates a lock bucket with versioning on, which cannot be suspended', async () => {
    const v = await s3.send(new GetBucketVersioningCommand({ Bucket }));
    expect(v.Status).toBe('Enabled');
    const cfg = await s3.send(new GetObjectLockConfigurationCommand({ Bucket }));
    expect(cfg.ObjectLockConfiguration).toEqual({ ObjectLockEnabled: 'Enabled' });
    await expect(
      s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Suspended' } })),
    ).rejects.toMatchObject({ name: 'InvalidBucketState' });
    await expect(
      s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'unlocked' })),
    ).rejects.toMatchObject({
      name: 'ObjectLockConfigurationNotFoundError',
    });
    await expect(
      s3.send(
        new PutObjectLockConfigurationCommand({
          Bucket: 'unlocked',
          ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled' },
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidBucketState', $metadata: { httpStatusCode: 409 } });
  });

  it('refuses lock headers and lock operations on a bucket without object lock', async () => {
    await expect(
      s3.send(
        new PutObjectCommand({
          Bucket: 'unlocked',
          Key: 'k',
          Body: 'x',
          ObjectLockMode: 'GOVERNANCE',
          ObjectLockRetainUntilDate: inDays(1),
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidRequest', $metadata: { httpStatusCode: 400 } });
    await s3.send(new PutObjectCommand({ Bucket: 'unlocked', Key: 'k', Body: 'x' }));
    await expect(
      s3.send(new GetObjectRetentionCommand({ Bucket: 'unlocked', Key: 'k' })),
    ).rejects.toMatchObject({
      name: 'InvalidRequest',
    });
  });

  it('validates the lock headers', async () => {
    await expect(
      s3.send(new PutObjectCommand({ Bucket, Key: 'bad', Body: 'x', ObjectLockMode: 'GOVERNANCE' })),
    ).rejects.toMatchObject({ name: 'InvalidArgument' });
    await expect(
      s3.send(
        new PutObjectCommand({
          Bucket,
          Key: 'bad',
          Body: 'x',
          ObjectLockMode: 'COMPLIANCE',
          ObjectLockRetainUntilDate: new Date(h.clock.nowMs() - 1000),
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidArgument' });
    // In a Retention document a mode is one of the schema's two words: anything else is MalformedXML.
    await putLocked('mode.txt', 'GOVERNANCE', 1);
    await expect(
      s3.send(
        new PutObjectRetentionCommand({
          Bucket,
          Key: 'mode.txt',
          Retention: { Mode: 'governance' as 'GOVERNANCE', RetainUntilDate: inDays(2) },
        }),
      ),
    ).rejects.toMatchObject({ name: 'MalformedXML' });
  });

  it('keeps a COMPLIANCE version until its date, for everyone, and never lets it shorten', async () => {
    const VersionId = await putLocked('c.txt', 'COMPLIANCE', 2);
    const head = await s3.send(new HeadObjectCommand({ Bucket, Key: 'c.txt' }));
    expect(head.ObjectLockMode).toBe('COMPLIANCE');
    expect(Math.abs(head.ObjectLockRetainUntilDate!.getTime() - inDays(2).getTime())).toBeLessThan(5000);
    const ret = await s3.send(new GetObjectRetentionCommand({ Bucket, Key: 'c.txt' }));
    expect(ret.Retention?.Mode).toBe('COMPLIANCE');
    await expect(s3.send(new DeleteObjectCommand({ Bucket, Key: 'c.txt', VersionId }))).rejects.toMatchObject(
      denied,
    );
    await expect(
      s3.send(new DeleteObjectCommand({ Bucket, Key: 'c.txt', VersionId, BypassGovernanceRetention: true })),
    ).rejects.toMatchObject(denied);
    await expect(
      s3.send(
        new PutObjectRetentionCommand({
          Bucket,
          Key: 'c.txt',
          BypassGovernanceRetention: true,
          Retention: { Mode: 'COMPLIANCE', RetainUntilDate: inDays(1) },
        }),
      ),
    ).rejects.toMatchObject(denied);
    await expect(
      s3.send(
        new PutObjectRetentionCommand({
          Bucket,
          Key: 'c.txt',
          Retention: { Mode: 'GOVERNANCE', RetainUntilDate: inDays(5) },
        }),
      ),
    ).rejects.toMatchObject(denied);
    // Lengthening is allowed.
    await s3.send(
      new PutObjectRetentionCommand({
        Bucket,
        Key: 'c.txt',
        Retention: { Mode: 'COMPLIANCE', RetainUntilDate: inDays(3) },
      }),
    );
    // A plain DELETE only adds a delete marker: the locked version stays.
    const del = await s3.send(new DeleteObjectCommand({ Bucket, Key: 'c.txt' }));
    expect(del.DeleteMarker).toBe(true);
    const batch = await s3.send(
      new DeleteObjectsCommand({ Bucket, Delete: { Objects: [{ Key: 'c.txt', VersionId }] } }),
    );
    expect(batch.Errors?.[0]).toMatchObject({ Key: 'c.txt', Code: 'AccessDenied' });
    h.clock.advance(3 * DAY + 1);
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'c.txt', VersionId }));
  });

  it('lets GOVERNANCE give way only to a key allowed to bypass it, who asks', async () => {
    const VersionId = await putLocked('g.txt', 'GOVERNANCE', 1);
    // Even turning it into COMPLIANCE, for as long, is a change that needs the bypass.
    const toCompliance = (BypassGovernanceRetention?: boolean) =>
      s3.send(
        new PutObjectRetentionCommand({
          Bucket,
          Key: 'g.txt',
          BypassGovernanceRetention,
          Retention: { Mode: 'COMPLIANCE', RetainUntilDate: inDays(1) },
        }),
      );
    await expect(toCompliance()).rejects.toMatchObject(denied);
    await expect(s3.send(new DeleteObjectCommand({ Bucket, Key: 'g.txt', VersionId }))).rejects.toMatchObject(
      denied,
    );
    await expect(
      limited.send(
        new DeleteObjectCommand({ Bucket, Key: 'g.txt', VersionId, BypassGovernanceRetention: true }),
      ),
    ).rejects.toMatchObject(denied);
    await expect(
      limited.send(
        new PutObjectRetentionCommand({
          Bucket,
          Key: 'g.txt',
          BypassGovernanceRetention: true,
          Retention: { Mode: 'GOVERNANCE', RetainUntilDate: new Date(h.clock.nowMs() + 60_000) },
        }),
      ),
    ).rejects.toMatchObject(denied);
    await s3.send(
      new PutObjectRetentionCommand({
        Bucket,
        Key: 'g.txt',
        BypassGovernanceRetention: true,
        Retention: { Mode: 'GOVERNANCE', RetainUntilDate: new Date(h.clock.nowMs() + 60_000) },
      }),
    );
    await s3.send(
      new DeleteObjectCommand({ Bucket, Key: 'g.txt', VersionId, BypassGovernanceRetention: true }),
    );
  });

  it('keeps a version under legal hold, bypass or not, until the hold is lifted', async () => {
    const { VersionId } = await s3.send(
      new PutObjectCommand({ Bucket, Key: 'hold.txt', Body: 'x', ObjectLockLegalHoldStatus: 'ON' }),
    );
    expect(
      (await s3.send(new GetObjectLegalHoldCommand({ Bucket, Key: 'hold.txt' }))).LegalHold?.Status,
    ).toBe('ON');
    await expect(
      s3.send(
        new DeleteObjectCommand({ Bucket, Key: 'hold.txt', VersionId, BypassGovernanceRetention: true }),
      ),
    ).rejects.toMatchObject(denied);
    await s3.send(
      new PutObjectLegalHoldCommand({ Bucket, Key: 'hold.txt', VersionId, LegalHold: { Status: 'OFF' } }),
    );
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'hold.txt', VersionId }));
    const { VersionId: v2 } = await s3.send(new PutObjectCommand({ Bucket, Key: 'hold.txt', Body: 'y' }));
    await expect(s3.send(new GetObjectLegalHoldCommand({ Bucket, Key: 'hold.txt' }))).rejects.toMatchObject({
      name: 'NoSuchObjectLockConfiguration',
    });
    await s3.send(new PutObjectLegalHoldCommand({ Bucket, Key: 'hold.txt', LegalHold: { Status: 'ON' } }));
    await expect(
      s3.send(new DeleteObjectCommand({ Bucket, Key: 'hold.txt', VersionId: v2 })),
    ).rejects.toMatchObject(denied);
  });

  it('applies the bucket default retention to new versions, on the server clock', async () => {
    await s3.send(
      new PutObjectLockConfigurationCommand({
        Bucket,
        ObjectLockConfiguration: {
          ObjectLockEnabled: 'Enabled',
          Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 1 } },
        },
      }),
    );
    const cfg = await s3.send(new GetObjectLockConfigurationCommand({ Bucket }));
    expect(cfg.ObjectLockConfiguration?.Rule?.DefaultRetention).toEqual({ Mode: 'GOVERNANCE', Days: 1 });
    await expect(
      s3.send(
        new PutObjectLockConfigurationCommand({
          Bucket,
          ObjectLockConfiguration: {
            ObjectLockEnabled: 'Enabled',
            Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 1, Years: 1 } },
          },
        }),
      ),
    ).rejects.toMatchObject({ name: 'MalformedXML' });
    const { VersionId } = await s3.send(new PutObjectCommand({ Bucket, Key: 'd.txt', Body: 'x' }));
    const ret = await s3.send(new GetObjectRetentionCommand({ Bucket, Key: 'd.txt' }));
    expect(ret.Retention?.Mode).toBe('GOVERNANCE');
    expect(Math.abs(ret.Retention!.RetainUntilDate!.getTime() - inDays(1).getTime())).toBeLessThan(5000);
    await expect(s3.send(new DeleteObjectCommand({ Bucket, Key: 'd.txt', VersionId }))).rejects.toMatchObject(
      denied,
    );
    h.clock.advance(DAY + 1);
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'd.txt', VersionId }));
    await s3.send(
      new PutObjectLockConfigurationCommand({
        Bucket,
        ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled' },
      }),
    );
    expect(
      (await s3.send(new GetObjectLockConfigurationCommand({ Bucket }))).ObjectLockConfiguration?.Rule,
    ).toBeUndefined();
  });

  it('keeps a locked noncurrent version past its lifecycle expiry, until the lock ends', async () => {
    const Key = 'life.txt';
    const old = await putLocked(Key, 'COMPLIANCE', 5);
    await s3.send(new PutObjectCommand({ Bucket, Key, Body: 'newer' }));
    h.directory.update(Bucket, {
      lifecycle: [
        {
          id: 'old-versions',
          enabled: true,
          prefix: 'life',
          expiration_days: null,
          noncurrent_version_expiration_days: 1,
          abort_incomplete_multipart_upload_days: null,
        },
      ],
    });
    const versions = async () =>
      (await s3.send(new ListObjectVersionsCommand({ Bucket, Prefix: Key }))).Versions?.map(
        (v) => v.VersionId,
      );
    h.clock.advance(2 * DAY);
    await h.plane.stats.applyLifecycle(h.directory.buckets.get(Bucket)!, h.clock.nowMs());
    expect(await versions()).toContain(old);
    h.clock.advance(4 * DAY);
    await h.plane.stats.applyLifecycle(h.directory.buckets.get(Bucket)!, h.clock.nowMs());
    expect(await versions()).not.toContain(old);
    h.directory.update(Bucket, { lifecycle: null });
  });
});
