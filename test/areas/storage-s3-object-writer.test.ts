import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetBucketAclCommand,
  GetObjectAclCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  type Grant,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  ListPartsCommand,
  PutBucketAclCommand,
  PutBucketOwnershipControlsCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * ACL-enabled buckets as an operator can make them the default
 * (FJORD_S3_DEFAULT_OBJECT_OWNERSHIP=ObjectWriter): object ACLs are the objects' own, grants are
 * checked, and a multipart upload's Initiator is its uploader — each as AWS answers.
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let endpoint: string;
const clients: S3Client[] = [];
let n = 0;

const client = (accessKeyId: string, secretAccessKey: string) => {
  const c = new S3Client({
    endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    maxAttempts: 1,
  });
  clients.push(c);
  return c;
};

/** An account key of `c` that may create buckets, as an S3 client. */
async function accountClient(c: TestCustomer): Promise<S3Client> {
  const r = await t.request('POST', '/v1/storage/keys', {
    key: c.pat,
    body: { name: `acct-${n++}`, actions: ['s3:CreateBucket', 's3:ListAllMyBuckets'] },
  });
  expect(r.status).toBe(201);
  return client(r.body.access_key, r.body.secret_key);
}

const fresh = (stem: string) => `${stem}-${Date.now().toString(36)}-${(n++).toString(36)}`;

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_S3_PORT: '0', FJORD_S3_DEFAULT_OBJECT_OWNERSHIP: 'ObjectWriter' });
  await t.fjord.start(['s3']);
  a = await t.customer();
  b = await t.customer();
  endpoint = (await t.request('GET', '/storage/s3')).body.endpoint;
});
afterAll(async () => {
  for (const c of clients) c.destroy();
  await t?.close();
});

describe('a bucket created without x-amz-object-ownership', () => {
  it('gets the operator default (ObjectWriter): ACLs are on', async () => {
    const s3 = await accountClient(a);
    const name = fresh('ow');
    await s3.send(new CreateBucketCommand({ Bucket: name, ACL: 'public-read' }));
    const api = await t.request('GET', `/v1/storage/buckets/${name}`, { key: a.pat });
    expect(api.status).toBe(200);
  });
});

describe('a private object in a public-read bucket', () => {
  it('is not readable by anyone: the bucket grant lists, the object ACL decides', async () => {
    const s3 = await accountClient(a);
    const name = fresh('pub');
    await s3.send(new CreateBucketCommand({ Bucket: name, ACL: 'public-read' }));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'secret', Body: 'bytes', ACL: 'private' }));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'open', Body: 'hello', ACL: 'public-read' }));
    expect((await fetch(`${endpoint}/${name}/secret`)).status).toBe(403);
    const open = await fetch(`${endpoint}/${name}/open`);
    expect(open.status).toBe(200);
    expect(await open.text()).toBe('hello');
    // The bucket's AllUsers READ still lets anyone list it.
    expect((await fetch(`${endpoint}/${name}?list-type=2`)).status).toBe(200);
    const acl = await s3.send(new GetObjectAclCommand({ Bucket: name, Key: 'secret' }));
    expect(acl.Grants?.some((g) => g.Grantee?.URI?.endsWith('/AllUsers'))).toBe(false);
  });

  it('keeps ACLs on: BucketOwnerEnforced is refused while the bucket is public-read', async () => {
    const s3 = await accountClient(a);
    const name = fresh('enf');
    await s3.send(new CreateBucketCommand({ Bucket: name, ACL: 'public-read' }));
    await expect(
      s3.send(
        new PutBucketOwnershipControlsCommand({
          Bucket: name,
          OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidBucketAclWithObjectOwnership' });
  });
});

describe('a grant to a canonical id', () => {
  it('is InvalidArgument for an account that does not exist, and taken for one that does', async () => {
    const s3 = await accountClient(a);
    const name = fresh('grant');
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'k', Body: 'x' }));
    await expect(
      s3.send(new PutObjectAclCommand({ Bucket: name, Key: 'k', GrantRead: 'id="no-such-account"' })),
    ).rejects.toMatchObject({ name: 'InvalidArgument' });
    await expect(
      s3.send(new PutBucketAclCommand({ Bucket: name, GrantRead: 'id="no-such-account"' })),
    ).rejects.toMatchObject({ name: 'InvalidArgument' });
    await s3.send(new PutObjectAclCommand({ Bucket: name, Key: 'k', GrantRead: `id="${b.id}"` }));
  });
});

describe('a multipart upload started by another account', () => {
  it('names that account as its Initiator and as its Owner (the owner of the object it makes)', async () => {
    const owner = await accountClient(a);
    const writer = await accountClient(b);
    const name = fresh('init');
    await owner.send(new CreateBucketCommand({ Bucket: name }));
    await owner.send(new PutBucketAclCommand({ Bucket: name, GrantWrite: `id="${b.id}"` }));
    const big = await writer.send(new CreateMultipartUploadCommand({ Bucket: name, Key: 'big' }));
    await owner.send(new CreateMultipartUploadCommand({ Bucket: name, Key: 'own' }));
    const list = await owner.send(new ListMultipartUploadsCommand({ Bucket: name }));
    const byKey = Object.fromEntries((list.Uploads ?? []).map((u) => [u.Key, u]));
    expect(byKey['big']?.Initiator?.ID).toBe(b.id);
    expect(byKey['big']?.Owner?.ID).toBe(b.id);
    expect(byKey['own']?.Initiator?.ID).toBe(a.id);
    expect(byKey['own']?.Owner?.ID).toBe(a.id);
    const parts = await owner.send(
      new ListPartsCommand({ Bucket: name, Key: 'big', UploadId: big.UploadId }),
    );
    expect([parts.Initiator?.ID, parts.Owner?.ID]).toEqual([b.id, b.id]);
  });
});

/** Grants as `who:PERMISSION` strings, in order: an account's id, or a group's name. */
const summary = (grants: Grant[] | undefined) =>
  (grants ?? []).map((g) => `${g.Grantee?.ID ?? g.Grantee?.URI?.split('/').pop()}:${g.Permission}`);

const ALL_USERS = 'http://acs.amazonaws.com/groups/global/AllUsers';

describe('ACLs are stored exactly as given', () => {
  it("canned ACLs stand for AWS's grant lists, on buckets and objects", async () => {
    const s3 = await accountClient(a);
    const name = fresh('canned');
    await s3.send(new CreateBucketCommand({ Bucket: name, ACL: 'public-read' }));
    expect(summary((await s3.send(new GetBucketAclCommand({ Bucket: name }))).Grants)).toEqual([
      `${a.id}:FULL_CONTROL`,
      'AllUsers:READ',
    ]);
    const cases: [string, string[]][] = [
      ['private', [`${a.id}:FULL_CONTROL`]],
      ['public-read', [`${a.id}:FULL_CONTROL`, 'AllUsers:READ']],
      ['public-read-write', [`${a.id}:FULL_CONTROL`, 'AllUsers:READ', 'AllUsers:WRITE']],
      ['authenticated-read', [`${a.id}:FULL_CONTROL`, 'AuthenticatedUsers:READ']],
      // The writer owns the bucket: bucket-owner-full-control names one account once.
      ['bucket-owner-full-control', [`${a.id}:FULL_CONTROL`]],
    ];
    for (const [acl, grants] of cases) {
      await s3.send(new PutObjectCommand({ Bucket: name, Key: acl, Body: 'x', ACL: acl as 'private' }));
      const got = await s3.send(new GetObjectAclCommand({ Bucket: name, Key: acl }));
      expect([acl, summary(got.Grants)]).toEqual([acl, grants]);
      expect(got.Owner?.ID).toBe(a.id);
    }
  });

  it('an object ACL that leaves the owner out gives the owner no grant, yet the owner keeps its ACL', async () => {
    const s3 = await accountClient(a);
    const name = fresh('exact');
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'k', Body: 'kept' }));
    await s3.send(
      new PutObjectAclCommand({
        Bucket: name,
        Key: 'k',
        AccessControlPolicy: {
          Owner: { ID: a.id },
          Grants: [{ Grantee: { Type: 'Group', URI: ALL_USERS }, Permission: 'READ' }],
        },
      }),
    );
    const acl = await s3.send(new GetObjectAclCommand({ Bucket: name, Key: 'k' }));
    expect(summary(acl.Grants)).toEqual(['AllUsers:READ']);
    // READ_ACP and WRITE_ACP are implicit for the owner; its keys still read the object.
    expect(
      await (await s3.send(new GetObjectCommand({ Bucket: name, Key: 'k' }))).Body?.transformToString(),
    ).toBe('kept');
    expect((await fetch(`${endpoint}/${name}/k`)).status).toBe(200);
    await s3.send(new PutObjectAclCommand({ Bucket: name, Key: 'k', GrantRead: `id="${b.id}"` }));
    expect(summary((await s3.send(new GetObjectAclCommand({ Bucket: name, Key: 'k' }))).Grants)).toEqual([
      `${b.id}:READ`,
    ]);
    expect((await fetch(`${endpoint}/${name}/k`)).status).toBe(403);
  });

  it('a bucket ACL that leaves the owner out is shown as sent, and the owner can still replace it', async () => {
    const s3 = await accountClient(a);
    const name = fresh('bexact');
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    await s3.send(
      new PutBucketAclCommand({
        Bucket: name,
        AccessControlPolicy: {
          Owner: { ID: a.id },
          Grants: [
            { Grantee: { Type: 'CanonicalUser', ID: a.id }, Permission: 'READ_ACP' },
            { Grantee: { Type: 'CanonicalUser', ID: b.id }, Permission: 'WRITE' },
          ],
        },
      }),
    );
    expect(summary((await s3.send(new GetBucketAclCommand({ Bucket: name }))).Grants)).toEqual([
      `${a.id}:READ_ACP`,
      `${b.id}:WRITE`,
    ]);
    await s3.send(new PutBucketAclCommand({ Bucket: name, ACL: 'private' }));
    expect(summary((await s3.send(new GetBucketAclCommand({ Bucket: name }))).Grants)).toEqual([
      `${a.id}:FULL_CONTROL`,
    ]);
  });
});

describe('an object another account writes (ObjectWriter)', () => {
  it("belongs to its writer: the bucket owner reads it only through the object's grants", async () => {
    const owner = await accountClient(a);
    const writer = await accountClient(b);
    const name = fresh('foreign');
    await owner.send(new CreateBucketCommand({ Bucket: name }));
    await owner.send(new PutBucketAclCommand({ Bucket: name, GrantWrite: `id="${b.id}"` }));
    await writer.send(new PutObjectCommand({ Bucket: name, Key: 'mine', Body: 'b only' }));
    await writer.send(
      new PutObjectCommand({ Bucket: name, Key: 'shared', Body: 'both', ACL: 'bucket-owner-full-control' }),
    );
    await writer.send(
      new PutObjectCommand({ Bucket: name, Key: 'peek', Body: 'r', ACL: 'bucket-owner-read' }),
    );

    const mine = await writer.send(new GetObjectAclCommand({ Bucket: name, Key: 'mine' }));
    expect(mine.Owner?.ID).toBe(b.id);
    expect(summary(mine.Grants)).toEqual([`${b.id}:FULL_CONTROL`]);
    await expect(owner.send(new GetObjectCommand({ Bucket: name, Key: 'mine' }))).rejects.toMatchObject({
      name: 'AccessDenied',
    });
    await expect(owner.send(new GetObjectAclCommand({ Bucket: name, Key: 'mine' }))).rejects.toMatchObject({
      name: 'AccessDenied',
    });

    const shared = await owner.send(new GetObjectAclCommand({ Bucket: name, Key: 'shared' }));
    expect(shared.Owner?.ID).toBe(b.id);
    expect(summary(shared.Grants)).toEqual([`${b.id}:FULL_CONTROL`, `${a.id}:FULL_CONTROL`]);
    const read = await owner.send(new GetObjectCommand({ Bucket: name, Key: 'shared' }));
    expect(await read.Body?.transformToString()).toBe('both');

    // bucket-owner-read: the bucket's owner reads the bytes, not the ACL.
    expect(
      (await owner.send(new GetObjectCommand({ Bucket: name, Key: 'peek' }))).$metadata.httpStatusCode,
    ).toBe(200);
    await expect(owner.send(new GetObjectAclCommand({ Bucket: name, Key: 'peek' }))).rejects.toMatchObject({
      name: 'AccessDenied',
    });

    // The writer leaves itself out: it keeps READ_ACP/WRITE_ACP as the object's owner.
    await writer.send(
      new PutObjectAclCommand({
        Bucket: name,
        Key: 'mine',
        AccessControlPolicy: {
          Owner: { ID: b.id },
          Grants: [{ Grantee: { Type: 'CanonicalUser', ID: a.id }, Permission: 'READ' }],
        },
      }),
    );
    expect(
      summary((await writer.send(new GetObjectAclCommand({ Bucket: name, Key: 'mine' }))).Grants),
    ).toEqual([`${a.id}:READ`]);
    expect(
      (await owner.send(new GetObjectCommand({ Bucket: name, Key: 'mine' }))).$metadata.httpStatusCode,
    ).toBe(200);
    // The bucket's owner may always delete what its bucket holds.
    await owner.send(new DeleteObjectCommand({ Bucket: name, Key: 'mine' }));
  });

  it('under BucketOwnerPreferred, bucket-owner-full-control hands the object to the bucket owner', async () => {
    const owner = await accountClient(a);
    const writer = await accountClient(b);
    const name = fresh('pref');
    await owner.send(new CreateBucketCommand({ Bucket: name, ObjectOwnership: 'BucketOwnerPreferred' }));
    await owner.send(new PutBucketAclCommand({ Bucket: name, GrantWrite: `id="${b.id}"` }));
    await writer.send(
      new PutObjectCommand({ Bucket: name, Key: 'given', Body: 'x', ACL: 'bucket-owner-full-control' }),
    );
    await writer.send(new PutObjectCommand({ Bucket: name, Key: 'kept', Body: 'y' }));
    const given = await owner.send(new GetObjectAclCommand({ Bucket: name, Key: 'given' }));
    expect(given.Owner?.ID).toBe(a.id);
    expect(summary(given.Grants)).toEqual([`${a.id}:FULL_CONTROL`]);
    const kept = await writer.send(new GetObjectAclCommand({ Bucket: name, Key: 'kept' }));
    expect(kept.Owner?.ID).toBe(b.id);
  });
});

describe("listings of a bucket holding another account's objects", () => {
  it("name each object's owner (fetch-owner, ListObjects, ListObjectVersions), not the bucket's", async () => {
    const owner = await accountClient(a);
    const writer = await accountClient(b);
    const name = fresh('owners');
    await owner.send(new CreateBucketCommand({ Bucket: name }));
    await owner.send(
      new PutBucketAclCommand({ Bucket: name, GrantWrite: `id="${b.id}"`, GrantRead: `id="${b.id}"` }),
    );
    await owner.send(new PutObjectCommand({ Bucket: name, Key: 'a-own', Body: 'x' }));
    await writer.send(new PutObjectCommand({ Bucket: name, Key: 'b-foreign', Body: 'y' }));
    const expected = [`a-own:${a.id}`, `b-foreign:${b.id}`];
    const owners = (list: { Key?: string; Owner?: { ID?: string } }[] | undefined) =>
      (list ?? []).map((o) => `${o.Key}:${o.Owner?.ID}`);

    const v2 = await owner.send(new ListObjectsV2Command({ Bucket: name, FetchOwner: true }));
    expect(owners(v2.Contents)).toEqual(expected);
    const plain = await owner.send(new ListObjectsV2Command({ Bucket: name }));
    expect(owners(plain.Contents)).toEqual([`a-own:undefined`, `b-foreign:undefined`]);
    expect(owners((await owner.send(new ListObjectsCommand({ Bucket: name }))).Contents)).toEqual(expected);
    expect(owners((await writer.send(new ListObjectsCommand({ Bucket: name }))).Contents)).toEqual(expected);
    const versions = await owner.send(new ListObjectVersionsCommand({ Bucket: name }));
    expect(owners(versions.Versions)).toEqual(expected);
  });
});

describe("an object another account owns, read by the bucket's owner", () => {
  it('keeps its tags and attributes from the bucket owner unless its ACL grants a read', async () => {
    const owner = await accountClient(a);
    const writer = await accountClient(b);
    const name = fresh('foreign-meta');
    await owner.send(new CreateBucketCommand({ Bucket: name }));
    await owner.send(new PutBucketAclCommand({ Bucket: name, GrantWrite: `id="${b.id}"` }));
    await writer.send(new PutObjectCommand({ Bucket: name, Key: 'mine', Body: 'b', Tagging: 'k=v' }));
    await writer.send(
      new PutObjectCommand({ Bucket: name, Key: 'shared', Body: 'both', ACL: 'bucket-owner-full-control' }),
    );
    const attributes = (Key: string) =>
      owner.send(new GetObjectAttributesCommand({ Bucket: name, Key, ObjectAttributes: ['ObjectSize'] }));
    await expect(
      owner.send(new GetObjectTaggingCommand({ Bucket: name, Key: 'mine' })),
    ).rejects.toMatchObject({
      name: 'AccessDenied',
    });
    await expect(attributes('mine')).rejects.toMatchObject({ name: 'AccessDenied' });
    // FULL_CONTROL opens reads of the object (its attributes), not its tags: no ACL grants those.
    expect((await attributes('shared')).ObjectSize).toBe(4);
    await expect(
      owner.send(new GetObjectTaggingCommand({ Bucket: name, Key: 'shared' })),
    ).rejects.toMatchObject({
      name: 'AccessDenied',
    });
    // The bucket owner's own objects are unchanged.
    await owner.send(new PutObjectCommand({ Bucket: name, Key: 'own', Body: 'a', Tagging: 'x=y' }));
    const own = await owner.send(new GetObjectTaggingCommand({ Bucket: name, Key: 'own' }));
    expect(own.TagSet).toEqual([{ Key: 'x', Value: 'y' }]);
  });
});
