import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BUCKET_ACTIONS } from '../../src/areas/storage/catalogue.js';
import type { StorageService } from '../../src/areas/storage/service.js';
import { expectTenantIsolation } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let aKey: string;
let bKey: string;
let n = 0;
const fresh = (stem = 'key') => `${stem}-${Date.now().toString(36)}-${(n++).toString(36)}`;

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer('alice@example.test', 'business');
  b = await t.customer('bob@example.test');
  aKey = (await t.kernel.identity.createServiceKey(a.id, 'storage', null)).key;
  bKey = (await t.kernel.identity.createServiceKey(b.id, 'storage', null)).key;
});
afterAll(() => t.close());

const directory = () => (t.fjord.areas.get('storage')!.service as StorageService).directory!;
async function bucket(key = aKey) {
  const name = fresh('b');
  const r = await t.request('POST', '/v1/storage/buckets', { key, body: { bucket_name: name } });
  expect(r.status).toBe(201);
  return { name, accessKey: r.body.access_key as string, secret: r.body.secret_key as string };
}
const keysUrl = (name: string) => `/v1/storage/buckets/${name}/keys`;

describe('bucket keys', () => {
  it('creates a full-access key when actions are omitted; its secret works for SigV4 through the directory', async () => {
    const { name } = await bucket();
    const r = await t.request('POST', keysUrl(name), {
      key: aKey,
      body: { name: 'ci', description: 'deploys' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      name: 'ci',
      description: 'deploys',
      access_key: expect.stringMatching(/^[A-Z0-9]{20}$/),
      actions: [...BUCKET_ACTIONS],
      full_access: true,
      created_at: expect.any(String),
      secret_key: expect.stringMatching(/^[A-Za-z0-9]{40}$/),
      endpoint: 'http://127.0.0.1:9000',
    });
    const record = await directory().findAccessKey(r.body.access_key);
    expect(record).toMatchObject({
      secretKey: r.body.secret_key,
      customerId: a.id,
      customerDisplayName: 'Test User',
      kind: 'bucket',
      grants: [{ bucket: name, actions: 'all' }],
      mayCreateBuckets: false,
    });
  });

  it('keeps the secret encrypted at rest', async () => {
    const { secret, accessKey } = await bucket();
    const row = await t.kernel.store.db
      .selectFrom('storage_keys')
      .selectAll()
      .where('access_key_id', '=', accessKey)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(row.secret_sealed).toMatch(/^v1\./);
  });

  it('creates a key limited to the named actions, and refuses unknown or account-level ones', async () => {
    const { name } = await bucket();
    const r = await t.request('POST', keysUrl(name), {
      key: aKey,
      body: { name: 'reader', actions: ['s3:ListBucket', 's3:GetObject', 's3:GetObject'] },
    });
    expect(r.status).toBe(201);
    expect(r.body.full_access).toBe(false);
    expect(r.body.actions).toEqual(['s3:ListBucket', 's3:GetObject']);
    expect((await directory().findAccessKey(r.body.access_key))?.grants).toEqual([
      { bucket: name, actions: ['s3:ListBucket', 's3:GetObject'] },
    ]);
    const unknown = await t.request('POST', keysUrl(name), {
      key: aKey,
      body: { name: 'x', actions: ['s3:GetObject', 's3:Teleport'] },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail.errors[0].path).toBe('/body/actions/1');
    const account = await t.request('POST', keysUrl(name), {
      key: aKey,
      body: { name: 'x', actions: ['s3:CreateBucket'] },
    });
    expect(account.status).toBe(422);
    for (const body of [
      { name: 'x', actions: [] },
      { name: '' },
      { name: '   ' },
      {},
      { name: 'x', extra: 1 },
    ]) {
      const bad = await t.request('POST', keysUrl(name), { key: aKey, body });
      expect(bad.status, JSON.stringify(body)).toBe(422);
    }
  });

  it('lists keys without secrets, default first', async () => {
    const { name } = await bucket();
    const made = await t.request('POST', keysUrl(name), { key: aKey, body: { name: 'second' } });
    const r = await t.request('GET', keysUrl(name), { key: aKey });
    expect(r.body.map((k: { name: string }) => k.name)).toEqual(['default', 'second']);
    expect(r.body[1]).toEqual({
      id: made.body.id,
      name: 'second',
      description: null,
      access_key: made.body.access_key,
      actions: [...BUCKET_ACTIONS],
      full_access: true,
      is_default: false,
      created_at: made.body.created_at,
      last_used_at: null,
    });
    expect(JSON.stringify(r.body)).not.toContain(made.body.secret_key);
  });

  it('replaces the grants on PATCH with actions, restores full access with null, and renames', async () => {
    const { name } = await bucket();
    const made = await t.request('POST', keysUrl(name), {
      key: aKey,
      body: { name: 'k', actions: ['s3:GetObject'] },
    });
    const changed: string[] = [];
    directory().onAccessKeyChanged((id) => changed.push(id));
    const url = `${keysUrl(name)}/${made.body.id}`;
    const r = await t.request('PATCH', url, { key: aKey, body: { actions: ['s3:PutObject'] } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      name: 'k',
      actions: ['s3:PutObject'],
      full_access: false,
      is_default: false,
    });
    // On PostgreSQL the notice comes back through LISTEN/NOTIFY, a moment later.
    await vi.waitFor(() => expect(changed).toContain(made.body.access_key), { timeout: 10_000 });
    expect((await directory().findAccessKey(made.body.access_key))?.grants).toEqual([
      { bucket: name, actions: ['s3:PutObject'] },
    ]);
    const renamed = await t.request('PATCH', url, { key: aKey, body: { name: 'renamed', description: 'd' } });
    expect(renamed.body).toMatchObject({ name: 'renamed', description: 'd', actions: ['s3:PutObject'] });
    const full = await t.request('PATCH', url, { key: aKey, body: { actions: null } });
    expect(full.body).toMatchObject({ full_access: true, actions: [...BUCKET_ACTIONS] });
    expect((await t.request('PATCH', url, { key: aKey, body: { actions: ['nope'] } })).status).toBe(422);
    expect(
      (await t.request('PATCH', `${keysUrl(name)}/unknown`, { key: aKey, body: { name: 'x' } })).status,
    ).toBe(404);
  });

  it('deletes a key (it stops at once) but never the default key', async () => {
    const { name, accessKey } = await bucket();
    const keys = await t.request('GET', keysUrl(name), { key: aKey });
    const refused = await t.request('DELETE', `${keysUrl(name)}/${keys.body[0].id}`, { key: aKey });
    expect(refused.status).toBe(409);
    expect(refused.body.detail.code).toBe('default_key_undeletable');
    expect(await directory().findAccessKey(accessKey)).not.toBeNull();

    const made = await t.request('POST', keysUrl(name), { key: aKey, body: { name: 'temp' } });
    const r = await t.request('DELETE', `${keysUrl(name)}/${made.body.id}`, { key: aKey });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: expect.any(String) });
    expect(await directory().findAccessKey(made.body.access_key)).toBeNull();
    expect((await t.request('DELETE', `${keysUrl(name)}/${made.body.id}`, { key: aKey })).status).toBe(404);
  });

  it('does not reach a key through another bucket’s path', async () => {
    const one = await bucket();
    const two = await bucket();
    const made = await t.request('POST', keysUrl(one.name), { key: aKey, body: { name: 'k' } });
    expect(
      (await t.request('PATCH', `${keysUrl(two.name)}/${made.body.id}`, { key: aKey, body: { name: 'x' } }))
        .status,
    ).toBe(404);
    expect((await t.request('DELETE', `${keysUrl(two.name)}/${made.body.id}`, { key: aKey })).status).toBe(
      404,
    );
  });

  it('records the last use the data plane reports', async () => {
    const { name, accessKey } = await bucket();
    await directory().recordKeyUse!(accessKey);
    const keys = await t.request('GET', keysUrl(name), { key: aKey });
    expect(keys.body[0].last_used_at).toMatch(/^\d{4}-/);
  });
});

describe('account keys', () => {
  it('creates a key over several buckets with actions per bucket and account-level actions', async () => {
    const one = await bucket();
    const two = await bucket();
    const r = await t.request('POST', '/v1/storage/keys', {
      key: aKey,
      body: {
        name: 'deployer',
        actions: ['s3:CreateBucket', 's3:ListAllMyBuckets'],
        buckets: [{ bucket_name: one.name, actions: ['s3:GetObject'] }, { bucket_name: two.name }],
      },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      name: 'deployer',
      description: null,
      access_key: expect.stringMatching(/^[A-Z0-9]{20}$/),
      actions: ['s3:ListAllMyBuckets', 's3:CreateBucket'],
      buckets: [
        { bucket_name: one.name, actions: ['s3:GetObject'], full_access: false },
        { bucket_name: two.name, actions: [...BUCKET_ACTIONS], full_access: true },
      ],
      created_at: expect.any(String),
      secret_key: expect.stringMatching(/^[A-Za-z0-9]{40}$/),
      endpoint: 'http://127.0.0.1:9000',
    });
    expect(await directory().findAccessKey(r.body.access_key)).toMatchObject({
      kind: 'account',
      secretKey: r.body.secret_key,
      mayCreateBuckets: true,
      grants: [
        { bucket: one.name, actions: ['s3:GetObject'] },
        { bucket: two.name, actions: 'all' },
      ],
    });
    const got = await t.request('GET', `/v1/storage/keys/${r.body.id}`, { key: aKey });
    expect(got.status).toBe(200);
    expect(got.body.secret_key).toBeUndefined();
    expect(got.body.last_used_at).toBeNull();
    const list = await t.request('GET', '/v1/storage/keys', { key: aKey });
    expect(list.body.map((k: { id: string }) => k.id)).toContain(r.body.id);
    expect(JSON.stringify(list.body)).not.toContain(r.body.secret_key);
  });

  it('refuses grants on unknown or other customers’ buckets, duplicates and misplaced actions', async () => {
    const mine = await bucket();
    const theirs = await bucket(bKey);
    const cases = [
      { buckets: [{ bucket_name: 'no-such-bucket-here' }] },
      { buckets: [{ bucket_name: theirs.name }] },
      { buckets: [{ bucket_name: mine.name }, { bucket_name: mine.name }] },
      { buckets: [{ bucket_name: mine.name, actions: ['s3:CreateBucket'] }] },
      { actions: ['s3:GetObject'] },
      { buckets: [{ bucket_name: mine.name, actions: [] }] },
    ];
    for (const extra of cases) {
      const r = await t.request('POST', '/v1/storage/keys', { key: aKey, body: { name: 'x', ...extra } });
      expect(r.status, JSON.stringify(extra)).toBe(422);
    }
    const star = await t.request('POST', '/v1/storage/keys', {
      key: aKey,
      body: { name: 'all', buckets: [{ bucket_name: '*', actions: ['s3:ListBucket'] }] },
    });
    expect(star.status).toBe(201);
  });

  it('replaces actions and bucket grants on PATCH, and deletes', async () => {
    const one = await bucket();
    const made = await t.request('POST', '/v1/storage/keys', {
      key: aKey,
      body: { name: 'k', buckets: [{ bucket_name: one.name }] },
    });
    const url = `/v1/storage/keys/${made.body.id}`;
    const r = await t.request('PATCH', url, {
      key: aKey,
      body: {
        name: 'k2',
        actions: ['s3:CreateBucket'],
        buckets: [{ bucket_name: '*', actions: ['s3:GetObject'] }],
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      name: 'k2',
      actions: ['s3:CreateBucket'],
      buckets: [{ bucket_name: '*', actions: ['s3:GetObject'], full_access: false }],
    });
    expect((await directory().findAccessKey(made.body.access_key))?.grants).toEqual([
      { bucket: '*', actions: ['s3:GetObject'] },
    ]);
    const del = await t.request('DELETE', url, { key: aKey });
    expect(del.body).toEqual({ success: true, message: expect.any(String) });
    expect(await directory().findAccessKey(made.body.access_key)).toBeNull();
    expect((await t.request('GET', url, { key: aKey })).status).toBe(404);
  });

  it('loses its grant on a bucket when the bucket is deleted', async () => {
    const one = await bucket();
    const two = await bucket();
    const made = await t.request('POST', '/v1/storage/keys', {
      key: aKey,
      body: { name: 'k', buckets: [{ bucket_name: one.name }, { bucket_name: two.name }] },
    });
    await t.request('DELETE', `/v1/storage/buckets/${one.name}`, { key: aKey });
    const got = await t.request('GET', `/v1/storage/keys/${made.body.id}`, { key: aKey });
    expect(got.body.buckets.map((g: { bucket_name: string }) => g.bucket_name)).toEqual([two.name]);
  });

  it('is invisible to other customers', async () => {
    const made = await t.request('POST', '/v1/storage/keys', { key: aKey, body: { name: 'private' } });
    const url = `/v1/storage/keys/${made.body.id}`;
    await expectTenantIsolation(t, { key: aKey }, { key: bKey }, [
      { method: 'GET', url },
      { method: 'PATCH', url, body: { name: 'stolen' } },
      { method: 'DELETE', url },
    ]);
    const list = await t.request('GET', '/v1/storage/keys', { key: bKey });
    expect(list.body.map((k: { id: string }) => k.id)).not.toContain(made.body.id);
  });
});

describe('the older credentials form', () => {
  it('hands out one account key with every right, the same on every call, listed among the keys', async () => {
    const c = await t.customer();
    const first = await t.request('GET', '/v1/storage/credentials', { key: c.pat });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      access_key_id: expect.stringMatching(/^[A-Z0-9]{20}$/),
      secret_access_key: expect.stringMatching(/^[A-Za-z0-9]{40}$/),
      endpoint_url: 'http://127.0.0.1:9000',
      region: 'eu-north-1',
    });
    const second = await t.request('GET', '/v1/storage/credentials', { key: c.pat });
    expect(second.body).toEqual(first.body);
    expect(await directory().findAccessKey(first.body.access_key_id)).toMatchObject({
      customerId: c.id,
      grants: [{ bucket: '*', actions: 'all' }],
      mayCreateBuckets: true,
      secretKey: first.body.secret_access_key,
    });
    const keys = await t.request('GET', '/v1/storage/keys', { key: c.pat });
    expect(keys.body.map((k: { access_key: string }) => k.access_key)).toEqual([first.body.access_key_id]);
    const reader = await t.kernel.identity.createPat(c.id, ['storage:read'], null);
    expect((await t.request('GET', '/v1/storage/credentials', { key: reader.key })).status).toBe(403);
    // Deleting the key rotates it.
    await t.request('DELETE', `/v1/storage/keys/${keys.body[0].id}`, { key: c.pat });
    const third = await t.request('GET', '/v1/storage/credentials', { key: c.pat });
    expect(third.body.access_key_id).not.toBe(first.body.access_key_id);
  });
});

describe('the directory the S3 data plane uses', () => {
  it('creates a bucket through S3 for an account key, which gets full access to it', async () => {
    const made = await t.request('POST', '/v1/storage/keys', {
      key: aKey,
      body: { name: 'creator', actions: ['s3:CreateBucket'] },
    });
    const name = fresh('s3');
    const record = await directory().createBucketViaS3(a.id, name, 'eu-north-1', made.body.access_key);
    expect(record).toMatchObject({
      name,
      customerId: a.id,
      region: 'no',
      versioning: 'Unversioned',
      isPublic: false,
    });
    const key = await directory().findAccessKey(made.body.access_key);
    expect(key?.grants).toEqual([{ bucket: name, actions: 'all' }]);
    const listed = await t.request('GET', '/v1/storage/buckets', { key: aKey });
    expect(listed.body.map((x: { name: string }) => x.name)).toContain(name);
    await expect(directory().createBucketViaS3(b.id, name, '')).rejects.toMatchObject({
      code: 'bucket_name_taken',
    });
    await expect(directory().createBucketViaS3(a.id, fresh('s3'), 'mars-1')).rejects.toMatchObject({
      kind: 'invalid',
    });
    await expect(directory().createBucketViaS3(a.id, 'Bad_Name', '')).rejects.toMatchObject({
      kind: 'invalid',
    });
    expect((await directory().listBuckets(a.id)).map((x) => x.name)).toContain(name);
    expect(await directory().listBuckets(b.id)).not.toContainEqual(expect.objectContaining({ name }));

    await directory().deleteBucketViaS3(a.id, name);
    expect(await directory().findBucket(name)).toBeNull();
  });

  it('writes CORS, versioning and lifecycle through S3 into the same documents the API shows', async () => {
    const { name } = await bucket();
    const buckets: string[] = [];
    directory().onBucketChanged((x) => buckets.push(x));
    await directory().putCors(name, [
      {
        allowed_origins: ['https://app.example.com'],
        allowed_methods: ['GET', 'PUT'],
        allowed_headers: ['*'],
        expose_headers: ['ETag'],
        max_age_seconds: 600,
      },
    ]);
    const cors = await t.request('GET', `/v1/storage/buckets/${name}/cors`, { key: aKey });
    expect(cors.body.rules[0]).toMatchObject({
      allowed_methods: ['GET', 'PUT'],
      expose_headers: ['ETag'],
      max_age_seconds: 600,
    });
    // S3's PutBucketCors takes AWS's origins (at most one wildcard), not only scheme://host.
    await expect(
      directory().putCors(name, [
        {
          allowed_origins: ['https://*.x.test/*'],
          allowed_methods: ['GET'],
          allowed_headers: [],
          expose_headers: [],
          max_age_seconds: null,
        },
      ]),
    ).rejects.toMatchObject({ kind: 'invalid' });
    await directory().deleteCors(name);
    expect((await t.request('GET', `/v1/storage/buckets/${name}/cors`, { key: aKey })).status).toBe(404);

    await directory().putVersioning(name, 'Enabled');
    expect(
      (await t.request('GET', `/v1/storage/buckets/${name}/versioning`, { key: aKey })).body.status,
    ).toBe('Enabled');
    await directory().putLifecycle(name, [
      {
        id: 'tmp',
        enabled: true,
        prefix: 'tmp/',
        expiration_days: 1,
        noncurrent_version_expiration_days: null,
        abort_incomplete_multipart_upload_days: null,
      },
    ]);
    expect((await directory().findBucket(name))?.lifecycle?.[0]).toMatchObject({ id: 'tmp', prefix: 'tmp/' });
    await directory().putLifecycle(name, null);
    expect((await directory().findBucket(name))?.lifecycle).toBeNull();
    await vi.waitFor(() => expect(buckets.filter((x) => x === name).length).toBeGreaterThanOrEqual(5), {
      timeout: 10_000,
    });
  });

  it('stops the keys of a suspended customer', async () => {
    const c = await t.customer();
    const made = await t.request('POST', '/v1/storage/buckets', {
      key: c.pat,
      body: { bucket_name: fresh('susp') },
    });
    expect(await directory().findAccessKey(made.body.access_key)).not.toBeNull();
    await t.kernel.identity.setCustomerStatus(c.id, 'suspended');
    expect(await directory().findAccessKey(made.body.access_key)).toBeNull();
  });

  it('knows nothing of unknown keys and buckets', async () => {
    expect(await directory().findAccessKey('FJAAAAAAAAAAAAAAAAAA')).toBeNull();
    expect(await directory().findBucket('no-such-bucket-anywhere')).toBeNull();
  });
});

describe('documents written through S3 follow the API’s rules', () => {
  it('refuses empty and oversized CORS and lifecycle documents', async () => {
    const { name } = await bucket();
    await expect(directory().putCors(name, [])).rejects.toMatchObject({ kind: 'invalid' });
    const corsRule = {
      allowed_origins: ['*'],
      allowed_methods: ['GET'],
      allowed_headers: [],
      expose_headers: [],
      max_age_seconds: null,
    };
    await expect(
      directory().putCors(
        name,
        Array.from({ length: 101 }, () => corsRule),
      ),
    ).rejects.toMatchObject({
      kind: 'invalid',
    });
    await expect(
      directory().putCors(name, [{ ...corsRule, allowed_methods: ['PATCH'] }]),
    ).rejects.toMatchObject({
      kind: 'invalid',
    });
    await expect(directory().putCors(name, [{ ...corsRule, max_age_seconds: 86401 }])).rejects.toMatchObject({
      kind: 'invalid',
    });
    await expect(directory().putLifecycle(name, [])).rejects.toMatchObject({ kind: 'invalid' });
    const lifecycleRule = {
      id: 'r',
      enabled: true,
      prefix: '',
      expiration_days: 0,
      noncurrent_version_expiration_days: null,
      abort_incomplete_multipart_upload_days: null,
    };
    await expect(directory().putLifecycle(name, [lifecycleRule])).rejects.toMatchObject({ kind: 'invalid' });
    expect((await directory().findBucket(name))?.cors).toBeNull();
    expect((await directory().findBucket(name))?.lifecycle).toBeNull();
  });
});
