import {
  CreateBucketCommand,
  DeleteBucketOwnershipControlsCommand,
  DeleteBucketPolicyCommand,
  DeleteObjectsCommand,
  DeletePublicAccessBlockCommand,
  GetBucketAclCommand,
  GetBucketOwnershipControlsCommand,
  GetBucketPolicyCommand,
  GetBucketPolicyStatusCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  GetPublicAccessBlockCommand,
  ListObjectsV2Command,
  PutBucketAclCommand,
  PutBucketOwnershipControlsCommand,
  PutBucketPolicyCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  PutPublicAccessBlockCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './testing/harness.js';

let h: Harness;
let owner: S3Client;
let other: S3Client;

const client = (endpoint: string, id: string) =>
  new S3Client({
    endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: id, secretAccessKey: `secret-${id}` },
  });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: { name: string }) => err.name,
  );
/** An anonymous request, as curl would send it. */
async function anon(path: string, init: RequestInit = {}) {
  const res = await fetch(`${h.endpoint}${path}`, init);
  const text = await res.text();
  return { status: res.status, code: /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? null, text };
}

beforeAll(async () => {
  h = await startHarness();
  for (const name of ['acl', 'plain', 'pol']) h.directory.addBucket({ name, customerId: 'c1' });
  h.directory.addKey({ accessKeyId: 'AKOWNER', customerId: 'c1', grants: [{ bucket: '*', actions: 'all' }] });
  h.directory.addKey({ accessKeyId: 'AKOTHER', customerId: 'c2', grants: [{ bucket: '*', actions: 'all' }] });
  owner = client(h.endpoint, 'AKOWNER');
  other = client(h.endpoint, 'AKOTHER');
});
afterAll(async () => {
  owner?.destroy();
  other?.destroy();
  await h?.close();
});

describe('ACLs', () => {
  it('are off under BucketOwnerEnforced, the default, as on AWS', async () => {
    const got = await owner.send(new GetBucketOwnershipControlsCommand({ Bucket: 'plain' }));
    expect(got.OwnershipControls?.Rules?.[0]?.ObjectOwnership).toBe('BucketOwnerEnforced');
    expect(
      await failure(
        owner.send(new PutObjectCommand({ Bucket: 'plain', Key: 'k', Body: 'x', ACL: 'public-read' })),
      ),
    ).toBe('AccessControlListNotSupported');
    expect(await failure(owner.send(new PutBucketAclCommand({ Bucket: 'plain', ACL: 'public-read' })))).toBe(
      'AccessControlListNotSupported',
    );
    // Private and bucket-owner-full-control are what every object already is.
    await owner.send(
      new PutObjectCommand({ Bucket: 'plain', Key: 'k', Body: 'x', ACL: 'bucket-owner-full-control' }),
    );
    expect((await anon('/plain/k')).code).toBe('AccessDenied');
  });

  it('open single objects to anonymous readers (public-read) or to any key (authenticated-read)', async () => {
    await owner.send(
      new PutBucketOwnershipControlsCommand({
        Bucket: 'acl',
        OwnershipControls: { Rules: [{ ObjectOwnership: 'ObjectWriter' }] },
      }),
    );
    await owner.send(
      new PutObjectCommand({ Bucket: 'acl', Key: 'open.txt', Body: 'hello', ACL: 'public-read' }),
    );
    await owner.send(new PutObjectCommand({ Bucket: 'acl', Key: 'closed.txt', Body: 'secret' }));
    await owner.send(
      new PutObjectCommand({ Bucket: 'acl', Key: 'members.txt', Body: 'm', ACL: 'authenticated-read' }),
    );
    expect(await anon('/acl/open.txt')).toMatchObject({ status: 200, text: 'hello' });
    expect(await anon('/acl/closed.txt')).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(await anon('/acl/missing.txt')).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(await anon('/acl?list-type=2')).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect((await anon('/acl/members.txt')).status).toBe(403);
    const got = await other.send(new GetObjectCommand({ Bucket: 'acl', Key: 'members.txt' }));
    expect(await got.Body!.transformToString()).toBe('m');
    expect(await failure(other.send(new GetObjectCommand({ Bucket: 'acl', Key: 'closed.txt' })))).toBe(
      'AccessDenied',
    );

    const acl = await owner.send(new GetObjectAclCommand({ Bucket: 'acl', Key: 'open.txt' }));
    expect(acl.Owner?.ID).toBe('c1');
    expect(acl.Grants?.map((g) => [g.Grantee?.URI ?? g.Grantee?.ID, g.Permission])).toEqual([
      ['c1', 'FULL_CONTROL'],
      ['http://acs.amazonaws.com/groups/global/AllUsers', 'READ'],
    ]);
    const byVersion = await owner.send(
      new GetObjectAclCommand({ Bucket: 'acl', Key: 'open.txt', VersionId: 'null' }),
    );
    expect(byVersion.Grants).toHaveLength(2);
    await owner.send(new PutObjectAclCommand({ Bucket: 'acl', Key: 'open.txt', ACL: 'private' }));
    expect((await anon('/acl/open.txt')).status).toBe(403);
    // Grants by header, to another account (its canonical id is its account id).
    await owner.send(new PutObjectAclCommand({ Bucket: 'acl', Key: 'closed.txt', GrantRead: 'id="c2"' }));
    expect(
      await (
        await other.send(new GetObjectCommand({ Bucket: 'acl', Key: 'closed.txt' }))
      ).Body!.transformToString(),
    ).toBe('secret');
    expect(
      await failure(
        owner.send(
          new PutObjectAclCommand({ Bucket: 'acl', Key: 'closed.txt', GrantRead: 'emailAddress="a@b.c"' }),
        ),
      ),
    ).toBe('UnresolvableGrantByEmailAddress');
  });

  it('map the bucket ACL to is_public, and take the AccessControlPolicy document', async () => {
    await owner.send(new PutBucketAclCommand({ Bucket: 'acl', ACL: 'public-read' }));
    expect(h.directory.buckets.get('acl')!.isPublic).toBe(true);
    expect((await anon('/acl?list-type=2')).status).toBe(200);
    const acl = await owner.send(new GetBucketAclCommand({ Bucket: 'acl' }));
    expect(acl.Grants?.some((g) => g.Grantee?.URI?.endsWith('/AllUsers') && g.Permission === 'READ')).toBe(
      true,
    );
    await owner.send(
      new PutBucketAclCommand({
        Bucket: 'acl',
        AccessControlPolicy: {
          Owner: { ID: 'c1' },
          Grants: [
            { Grantee: { Type: 'CanonicalUser', ID: 'c1' }, Permission: 'FULL_CONTROL' },
            { Grantee: { Type: 'CanonicalUser', ID: 'c2' }, Permission: 'WRITE' },
          ],
        },
      }),
    );
    expect(h.directory.buckets.get('acl')!.isPublic).toBe(false);
    expect((await anon('/acl?list-type=2')).status).toBe(403);
    // No policy that could allow single keys: a DeleteObjects nothing allows is refused whole.
    const body = '<Delete><Object><Key>open.txt</Key></Object></Delete>';
    expect(await anon('/acl?delete', { method: 'POST', body })).toMatchObject({
      status: 403,
      code: 'AccessDenied',
    });
    await other.send(new PutObjectCommand({ Bucket: 'acl', Key: 'from-c2', Body: 'x' }));
    expect(await failure(other.send(new ListObjectsV2Command({ Bucket: 'acl' })))).toBe('AccessDenied');
    // ACLs cannot be turned off while the bucket ACL grants to others.
    expect(
      await failure(
        owner.send(
          new PutBucketOwnershipControlsCommand({
            Bucket: 'acl',
            OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
          }),
        ),
      ),
    ).toBe('InvalidBucketAclWithObjectOwnership');
    await owner.send(new PutBucketAclCommand({ Bucket: 'acl', ACL: 'private' }));
    await owner.send(new DeleteBucketOwnershipControlsCommand({ Bucket: 'acl' }));
    expect(await failure(owner.send(new GetBucketOwnershipControlsCommand({ Bucket: 'acl' })))).toBe(
      'OwnershipControlsNotFoundError',
    );
  });

  it('take x-amz-acl and x-amz-object-ownership on CreateBucket', async () => {
    h.directory.addKey({
      accessKeyId: 'AKMAKER',
      customerId: 'c1',
      mayCreateBuckets: true,
      grants: [{ bucket: '*', actions: 'all' }],
    });
    const maker = client(h.endpoint, 'AKMAKER');
    expect(
      await failure(maker.send(new CreateBucketCommand({ Bucket: 'made-public', ACL: 'public-read' }))),
    ).toBe('InvalidBucketAclWithObjectOwnership');
    await maker.send(
      new CreateBucketCommand({ Bucket: 'made-public', ACL: 'public-read', ObjectOwnership: 'ObjectWriter' }),
    );
    const b = h.directory.buckets.get('made-public')!;
    expect([b.isPublic, b.objectOwnership]).toEqual([true, 'ObjectWriter']);
    maker.destroy();
  });
});

describe('the public access block', () => {
  it('refuses public ACLs, ignores existing ones, and can be removed', async () => {
    await owner.send(
      new PutBucketOwnershipControlsCommand({
        Bucket: 'acl',
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerPreferred' }] },
      }),
    );
    await owner.send(new PutObjectCommand({ Bucket: 'acl', Key: 'pub', Body: 'p', ACL: 'public-read' }));
    expect(await failure(owner.send(new GetPublicAccessBlockCommand({ Bucket: 'acl' })))).toBe(
      'NoSuchPublicAccessBlockConfiguration',
    );
    await owner.send(
      new PutPublicAccessBlockCommand({
        Bucket: 'acl',
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, IgnorePublicAcls: true },
      }),
    );
    const got = await owner.send(new GetPublicAccessBlockCommand({ Bucket: 'acl' }));
    expect(got.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      IgnorePublicAcls: true,
      BlockPublicPolicy: false,
      RestrictPublicBuckets: false,
    });
    expect(
      await failure(
        owner.send(new PutObjectCommand({ Bucket: 'acl', Key: 'p2', Body: 'p', ACL: 'public-read' })),
      ),
    ).toBe('AccessDenied');
    expect((await anon('/acl/pub')).status).toBe(403);
    await owner.send(new DeletePublicAccessBlockCommand({ Bucket: 'acl' }));
    expect((await anon('/acl/pub')).status).toBe(200);
  });

  it('applies the operator’s FJORD_S3_BLOCK_PUBLIC_ACCESS to every bucket', async () => {
    const strict = await startHarness({ FJORD_S3_BLOCK_PUBLIC_ACCESS: 'all' });
    try {
      strict.directory.addBucket({ name: 'b', customerId: 'c1', objectOwnership: 'ObjectWriter' });
      strict.directory.addKey({
        accessKeyId: 'AKOWNER',
        customerId: 'c1',
        grants: [{ bucket: '*', actions: 'all' }],
      });
      const s3 = client(strict.endpoint, 'AKOWNER');
      expect(await failure(s3.send(new PutBucketAclCommand({ Bucket: 'b', ACL: 'public-read' })))).toBe(
        'AccessDenied',
      );
      const pub = JSON.stringify({
        Statement: [
          { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' },
        ],
      });
      expect(await failure(s3.send(new PutBucketPolicyCommand({ Bucket: 'b', Policy: pub })))).toBe(
        'AccessDenied',
      );
      s3.destroy();
    } finally {
      await strict.close();
    }
  });
});

describe('bucket policies', () => {
  const policy = (...Statement: object[]) => JSON.stringify({ Version: '2012-10-17', Statement });

  it('are validated on PUT with the reason, stored as sent, and reported public or not', async () => {
    const bad = await owner
      .send(
        new PutBucketPolicyCommand({
          Bucket: 'pol',
          Policy: policy({ Effect: 'Allow', Principal: '*', Resource: 'arn:aws:s3:::pol/*' }),
        }),
      )
      .catch((e: { name: string; message: string }) => e);
    expect(bad).toMatchObject({ name: 'MalformedPolicy', message: 'Missing required field Action' });
    expect(await failure(owner.send(new GetBucketPolicyCommand({ Bucket: 'pol' })))).toBe(
      'NoSuchBucketPolicy',
    );
    const text = policy({
      Sid: 'pub',
      Effect: 'Allow',
      Principal: '*',
      Action: 's3:GetObject',
      Resource: 'arn:aws:s3:::pol/public/*',
    });
    await owner.send(new PutBucketPolicyCommand({ Bucket: 'pol', Policy: text }));
    expect((await owner.send(new GetBucketPolicyCommand({ Bucket: 'pol' }))).Policy).toBe(text);
    expect(
      (await owner.send(new GetBucketPolicyStatusCommand({ Bucket: 'pol' }))).PolicyStatus?.IsPublic,
    ).toBe(true);
  });

  it('let anonymous readers in where they allow, and an explicit Deny beats the key’s own grants', async () => {
    await owner.send(new PutObjectCommand({ Bucket: 'pol', Key: 'public/a.txt', Body: 'A' }));
    await owner.send(new PutObjectCommand({ Bucket: 'pol', Key: 'secret/s.txt', Body: 'S' }));
    await owner.send(new PutObjectCommand({ Bucket: 'pol', Key: 'home/ann/x', Body: 'x' }));
    await owner.send(
      new PutBucketPolicyCommand({
        Bucket: 'pol',
        Policy: policy(
          { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::pol/public/*' },
          {
            Effect: 'Deny',
            Principal: '*',
            Action: ['s3:GetObject', 's3:DeleteObject'],
            Resource: 'arn:aws:s3:::pol/secret/*',
          },
          {
            Effect: 'Allow',
            Principal: { AWS: ['AKOTHER'] },
            Action: 's3:ListBucket',
            Resource: 'arn:aws:s3:::pol',
            Condition: { StringLike: { 's3:prefix': 'home/*' } },
          },
          {
            Effect: 'Allow',
            Principal: { AWS: 'arn:aws:iam::c2:root' },
            Action: 's3:GetObject',
            Resource: 'arn:aws:s3:::pol/home/*',
            Condition: {
              IpAddress: { 'aws:SourceIp': '127.0.0.0/8' },
              Bool: { 'aws:SecureTransport': 'false' },
            },
          },
        ),
      }),
    );
    expect(await anon('/pol/public/a.txt')).toMatchObject({ status: 200, text: 'A' });
    expect((await anon('/pol/secret/s.txt')).status).toBe(403);
    expect(await failure(owner.send(new GetObjectCommand({ Bucket: 'pol', Key: 'secret/s.txt' })))).toBe(
      'AccessDenied',
    );
    const del = await owner.send(
      new DeleteObjectsCommand({
        Bucket: 'pol',
        Delete: { Objects: [{ Key: 'secret/s.txt' }, { Key: 'nothing-here' }] },
      }),
    );
    expect(del.Errors?.map((e) => [e.Key, e.Code])).toEqual([['secret/s.txt', 'AccessDenied']]);
    expect(del.Deleted?.map((d) => d.Key)).toEqual(['nothing-here']);
    // Another customer's key, by access key id and by account, with conditions.
    const listed = await other.send(new ListObjectsV2Command({ Bucket: 'pol', Prefix: 'home/' }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual(['home/ann/x']);
    expect(await failure(other.send(new ListObjectsV2Command({ Bucket: 'pol', Prefix: 'secret/' })))).toBe(
      'AccessDenied',
    );
    expect(
      await (
        await other.send(new GetObjectCommand({ Bucket: 'pol', Key: 'home/ann/x' }))
      ).Body!.transformToString(),
    ).toBe('x');
    expect(await failure(other.send(new PutObjectCommand({ Bucket: 'pol', Key: 'home/y', Body: 'y' })))).toBe(
      'AccessDenied',
    );
  });

  it('are ignored for outsiders under RestrictPublicBuckets, refused under BlockPublicPolicy, and the owner can always remove them', async () => {
    await owner.send(
      new PutPublicAccessBlockCommand({
        Bucket: 'pol',
        PublicAccessBlockConfiguration: { RestrictPublicBuckets: true, BlockPublicPolicy: true },
      }),
    );
    expect((await anon('/pol/public/a.txt')).status).toBe(403);
    const everyone = policy({
      Effect: 'Allow',
      Principal: '*',
      Action: 's3:*',
      Resource: 'arn:aws:s3:::pol/*',
    });
    expect(await failure(owner.send(new PutBucketPolicyCommand({ Bucket: 'pol', Policy: everyone })))).toBe(
      'AccessDenied',
    );
    await owner.send(new DeletePublicAccessBlockCommand({ Bucket: 'pol' }));
    await owner.send(
      new PutBucketPolicyCommand({
        Bucket: 'pol',
        Policy: policy({
          Effect: 'Deny',
          Principal: '*',
          Action: 's3:*',
          Resource: ['arn:aws:s3:::pol', 'arn:aws:s3:::pol/*'],
        }),
      }),
    );
    expect(await failure(owner.send(new ListObjectsV2Command({ Bucket: 'pol' })))).toBe('AccessDenied');
    await owner.send(new DeleteBucketPolicyCommand({ Bucket: 'pol' }));
    expect((await owner.send(new ListObjectsV2Command({ Bucket: 'pol' }))).KeyCount).toBe(3);
  });
});
