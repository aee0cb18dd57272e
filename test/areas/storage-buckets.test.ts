import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageService } from '../../src/areas/storage/service.js';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let aKey: string;
let bKey: string;
let n = 0;
/** Bucket names are global and never reused, so every test takes fresh ones. */
const fresh = (stem = 'bkt') => `${stem}-${Date.now().toString(36)}-${(n++).toString(36)}`;

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer('alice@example.test', 'business');
  b = await t.customer('bob@example.test');
  aKey = (await t.kernel.identity.createServiceKey(a.id, 'storage', null)).key;
  bKey = (await t.kernel.identity.createServiceKey(b.id, 'storage', null)).key;
});
afterAll(() => t.close());

const create = (key: string, body: Record<string, unknown>) =>
  t.request('POST', '/v1/storage/buckets', { key, body });
const storage = () => t.fjord.areas.get('storage')!.service as StorageService;

describe('creating buckets', () => {
  it('answers with the spec fields, the endpoint and the default key’s secret once', async () => {
    const name = fresh();
    const r = await create(aKey, { bucket_name: name });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      success: true,
      bucket_name: name,
      message: expect.any(String),
      endpoint: 'http://127.0.0.1:9000',
      region: 'no',
      tier: 'standard',
      access_key: expect.stringMatching(/^[A-Z0-9]{20}$/),
      secret_key: expect.stringMatching(/^[A-Za-z0-9]{40}$/),
    });
    const keys = await t.request('GET', `/v1/storage/buckets/${name}/keys`, { key: aKey });
    expect(keys.body).toHaveLength(1);
    expect(keys.body[0]).toMatchObject({ name: 'default', is_default: true, access_key: r.body.access_key });
    expect(keys.body[0].secret_key).toBeUndefined();
    expect(JSON.stringify(keys.body)).not.toContain(r.body.secret_key);
  });

  it('shows the bucket with both field sets and usage from the data plane', async () => {
    const name = fresh();
    await create(aKey, { bucket_name: name, tier: 'enterprise', is_public: true });
    const r = await t.request('GET', `/v1/storage/buckets/${name}`, { key: aKey });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      bucket_name: name,
      storage_tier: 'enterprise',
      region: 'no',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      is_active: true,
      is_public: true,
      total_storage_gb: 0,
      total_objects: 0,
      name,
      size_bytes: 0,
      object_count: 0,
    });
  });

  it('accepts names of 3 and 63 characters of lowercase letters, digits and hyphens', async () => {
    const three = `${(n++ % 36).toString(36)}a${(Date.now() % 36).toString(36)}`;
    expect((await create(aKey, { bucket_name: three })).status).toBe(201);
    const long = `x${fresh('y')}`.padEnd(63, '0');
    expect(long).toHaveLength(63);
    expect((await create(aKey, { bucket_name: long })).status).toBe(201);
  });

  it.each([
    ['ab', 'too short'],
    ['a'.repeat(64), 'too long'],
    ['Upper-case', 'upper case'],
    ['under_score', 'underscore'],
    ['dot.ted', 'dot'],
    ['-leading', 'leading hyphen'],
    ['trailing-', 'trailing hyphen'],
    ['sp ace', 'space'],
  ])('refuses the name %s (%s) with 422', async (name) => {
    const r = await create(aKey, { bucket_name: name });
    expect(r.status).toBe(422);
    expect(r.body.detail.code).toBe('validation_error');
    expect(r.body.detail.errors[0].path).toBe('/body/bucket_name');
  });

  it('refuses a missing name, an unknown tier, a non-boolean is_public and unknown fields', async () => {
    expect((await create(aKey, {})).status).toBe(422);
    expect((await create(aKey, { bucket_name: fresh(), tier: 'gold' })).status).toBe(422);
    expect((await create(aKey, { bucket_name: fresh(), is_public: 'yes' })).status).toBe(422);
    expect((await create(aKey, { bucket_name: fresh(), colour: 'red' })).status).toBe(422);
  });

  it('takes region no, reports the legacy no-oslo-1 as no, and refuses others', async () => {
    const legacy = fresh();
    const r = await create(aKey, { bucket_name: legacy, region: 'no-oslo-1' });
    expect(r.status).toBe(201);
    expect(r.body.region).toBe('no');
    expect((await t.request('GET', `/v1/storage/buckets/${legacy}`, { key: aKey })).body.region).toBe('no');
    expect((await create(aKey, { bucket_name: fresh(), region: 'no' })).status).toBe(201);
    const bad = await create(aKey, { bucket_name: fresh(), region: 'oslo' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.errors[0].path).toBe('/body/region');
  });

  it('keeps names unique across customers, and never gives a deleted name out again', async () => {
    const name = fresh();
    expect((await create(aKey, { bucket_name: name })).status).toBe(201);
    const taken = await create(bKey, { bucket_name: name });
    expect(taken.status).toBe(409);
    expect(taken.body.detail.code).toBe('bucket_name_taken');
    expect((await create(aKey, { bucket_name: name })).status).toBe(409);

    expect((await t.request('DELETE', `/v1/storage/buckets/${name}`, { key: aKey })).status).toBe(200);
    for (const key of [aKey, bKey]) {
      const again = await create(key, { bucket_name: name });
      expect(again.status).toBe(409);
      expect(again.body.detail.code).toBe('bucket_name_unavailable');
    }
  });

  it('replays a creation with the same Idempotency-Key instead of making a second key', async () => {
    const name = fresh();
    const send = () =>
      t.request('POST', '/v1/storage/buckets', {
        key: aKey,
        body: { bucket_name: name },
        headers: { 'idempotency-key': `create-${name}` },
      });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    const keys = await t.request('GET', `/v1/storage/buckets/${name}/keys`, { key: aKey });
    expect(keys.body).toHaveLength(1);
  });

  it('uses FJORD_S3_PUBLIC_URL as the endpoint and FJORD_S3_BASE_DOMAIN for virtual hosts when set', async () => {
    const other = await TestFjord.create({
      FJORD_S3_PUBLIC_URL: 'https://s3.example.test/',
      FJORD_S3_BASE_DOMAIN: 's3.example.test',
    });
    try {
      const c = await other.customer();
      const r = await other.request('POST', '/v1/storage/buckets', {
        key: c.pat,
        body: { bucket_name: fresh() },
      });
      expect(r.body.endpoint).toBe('https://s3.example.test');
      const guide = await other.request('GET', '/storage/s3');
      expect(guide.body.endpoint).toBe('https://s3.example.test');
      expect(guide.body.addressing.virtual_host_style).toBe('https://<bucket>.s3.example.test/<key>');
    } finally {
      await other.close();
    }
  });
});

describe('listing buckets', () => {
  it('answers an empty array for a customer without buckets', async () => {
    const c = await t.customer();
    const r = await t.request('GET', '/v1/storage/buckets', { key: c.pat });
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
  });

  it('lists the customer’s own buckets oldest first, and the older {buckets, total} form on pagination', async () => {
    const c = await t.customer();
    const names = [fresh('l'), fresh('l'), fresh('l')];
    for (const name of names) await create(c.pat, { bucket_name: name });
    const r = await t.request('GET', '/v1/storage/buckets', { key: c.pat });
    expect(r.body.map((x: { bucket_name: string }) => x.bucket_name)).toEqual(names);
    const older = await t.request('GET', '/v1/storage/buckets', {
      key: c.pat,
      query: { page: '2', per_page: '2' },
    });
    expect(older.status).toBe(200);
    expect(older.body.total).toBe(3);
    expect(older.body.buckets.map((x: { name: string }) => x.name)).toEqual([names[2]]);
    const bad = await t.request('GET', '/v1/storage/buckets', { key: c.pat, query: { per_page: '0' } });
    expect(bad.status).toBe(422);
  });

  it('lists buckets among the account’s services', async () => {
    const c = await t.customer();
    const name = fresh();
    await create(c.pat, { bucket_name: name });
    const r = await t.request('GET', '/v1/account/services', { key: c.pat });
    expect(r.body).toEqual([
      expect.objectContaining({
        service_type: 'storage',
        name,
        region: 'no',
        api: expect.objectContaining({ kind: 's3', base_url: 'http://127.0.0.1:9000' }),
      }),
    ]);
  });
});

describe('deleting buckets', () => {
  it('deletes an empty bucket; its keys stop working at once', async () => {
    const name = fresh();
    const made = await create(aKey, { bucket_name: name });
    const directory = storage().directory!;
    expect(await directory.findAccessKey(made.body.access_key)).not.toBeNull();
    const r = await t.request('DELETE', `/v1/storage/buckets/${name}`, { key: aKey });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: expect.any(String) });
    expect(await directory.findAccessKey(made.body.access_key)).toBeNull();
    expect(await directory.findBucket(name)).toBeNull();
    expect((await t.request('GET', `/v1/storage/buckets/${name}`, { key: aKey })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/storage/buckets/${name}`, { key: aKey })).status).toBe(404);
  });

  it('answers 404 for an unknown bucket', async () => {
    const r = await t.request('DELETE', '/v1/storage/buckets/never-made-here', { key: aKey });
    expect(r.status).toBe(404);
    expect(r.body.detail.code).toBe('bucket_not_found');
  });
});

describe('visibility', () => {
  it('makes a bucket public and private again', async () => {
    const name = fresh();
    await create(aKey, { bucket_name: name });
    const r = await t.request('PATCH', `/v1/storage/buckets/${name}/visibility`, {
      key: aKey,
      body: { is_public: true },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      bucket_name: name,
      is_public: true,
      message: expect.any(String),
    });
    expect((await t.request('GET', `/v1/storage/buckets/${name}`, { key: aKey })).body.is_public).toBe(true);
    expect((await storage().directory!.findBucket(name))?.isPublic).toBe(true);
    await t.request('PATCH', `/v1/storage/buckets/${name}/visibility`, {
      key: aKey,
      body: { is_public: false },
    });
    expect((await storage().directory!.findBucket(name))?.isPublic).toBe(false);
  });

  it('requires a boolean is_public', async () => {
    const name = fresh();
    await create(aKey, { bucket_name: name });
    for (const body of [{}, { is_public: 'true' }, { is_public: null }]) {
      const r = await t.request('PATCH', `/v1/storage/buckets/${name}/visibility`, { key: aKey, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
    }
  });
});

describe('catalogues and the S3 guide', () => {
  it('lists the S3 actions with their scope', async () => {
    const r = await t.request('GET', '/v1/storage/actions', { key: aKey });
    expect(r.status).toBe(200);
    const byName = new Map(r.body.map((x: { action: string }) => [x.action, x]));
    expect(byName.get('s3:GetObject')).toMatchObject({ scope: 'bucket', category: 'read' });
    expect(byName.get('s3:PutObject')).toMatchObject({ scope: 'bucket', category: 'write' });
    expect(byName.get('s3:CreateBucket')).toMatchObject({ scope: 'account' });
    expect(byName.get('s3:ListAllMyBuckets')).toMatchObject({ scope: 'account' });
  });

  it('lists the tiers', async () => {
    const r = await t.request('GET', '/v1/storage/tiers', { key: aKey });
    expect(r.body.map((x: { tier: string }) => x.tier)).toEqual(['standard', 'enterprise']);
    expect(r.body.filter((x: { is_default: boolean }) => x.is_default)).toHaveLength(1);
  });

  it('serves the usage guide without credentials, with the endpoint, region and four clients', async () => {
    const r = await t.request('GET', '/storage/s3');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-north-1',
      storage_region: 'no',
      addressing: { path_style: 'http://127.0.0.1:9000/<bucket>/<key>', virtual_host_style: null },
    });
    expect(r.body.accepted_signing_regions).toContain('us-east-1');
    const clients = r.body.examples.map((e: { client: string }) => e.client);
    expect(clients).toEqual(['aws-cli', 's3cmd', 'rclone', 'aws-sdk-js']);
    const code = (c: string) =>
      r.body.examples.find((e: { client: string }) => e.client === c).code as string;
    expect(code('aws-cli')).toContain('signature_version = s3v4');
    expect(code('aws-cli')).toContain('--endpoint-url http://127.0.0.1:9000');
    expect(code('s3cmd')).toContain('host_base = 127.0.0.1:9000');
    expect(code('rclone')).toContain('force_path_style = true');
    expect(code('aws-sdk-js')).toContain("region: 'eu-north-1'");
  });
});

describe('access', () => {
  it('takes a storage service key or a PAT with storage:read / storage:write', async () => {
    const name = fresh();
    await create(aKey, { bucket_name: name });
    const reader = await t.kernel.identity.createPat(a.id, ['storage:read'], 'reader');
    const writer = await t.kernel.identity.createPat(a.id, ['storage:write'], 'writer');
    expect((await t.request('GET', `/v1/storage/buckets/${name}`, { key: reader.key })).status).toBe(200);
    const refused = await create(reader.key, { bucket_name: fresh() });
    expect(refused.status).toBe(403);
    expect((await create(writer.key, { bucket_name: fresh() })).status).toBe(201);
    expect((await t.request('GET', `/v1/storage/buckets/${name}`, { key: writer.key })).status).toBe(200);
    const dns = await t.kernel.identity.createServiceKey(a.id, 'dns', null);
    expect((await t.request('GET', '/v1/storage/buckets', { key: dns.key })).status).toBe(403);
  });

  it('draws on the storage rate limit (1000 per minute plus a burst of 100)', async () => {
    const r = await t.request('GET', '/v1/storage/buckets', { key: aKey });
    expect(Number(r.headers['x-ratelimit-limit'])).toBe(1000);
    expect(r.headers['x-ratelimit-remaining']).toBeDefined();
  });

  it('hides every bucket route of one customer from another (404)', async () => {
    const name = fresh();
    await create(aKey, { bucket_name: name });
    const keys = await t.request('GET', `/v1/storage/buckets/${name}/keys`, { key: aKey });
    const keyId = keys.body[0].id;
    await t.request('PUT', `/v1/storage/buckets/${name}/cors`, {
      key: aKey,
      body: { rules: [{ allowed_origins: ['*'], allowed_methods: ['GET'] }] },
    });
    await t.request('PUT', `/v1/storage/buckets/${name}/lifecycle`, {
      key: aKey,
      body: { rules: [{ expiration_days: 30 }] },
    });
    const base = `/v1/storage/buckets/${name}`;
    await expectTenantIsolation(t, { key: aKey }, { key: bKey }, [
      { method: 'GET', url: base },
      { method: 'PATCH', url: `${base}/visibility`, body: { is_public: true } },
      { method: 'GET', url: `${base}/keys` },
      { method: 'POST', url: `${base}/keys`, body: { name: 'x' } },
      { method: 'PATCH', url: `${base}/keys/${keyId}`, body: { name: 'x' } },
      { method: 'DELETE', url: `${base}/keys/${keyId}` },
      { method: 'GET', url: `${base}/cors` },
      {
        method: 'PUT',
        url: `${base}/cors`,
        body: { rules: [{ allowed_origins: ['*'], allowed_methods: ['PUT'] }] },
      },
      { method: 'DELETE', url: `${base}/cors` },
      { method: 'GET', url: `${base}/lifecycle` },
      { method: 'PUT', url: `${base}/lifecycle`, body: { rules: [{ expiration_days: 1 }] } },
      { method: 'DELETE', url: `${base}/lifecycle` },
      { method: 'GET', url: `${base}/versioning` },
      { method: 'PUT', url: `${base}/versioning`, body: { status: 'Enabled' } },
      { method: 'GET', url: `${base}/object-lock` },
      { method: 'DELETE', url: base },
    ]);
    const bList = await t.request('GET', '/v1/storage/buckets', { key: bKey });
    expect(bList.body.map((x: { name: string }) => x.name)).not.toContain(name);
    const still = await t.request('GET', `${base}/cors`, { key: aKey });
    expect(still.body.rules[0].allowed_methods).toEqual(['GET']);
    expect((await t.request('GET', base, { key: aKey })).body.is_public).toBe(false);
  });

  it('answers 401/403 on every storage route as the auth matrix says', async () => {
    await expectAuthMatrix(t, 'Storage');
  });
});
