import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectAclCommand,
  ListMultipartUploadsCommand,
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
  it('names that account as its Initiator, and the bucket owner as its Owner', async () => {
    const owner = await accountClient(a);
    const writer = await accountClient(b);
    const name = fresh('init');
    await owner.send(new CreateBucketCommand({ Bucket: name }));
    await owner.send(new PutBucketAclCommand({ Bucket: name, GrantWrite: `id="${b.id}"` }));
    await writer.send(new CreateMultipartUploadCommand({ Bucket: name, Key: 'big' }));
    await owner.send(new CreateMultipartUploadCommand({ Bucket: name, Key: 'own' }));
    const list = await owner.send(new ListMultipartUploadsCommand({ Bucket: name }));
    const byKey = Object.fromEntries((list.Uploads ?? []).map((u) => [u.Key, u]));
    expect(byKey['big']?.Initiator?.ID).toBe(b.id);
    expect(byKey['big']?.Owner?.ID).toBe(a.id);
    expect(byKey['own']?.Initiator?.ID).toBe(a.id);
  });
});
