import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageService } from '../../src/areas/storage/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
let aKey: string;
let n = 0;
const fresh = (stem = 'cfg') => `${stem}-${Date.now().toString(36)}-${(n++).toString(36)}`;

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer();
  aKey = (await t.kernel.identity.createServiceKey(a.id, 'storage', null)).key;
});
afterAll(() => t.close());

async function bucket(body: Record<string, unknown> = {}) {
  const name = fresh();
  const r = await t.request('POST', '/v1/storage/buckets', {
    key: aKey,
    body: { bucket_name: name, ...body },
  });
  expect(r.status).toBe(201);
  return name;
}
const directory = () => (t.fjord.areas.get('storage')!.service as StorageService).directory!;
const rule = (over: Record<string, unknown> = {}) => ({
  allowed_origins: ['https://app.example.com'],
  allowed_methods: ['GET'],
  ...over,
});

describe('CORS', () => {
  it('answers 404 until a document is set, then the document, then 404 after DELETE', async () => {
    const name = await bucket();
    const url = `/v1/storage/buckets/${name}/cors`;
    const none = await t.request('GET', url, { key: aKey });
    expect(none.status).toBe(404);
    expect(none.body.detail.code).toBe('cors_not_found');
    const put = await t.request('PUT', url, {
      key: aKey,
      body: {
        rules: [
          {
            id: 'web',
            allowed_origins: ['https://app.example.com', 'http://localhost:3000', '*'],
            allowed_methods: ['GET', 'PUT', 'HEAD', 'POST', 'DELETE', 'OPTIONS'],
            allowed_headers: ['Content-Type', '*'],
            expose_headers: ['ETag'],
            max_age_seconds: 86400,
          },
          rule({ max_age_seconds: 0 }),
        ],
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.rules[0]).toEqual({
      id: 'web',
      allowed_origins: ['https://app.example.com', 'http://localhost:3000', '*'],
      allowed_methods: ['GET', 'PUT', 'HEAD', 'POST', 'DELETE', 'OPTIONS'],
      allowed_headers: ['Content-Type', '*'],
      expose_headers: ['ETag'],
      max_age_seconds: 86400,
    });
    expect(put.body.rules[1]).toEqual({
      id: expect.any(String),
      allowed_origins: ['https://app.example.com'],
      allowed_methods: ['GET'],
      allowed_headers: [],
      expose_headers: [],
      max_age_seconds: 0,
    });
    const got = await t.request('GET', url, { key: aKey });
    expect(got.body).toEqual(put.body);
    expect((await directory().findBucket(name))?.cors).toHaveLength(2);

    const replaced = await t.request('PUT', url, { key: aKey, body: { rules: [rule()] } });
    expect(replaced.body.rules).toHaveLength(1);
    expect(replaced.body.rules[0].max_age_seconds).toBeNull();

    const del = await t.request('DELETE', url, { key: aKey });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await t.request('GET', url, { key: aKey })).status).toBe(404);
    expect((await t.request('DELETE', url, { key: aKey })).status).toBe(204);
    expect((await directory().findBucket(name))?.cors).toBeNull();
  });

  it('takes at most 100 rules', async () => {
    const name = await bucket();
    const url = `/v1/storage/buckets/${name}/cors`;
    const hundred = Array.from({ length: 100 }, () => rule());
    expect((await t.request('PUT', url, { key: aKey, body: { rules: hundred } })).status).toBe(200);
    const r = await t.request('PUT', url, { key: aKey, body: { rules: [...hundred, rule()] } });
    expect(r.status).toBe(422);
    expect(r.body.detail.errors[0].path).toBe('/body/rules');
  });

  it.each([
    ['https://app.example.com/', 'trailing slash'],
    ['https://app.example.com/path', 'path'],
    ['https://app.example.com?x=1', 'query'],
    ['app.example.com', 'no scheme'],
    ['https://user@app.example.com', 'credentials'],
    ['https://app.example.com:99999', 'bad port'],
    ['*.example.com', 'bare wildcard'],
    ['', 'empty'],
  ])('refuses the origin %j (%s)', async (origin) => {
    const name = await bucket();
    const r = await t.request('PUT', `/v1/storage/buckets/${name}/cors`, {
      key: aKey,
      body: { rules: [rule({ allowed_origins: ['https://ok.example.com', origin] })] },
    });
    expect(r.status).toBe(422);
    expect(r.body.detail.errors[0].path).toMatch(/^\/body\/rules\/0\/allowed_origins/);
  });

  it('accepts origins with ports, IPv6 hosts and any scheme', async () => {
    const name = await bucket();
    const r = await t.request('PUT', `/v1/storage/buckets/${name}/cors`, {
      key: aKey,
      body: {
        rules: [
          rule({ allowed_origins: ['http://127.0.0.1:8080', 'http://[::1]:3000', 'capacitor://localhost'] }),
        ],
      },
    });
    expect(r.status).toBe(200);
  });

  it.each([
    [{ allowed_methods: ['PATCH'] }, 'unknown method'],
    [{ allowed_methods: ['get'] }, 'lower-case method'],
    [{ allowed_methods: [] }, 'no method'],
    [{ allowed_origins: [] }, 'no origin'],
    [{ max_age_seconds: 86401 }, 'max age too high'],
    [{ max_age_seconds: -1 }, 'negative max age'],
    [{ max_age_seconds: 1.5 }, 'fractional max age'],
    [{ allowed_headers: ['bad header'] }, 'header with a space'],
    [{ colour: 'red' }, 'unknown field'],
  ])('refuses a rule with %j (%s)', async (over: Record<string, unknown>, _why: string) => {
    const name = await bucket();
    const r = await t.request('PUT', `/v1/storage/buckets/${name}/cors`, {
      key: aKey,
      body: { rules: [rule(over)] },
    });
    expect(r.status).toBe(422);
  });

  it('refuses an empty document, a missing rules field and duplicate rule ids', async () => {
    const name = await bucket();
    const url = `/v1/storage/buckets/${name}/cors`;
    expect((await t.request('PUT', url, { key: aKey, body: { rules: [] } })).status).toBe(422);
    expect((await t.request('PUT', url, { key: aKey, body: {} })).status).toBe(422);
    const dup = await t.request('PUT', url, {
      key: aKey,
      body: { rules: [rule({ id: 'a' }), rule({ id: 'a' })] },
    });
    expect(dup.status).toBe(422);
    expect(dup.body.detail.errors[0].path).toBe('/body/rules/1/id');
  });

  it('answers 404 for an unknown bucket', async () => {
    const r = await t.request('PUT', '/v1/storage/buckets/not-a-bucket-x/cors', {
      key: aKey,
      body: { rules: [rule()] },
    });
    expect(r.status).toBe(404);
  });
});

describe('lifecycle', () => {
  it('answers 404 until rules are set, stores them with defaults, and removes them', async () => {
    const name = await bucket();
    const url = `/v1/storage/buckets/${name}/lifecycle`;
    const none = await t.request('GET', url, { key: aKey });
    expect(none.status).toBe(404);
    expect(none.body.detail.code).toBe('lifecycle_not_found');
    const put = await t.request('PUT', url, {
      key: aKey,
      body: {
        rules: [
          { id: 'logs', prefix: 'logs/', expiration_days: 30 },
          { abort_incomplete_multipart_upload_days: 7, enabled: false },
          { noncurrent_version_expiration_days: 90 },
        ],
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.rules).toEqual([
      {
        id: 'logs',
        enabled: true,
        prefix: 'logs/',
        expiration_days: 30,
        noncurrent_version_expiration_days: null,
        newer_noncurrent_versions: null,
        abort_incomplete_multipart_upload_days: null,
        transitions: null,
        noncurrent_version_transitions: null,
      },
      {
        id: expect.any(String),
        enabled: false,
        prefix: '',
        expiration_days: null,
        noncurrent_version_expiration_days: null,
        newer_noncurrent_versions: null,
        abort_incomplete_multipart_upload_days: 7,
        transitions: null,
        noncurrent_version_transitions: null,
      },
      expect.objectContaining({ noncurrent_version_expiration_days: 90 }),
    ]);
    expect((await t.request('GET', url, { key: aKey })).body).toEqual(put.body);
    expect((await directory().findBucket(name))?.lifecycle).toEqual(put.body.rules);
    expect((await t.request('DELETE', url, { key: aKey })).status).toBe(204);
    expect((await t.request('GET', url, { key: aKey })).status).toBe(404);
    expect((await t.request('DELETE', url, { key: aKey })).status).toBe(204);
  });

  it.each([
    [{ prefix: 'x/' }, 'no action'],
    [{ expiration_days: 0 }, 'zero days'],
    [{ expiration_days: -3 }, 'negative days'],
    [{ expiration_days: 36501 }, 'too many days'],
    [{ abort_incomplete_multipart_upload_days: 1.5 }, 'fractional days'],
    [{ expiration_days: 1, filter: {} }, 'unknown field'],
  ])('refuses a rule with %j (%s)', async (body: Record<string, unknown>, _why: string) => {
    const name = await bucket();
    const r = await t.request('PUT', `/v1/storage/buckets/${name}/lifecycle`, {
      key: aKey,
      body: { rules: [body] },
    });
    expect(r.status).toBe(422);
  });

  it('refuses an empty list and duplicate ids', async () => {
    const name = await bucket();
    const url = `/v1/storage/buckets/${name}/lifecycle`;
    expect((await t.request('PUT', url, { key: aKey, body: { rules: [] } })).status).toBe(422);
    const dup = await t.request('PUT', url, {
      key: aKey,
      body: {
        rules: [
          { id: 'x', expiration_days: 1 },
          { id: 'x', expiration_days: 2 },
        ],
      },
    });
    expect(dup.status).toBe(422);
  });
});

describe('versioning and object lock', () => {
  it('starts Unversioned, then Enabled and Suspended, never back to Unversioned', async () => {
    const name = await bucket();
    const url = `/v1/storage/buckets/${name}/versioning`;
    expect((await t.request('GET', url, { key: aKey })).body).toEqual({
      bucket_name: name,
      status: 'Unversioned',
      object_lock_enabled: false,
    });
    const on = await t.request('PUT', url, { key: aKey, body: { status: 'Enabled' } });
    expect(on.status).toBe(200);
    expect(on.body.status).toBe('Enabled');
    expect((await directory().findBucket(name))?.versioning).toBe('Enabled');
    const off = await t.request('PUT', url, { key: aKey, body: { status: 'Suspended' } });
    expect(off.body.status).toBe('Suspended');
    expect((await t.request('GET', url, { key: aKey })).body.status).toBe('Suspended');
    expect((await t.request('PUT', url, { key: aKey, body: { status: 'Unversioned' } })).status).toBe(422);
    expect((await t.request('PUT', url, { key: aKey, body: {} })).status).toBe(422);
  });

  it('reports object lock off by default', async () => {
    const name = await bucket();
    const r = await t.request('GET', `/v1/storage/buckets/${name}/object-lock`, { key: aKey });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      bucket_name: name,
      object_lock_enabled: false,
      versioning: 'Unversioned',
      default_retention: null,
    });
  });

  it('turns versioning on for good with object lock chosen at creation', async () => {
    const name = await bucket({ object_lock_enabled: true });
    const lock = await t.request('GET', `/v1/storage/buckets/${name}/object-lock`, { key: aKey });
    expect(lock.body).toMatchObject({ object_lock_enabled: true, versioning: 'Enabled' });
    expect((await directory().findBucket(name))?.objectLockEnabled).toBe(true);
    const r = await t.request('PUT', `/v1/storage/buckets/${name}/versioning`, {
      key: aKey,
      body: { status: 'Suspended' },
    });
    expect(r.status).toBe(409);
    expect(r.body.detail.code).toBe('invalid_bucket_state');
    await expect(directory().putVersioning(name, 'Suspended')).rejects.toMatchObject({ kind: 'conflict' });
  });
});
