import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeValidatorCompiler } from '../../src/kernel/http/ajv.js';
import { samplePath } from '../helpers/contracts.js';
import { OPERATOR_TOKEN, type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * The HTTP conventions every route shares, driven through real routes: error shapes and
 * statuses, request ids, body parsing, validation, rate limits and idempotency.
 */

/** An OpenSSH Ed25519 public key line, freshly generated. */
function ed25519Line(): string {
  const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  const str = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    return Buffer.concat([len, b]);
  };
  const blob = Buffer.concat([str(Buffer.from('ssh-ed25519')), str(Buffer.from(jwk.x!, 'base64url'))]);
  return `ssh-ed25519 ${blob.toString('base64')} me@host`;
}

const expectError = (r: { status: number; body: unknown }, status: number, code: string) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toEqual({ detail: expect.objectContaining({ code, message: expect.any(String) }) });
};

const pathsOf = (body: { detail: { errors?: { path: string }[] } }) =>
  (body.detail.errors ?? []).map((e) => e.path);

describe('error statuses and shapes', () => {
  let t: TestFjord;
  let a: TestCustomer;
  let b: TestCustomer;
  beforeAll(async () => {
    t = await TestFjord.create({ FJORD_BODY_LIMIT_BYTES: '2048' });
    a = await t.customer();
    b = await t.customer();
  });
  afterAll(() => t?.close());

  it('401 without a credential, with an unknown one, and with a malformed Authorization header', async () => {
    expectError(await t.request('GET', '/v1/account/profile'), 401, 'unauthenticated');
    expectError(await t.request('GET', '/v1/account/profile', { key: 'fjp_nope' }), 401, 'unauthenticated');
    expectError(
      await t.request('GET', '/v1/account/profile', { bearer: 'fjp_nope' }),
      401,
      'unauthenticated',
    );
    expectError(
      await t.request('GET', '/v1/account/profile', { headers: { authorization: `Basic ${a.pat}` } }),
      401,
      'unauthenticated',
    );
    // A 401 says nothing about whether the resource exists.
    expectError(
      await t.request('DELETE', '/v1/account/api-keys/whatever', { key: 'fjk_bogus' }),
      401,
      'unauthenticated',
    );
  });

  it('403 for a valid credential lacking the service or the scope', async () => {
    const dnsKey = await t.kernel.identity.createServiceKey(a.id, 'dns', null);
    expectError(await t.request('GET', '/v1/account/profile', { key: dnsKey.key }), 403, 'forbidden');
    const narrow = await t.kernel.identity.createPat(a.id, ['regions:read'], null);
    expectError(await t.request('GET', '/v1/account/profile', { key: narrow.key }), 403, 'forbidden');
    expect((await t.request('GET', '/v1/regions', { key: narrow.key })).status).toBe(200);
    expect((await t.request('GET', '/v1/regions', { key: dnsKey.key })).status).toBe(200);
  });

  it('404 for an unknown resource and for another customer’s resource, alike', async () => {
    const created = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns' },
    });
    expect(created.status).toBe(201);
    const foreign = await t.request('DELETE', `/v1/account/api-keys/${created.body.id}`, { key: b.pat });
    const unknown = await t.request('DELETE', '/v1/account/api-keys/no-such-key', { key: b.pat });
    expectError(foreign, 404, 'not_found');
    expectError(unknown, 404, 'not_found');
    // The two answers are indistinguishable apart from the id.
    expect(foreign.body.detail.message).toBe(unknown.body.detail.message);
    // And the owner still has the key.
    const list = await t.request('GET', '/v1/account/api-keys', { key: a.pat });
    expect(list.body.map((k: { id: string }) => k.id)).toContain(created.body.id);
  });

  it('409 on a conflict', async () => {
    const line = ed25519Line();
    const first = await t.request('POST', '/v1/account/ssh-keys', {
      key: a.pat,
      body: { name: 'one', public_key: line },
    });
    expect(first.status).toBe(201);
    const again = await t.request('POST', '/v1/account/ssh-keys', {
      key: a.pat,
      body: { name: 'two', public_key: line },
    });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    const dupCustomer = await t.operator('POST', '/admin/v1/customers', { email: a.email });
    expectError(dupCustomer, 409, 'email_taken');
  });

  it('422 lists the failing paths of the body and of the query', async () => {
    const missing = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { description: 'no service' },
    });
    expectError(missing, 422, 'validation_error');
    expect(pathsOf(missing.body)).toContain('/body/service');

    const extra = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', colour: 'blue' },
    });
    expectError(extra, 422, 'validation_error');
    expect(pathsOf(extra.body)).toContain('/body/colour');

    const query = await t.request('GET', '/v1/regions/oslo/pricing', {
      key: a.pat,
      query: { currency: 'XYZ' },
    });
    expect(query.status).toBe(422);
    expect(pathsOf(query.body).length).toBeGreaterThan(0);
    expect(new Set(pathsOf(query.body))).toEqual(new Set(['/query/currency']));

    const several = await t.request('POST', '/v1/account/api-keys/pat', {
      key: a.pat,
      body: { scopes: [], expires_in_days: 0, description: 7 },
    });
    expectError(several, 422, 'validation_error');
    expect(pathsOf(several.body)).toEqual(
      expect.arrayContaining(['/body/scopes', '/body/expires_in_days', '/body/description']),
    );
  });

  it('words a choice and a pattern so that a person can act on the error', async () => {
    const choice = await t.request('POST', '/v1/databases', {
      key: a.pat,
      body: { db_type: 'oracle', db_name: 'x' },
    });
    expect(choice.body.detail.errors).toEqual([
      { path: '/body/db_type', message: 'must be one of postgresql, mariadb' },
    ]);
    const currency = await t.request('GET', '/v1/regions/oslo/pricing', {
      key: a.pat,
      query: { currency: 'EURO' },
    });
    expect(currency.body.detail.errors).toEqual([
      { path: '/query/currency', message: 'must be exactly 3 characters: letters only' },
    ]);
    const blank = await t.request('POST', '/v1/account/ssh-keys', {
      key: a.pat,
      body: {
        name: '   ',
        public_key:
          'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDwRZm0q3wFZbVq9SP1aE2v4O7p8j6QO3yYZj1rCk0xz t@example',
      },
    });
    expect(blank.body.detail.errors).toContainEqual({ path: '/body/name', message: 'must not be blank' });
  });

  it('does not coerce JSON body types, but coerces query strings', async () => {
    const scopes = await t.request('POST', '/v1/account/api-keys/pat', {
      key: a.pat,
      body: { scopes: 'regions:read' },
    });
    expectError(scopes, 422, 'validation_error');
    expect(pathsOf(scopes.body)).toContain('/body/scopes');

    const number = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 123 },
    });
    expectError(number, 422, 'validation_error');
    expect(pathsOf(number.body)).toContain('/body/service');

    const days = await t.request('POST', '/v1/account/api-keys/pat', {
      key: a.pat,
      body: { scopes: ['regions:read'], expires_in_days: '30' },
    });
    expectError(days, 422, 'validation_error');
    expect(pathsOf(days.body)).toContain('/body/expires_in_days');

    const coerced = await t.request('GET', '/v1/webhooks/deliveries', { key: a.pat, query: { limit: '5' } });
    expect(coerced.status).toBe(200);
    const notANumber = await t.request('GET', '/v1/webhooks/deliveries', {
      key: a.pat,
      query: { limit: 'five' },
    });
    expectError(notANumber, 422, 'validation_error');
    expect(pathsOf(notANumber.body)).toContain('/query/limit');
    const tooMany = await t.request('GET', '/v1/webhooks/deliveries', {
      key: a.pat,
      query: { limit: '500' },
    });
    expectError(tooMany, 422, 'validation_error');
  });

  it('400 invalid_json for malformed JSON', async () => {
    for (const raw of ['{"service": "dns"', '{service: dns}', "{'service':'dns'}", '[1,]', '\u0000']) {
      const r = await t.request('POST', '/v1/account/api-keys/service', {
        key: a.pat,
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expectError(r, 400, 'invalid_json');
      expect(r.headers['x-request-id']).toBeTruthy();
    }
  });

  it('413 for a body over FJORD_BODY_LIMIT_BYTES', async () => {
    const r = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', description: 'x'.repeat(3000) },
    });
    expectError(r, 413, 'body_too_large');
    expect(r.headers['x-request-id']).toBeTruthy();
    // Just under the limit is judged on its content (here: too long a description).
    const under = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', description: 'x'.repeat(1500) },
    });
    expectError(under, 422, 'validation_error');
  });

  it('415 for a body that is not JSON, or has no content type', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const r = await t.request('POST', '/v1/account/api-keys/service', {
        key: a.pat,
        rawBody: type === 'text/plain' ? '{"service":"dns"}' : 'service=dns',
        headers: { 'content-type': type },
      });
      expectError(r, 415, 'unsupported_media_type');
    }
    const untyped = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      rawBody: '{"service":"dns","description":"untyped"}',
    });
    expect(untyped.status, untyped.text).toBe(415);
    const list = await t.request('GET', '/v1/account/api-keys', { key: a.pat });
    expect(list.body.filter((k: { description: string | null }) => k.description === 'untyped')).toEqual([]);
  });

  it('refuses U+0000 in strings with 422 naming the path, wherever it is', async () => {
    const body = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', description: 'a\u0000b' },
    });
    expectError(body, 422, 'validation_error');
    expect(pathsOf(body.body)).toEqual(['/body/description']);
    const inArray = await t.request('POST', '/v1/account/api-keys/pat', {
      key: a.pat,
      body: { scopes: ['regions:read', 'x\u0000'] },
    });
    expectError(inArray, 422, 'validation_error');
    expect(pathsOf(inArray.body)).toEqual(['/body/scopes/1']);
    const param = await t.request('DELETE', '/v1/account/api-keys/a%00b', { key: a.pat });
    expectError(param, 422, 'validation_error');
    expect(pathsOf(param.body)).toEqual(['/params/key_id']);
    const query = await t.request('GET', '/v1/regions/oslo/pricing', {
      key: a.pat,
      query: { currency: 'EUR\u0000' },
    });
    expect(query.status).toBe(422);
    expect(pathsOf(query.body)).toEqual(['/query/currency']);
  });

  it('refuses a lone UTF-16 surrogate with 422, and keeps an escaped pair (an emoji) as it is', async () => {
    for (const lone of ['"\\ud800"', '"x\\udfff"', '"\\udc00\\ud800"']) {
      const r = await t.request('POST', '/v1/contacts', {
        key: a.pat,
        rawBody: `{"name": ${lone}}`,
        headers: { 'content-type': 'application/json' },
      });
      expectError(r, 422, 'invalid_unicode');
    }
    const ok = await t.request('POST', '/v1/contacts', {
      key: a.pat,
      rawBody: '{"name": "Ada \\ud83d\\ude00"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(ok.body).toMatchObject({ name: 'Ada 😀' });
    expect(ok.status).toBe(201);
  });

  it('refuses JSON nested deeper than the limit with 400, and takes ordinary nesting', async () => {
    const deep = `${'['.repeat(200)}${']'.repeat(200)}`;
    const r = await t.request('POST', '/v1/webhooks/secret/rotate', {
      key: a.pat,
      rawBody: deep,
      headers: { 'content-type': 'application/json' },
    });
    expectError(r, 400, 'json_too_deep');
    // Brackets inside strings are not nesting.
    const inString = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', description: `${'[{'.repeat(200)}"\\` },
    });
    expect(inString.status, inString.text).toBe(201);
    expect(inString.body.description).toBe(`${'[{'.repeat(200)}"\\`);
  });

  it('takes an empty JSON body on a route without a body as no body', async () => {
    for (const rawBody of ['', '  \n']) {
      const r = await t.request('POST', '/v1/webhooks/secret/rotate', {
        key: a.pat,
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
      expect(r.status, r.text).toBe(200);
      expect(r.body.secret).toEqual(expect.any(String));
    }
    const none = await t.request('POST', '/v1/webhooks/secret/rotate', { key: a.pat });
    expect(none.status).toBe(200);
    // On a route that needs a body, an empty one is a 422 naming the body, not a 500.
    const empty = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      rawBody: '',
      headers: { 'content-type': 'application/json' },
    });
    expectError(empty, 422, 'validation_error');
  });

  it('404 route_not_found for unknown routes and methods, with a request id', async () => {
    for (const [method, url] of [
      ['GET', '/v1/nothing-here'],
      ['POST', '/v1/regions'],
      ['GET', '/v2/account/profile'],
      ['DELETE', '/'],
    ] as const) {
      const r = await t.request(method, url, { key: a.pat });
      expectError(r, 404, 'route_not_found');
      expect(r.headers['x-request-id']).toBeTruthy();
    }
  });

  it('answers a malformed URL with a stated error, never a 500', async () => {
    const long = `/v1/account/api-keys/${'k'.repeat(5000)}`;
    for (const url of ['/v1/account/api-keys/%zz', '/v1/regions/%E0%A4%A', '/%', long]) {
      const r = await t.request('DELETE', url, { key: a.pat });
      expect(r.status, `${url}: ${r.text}`).toBeGreaterThanOrEqual(400);
      expect(r.status, `${url}: ${r.text}`).toBeLessThan(500);
      expect(r.body?.detail?.code, `${url}: ${r.text}`).toEqual(expect.any(String));
      expect(r.headers['x-request-id']).toBeTruthy();
    }
    const mine = await t.request('GET', '/v1/regions/%zz', {
      key: a.pat,
      headers: { 'x-request-id': 'bad-url-1' },
    });
    expectError(mine, 400, 'bad_request');
    expect(mine.headers['x-request-id']).toBe('bad-url-1');
  });

  it('echoes a sane X-Request-Id and replaces a garbage one', async () => {
    const mine = 'req-2024.05:abc/DEF+1=ok@x';
    const echoed = await t.request('GET', '/v1/regions', { key: a.pat, headers: { 'x-request-id': mine } });
    expect(echoed.headers['x-request-id']).toBe(mine);
    const onError = await t.request('GET', '/v1/regions', { headers: { 'x-request-id': mine } });
    expect(onError.status).toBe(401);
    expect(onError.headers['x-request-id']).toBe(mine);

    const seen = new Set<string>();
    for (const garbage of ['has spaces in it', 'x'.repeat(500), 'new\\line', '<script>', '']) {
      const r = await t.request('GET', '/v1/regions', { key: a.pat, headers: { 'x-request-id': garbage } });
      const id = r.headers['x-request-id'] as string;
      expect(id).toBeTruthy();
      expect(id).not.toBe(garbage);
      expect(id).toMatch(/^[\w.:@/+=-]{1,200}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(5);
    // Generated ids differ between requests.
    const x = await t.request('GET', '/v1/regions', { key: a.pat });
    const y = await t.request('GET', '/v1/regions', { key: a.pat });
    expect(x.headers['x-request-id']).not.toBe(y.headers['x-request-id']);
  });

  it('puts X-RateLimit-* on authenticated responses, errors included', async () => {
    for (const r of [
      await t.request('GET', '/v1/regions', { key: a.pat }),
      await t.request('GET', '/v1/regions/atlantis', { key: a.pat }),
      await t.request('POST', '/v1/account/api-keys/service', { key: a.pat, body: {} }),
    ]) {
      expect(Number(r.headers['x-ratelimit-limit'])).toBeGreaterThan(0);
      expect(Number.isInteger(Number(r.headers['x-ratelimit-remaining']))).toBe(true);
      const reset = Number(r.headers['x-ratelimit-reset']);
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThan(1_600_000_000);
    }
  });
});

describe('rate limits', () => {
  let t: TestFjord;
  let a: TestCustomer;
  beforeAll(async () => {
    t = await TestFjord.create({
      FJORD_RATE_LIMITS: JSON.stringify({ regions: { points: 3, duration: 60 } }),
    });
    a = await t.customer();
  });
  afterAll(() => t?.close());

  it('counts per credential and bucket, and answers 429 with the stated body', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await t.request('GET', '/v1/regions', { key: a.pat });
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-limit']).toBe('3');
      remaining.push(String(r.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const limited = await t.request('GET', '/v1/regions', { key: a.pat });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body).toEqual({
      error: {
        code: 'RATE_LIMIT_EXCEEDED',
        message: expect.any(String),
        retry_after: retryAfter,
        details: { limit: 3, window: '60s' },
      },
    });
    expect(limited.headers['x-ratelimit-limit']).toBe('3');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(limited.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    expect(limited.headers['x-request-id']).toBeTruthy();
    // Every route of the bucket is spent, not just the one called.
    expect((await t.request('GET', '/v1/regions/oslo', { key: a.pat })).status).toBe(429);

    // Another bucket (account routes) is unaffected for the same credential.
    const profile = await t.request('GET', '/v1/account/profile', { key: a.pat });
    expect(profile.status).toBe(200);
    expect(Number(profile.headers['x-ratelimit-limit'])).toBeGreaterThan(3);

    // Another key of the same customer has a budget of its own.
    const other = await t.kernel.identity.createPat(a.id, ['regions:read'], null);
    const r = await t.request('GET', '/v1/regions', { key: other.key });
    expect(r.status).toBe(200);
    expect(r.headers['x-ratelimit-remaining']).toBe('2');

    // A refused credential does not draw on anyone's budget.
    const anon = await t.request('GET', '/v1/regions');
    expect(anon.status).toBe(401);
  });
});

describe('idempotency keys', () => {
  let t: TestFjord;
  let a: TestCustomer;
  let b: TestCustomer;
  beforeAll(async () => {
    t = await TestFjord.create();
    a = await t.customer();
    b = await t.customer();
  });
  afterAll(() => t?.close());

  const keysOf = async (c: TestCustomer, description: string) =>
    (await t.request('GET', '/v1/account/api-keys', { key: c.pat })).body.filter(
      (k: { description: string | null }) => k.description === description,
    );

  it('replays the first answer for the same key and body, creating one resource', async () => {
    const body = { service: 'dns', description: 'idem-1' };
    const headers = { 'idempotency-key': 'create-dns-key-1' };
    const first = await t.request('POST', '/v1/account/api-keys/service', { key: a.pat, body, headers });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const second = await t.request('POST', '/v1/account/api-keys/service', { key: a.pat, body, headers });
    expect(second.status).toBe(201);
    expect(second.text).toBe(first.text);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['content-type']).toMatch(/^application\/json/);
    expect(second.headers['x-request-id']).toBeTruthy();
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    // Replays count against the rate limit, with fresh headers.
    expect(Number(second.headers['x-ratelimit-remaining'])).toBe(
      Number(first.headers['x-ratelimit-remaining']) - 1,
    );
    // Key order in the JSON body does not make it another request.
    const reordered = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      rawBody: JSON.stringify({ service: 'dns', description: 'idem-1' }),
      headers: { ...headers, 'content-type': 'application/json' },
    });
    expect(reordered.status).toBe(201);
    expect(reordered.text).toBe(first.text);
    expect(await keysOf(a, 'idem-1')).toHaveLength(1);
  });

  it('refuses the same key with another body or on another route with 422 idempotency_key_reused', async () => {
    const headers = { 'idempotency-key': 'create-dns-key-2' };
    const first = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', description: 'idem-2' },
      headers,
    });
    expect(first.status).toBe(201);
    const other = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'vps', description: 'idem-2' },
      headers,
    });
    expectError(other, 422, 'idempotency_key_reused');
    const elsewhere = await t.request('POST', '/v1/account/api-keys/pat', {
      key: a.pat,
      body: { scopes: ['regions:read'], description: 'idem-2' },
      headers,
    });
    expectError(elsewhere, 422, 'idempotency_key_reused');
    expect(await keysOf(a, 'idem-2')).toHaveLength(1);
  });

  it('keeps keys per customer', async () => {
    const headers = { 'idempotency-key': 'shared-key' };
    const body = { service: 'dns', description: 'idem-3' };
    const ra = await t.request('POST', '/v1/account/api-keys/service', { key: a.pat, body, headers });
    const rb = await t.request('POST', '/v1/account/api-keys/service', { key: b.pat, body, headers });
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(rb.headers['idempotent-replayed']).toBeUndefined();
    expect(rb.body.id).not.toBe(ra.body.id);
    expect(rb.body.key).not.toBe(ra.body.key);
    expect(await keysOf(a, 'idem-3')).toHaveLength(1);
    expect(await keysOf(b, 'idem-3')).toHaveLength(1);
    // Another customer using a key with a different body is not a reuse either.
    const rb2 = await t.request('POST', '/v1/account/api-keys/service', {
      key: b.pat,
      body: { service: 'vps' },
      headers: { 'idempotency-key': 'create-dns-key-2' },
    });
    expect(rb2.status).toBe(201);
  });

  it('does not record a request that failed validation, so a corrected retry runs', async () => {
    const headers = { 'idempotency-key': 'fix-and-retry' };
    const bad = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { description: 'idem-4' },
      headers,
    });
    expectError(bad, 422, 'validation_error');
    const good = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', description: 'idem-4' },
      headers,
    });
    expect(good.status).toBe(201);
    expect(good.headers['idempotent-replayed']).toBeUndefined();

    // The same holds for a 422 the service finds (an unknown service name).
    const h2 = { 'idempotency-key': 'fix-and-retry-2' };
    const unknown = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'mainframe', description: 'idem-4b' },
      headers: h2,
    });
    expectError(unknown, 422, 'unknown_service');
    const fixed = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', description: 'idem-4b' },
      headers: h2,
    });
    expect(fixed.status).toBe(201);
  });

  it('does not record refused credentials or malformed JSON', async () => {
    const headers = { 'idempotency-key': 'refused-first' };
    const body = { service: 'dns', description: 'idem-5' };
    const narrow = await t.kernel.identity.createPat(a.id, ['regions:read'], null);
    expect(
      (await t.request('POST', '/v1/account/api-keys/service', { key: narrow.key, body, headers })).status,
    ).toBe(403);
    const broken = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      rawBody: '{"service":',
      headers: { ...headers, 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    const ok = await t.request('POST', '/v1/account/api-keys/service', { key: a.pat, body, headers });
    expect(ok.status).toBe(201);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
  });

  it('refuses a malformed key with 422', async () => {
    for (const bad of ['k'.repeat(300), 'has space', 'ü-not-ascii']) {
      const r = await t.request('POST', '/v1/account/api-keys/service', {
        key: a.pat,
        body: { service: 'dns', description: 'idem-6' },
        headers: { 'idempotency-key': bad },
      });
      expectError(r, 422, 'idempotency_key_invalid');
    }
    const ok = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', description: 'idem-6' },
      headers: { 'idempotency-key': 'k'.repeat(255) },
    });
    expect(ok.status).toBe(201);
    expect(await keysOf(a, 'idem-6')).toHaveLength(1);
  });

  it('creates one resource when the same request races itself', async () => {
    const body = { service: 'dns', description: 'idem-7' };
    const headers = { 'idempotency-key': 'racing' };
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.request('POST', '/v1/account/api-keys/service', { key: a.pat, body, headers }),
      ),
    );
    for (const r of answers) expect([201, 409], r.text).toContain(r.status);
    const created = answers.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThan(0);
    expect(new Set(created.map((r) => r.text)).size).toBe(1);
    for (const r of answers.filter((x) => x.status === 409))
      expect(r.body.detail.code).toBe('idempotency_request_in_progress');
    expect(await keysOf(a, 'idem-7')).toHaveLength(1);
  });

  it('replays a bodiless POST too', async () => {
    const headers = { 'idempotency-key': 'rotate-once' };
    const first = await t.request('POST', '/v1/webhooks/secret/rotate', { key: a.pat, headers });
    const second = await t.request('POST', '/v1/webhooks/secret/rotate', { key: a.pat, headers });
    expect(first.status).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body.secret).toBe(first.body.secret);
    const current = await t.request('GET', '/v1/webhooks/secret', { key: a.pat });
    expect(current.body.secret).toBe(first.body.secret);
  });

  it('forgets keys after 24 hours', async () => {
    const headers = { 'idempotency-key': 'day-old' };
    const first = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', description: 'idem-8' },
      headers,
    });
    expect(first.status).toBe(201);
    await t.advance(23 * 3600);
    const replay = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', description: 'idem-8' },
      headers,
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    await t.advance(3600 + 60);
    const fresh = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'vps', description: 'idem-8' },
      headers,
    });
    expect(fresh.status).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(await keysOf(a, 'idem-8')).toHaveLength(2);
  });
});

describe('hostile input never causes a 500', () => {
  let t: TestFjord;
  let a: TestCustomer;
  beforeAll(async () => {
    t = await TestFjord.create();
    a = await t.customer();
  });
  afterAll(() => t?.close());

  // biome-ignore lint/suspicious/noExplicitAny: walks arbitrary JSON Schema
  type Schema = any;

  /** A value the schema accepts, as far as a simple reading of it goes. */
  function sample(s: Schema): unknown {
    if (s === undefined) return 'x';
    if ('const' in s) return s.const;
    if (s.anyOf) return sample(s.anyOf.find((x: Schema) => x.type !== 'null') ?? s.anyOf[0]);
    if (s.enum) return s.enum[0];
    switch (s.type) {
      case 'object':
        return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, sample(v)]));
      case 'array':
        return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => sample(s.items));
      case 'string':
        return s.format === 'email' ? `fuzz${Math.random()}@example.test` : 'x'.repeat(s.minLength ?? 1);
      case 'integer':
      case 'number':
        return s.minimum ?? 1;
      case 'boolean':
        return true;
      case 'null':
        return null;
    }
    return 'x';
  }

  /** Bodies that get past the schema, so hostile fields reach the service and the store. */
  const good: Record<string, () => Record<string, unknown>> = {
    createServiceKey: () => ({ service: 'dns', description: 'fuzz' }),
    createPat: () => ({ scopes: ['regions:read'], description: 'fuzz', expires_in_days: 1 }),
    addSshKey: () => ({ name: 'fuzz', public_key: ed25519Line() }),
    adminCreateCustomer: () => ({ email: `fuzz${Math.random()}@example.test`, first_name: 'F' }),
    adminAdvanceClock: () => ({ seconds: 0 }),
  };

  let deep = 'null';
  for (let i = 0; i < 2000; i++) deep = i % 2 ? `[${deep}]` : `{"a":${deep}}`;
  const hostileBodies = [
    '[]',
    'null',
    '"string"',
    '0',
    '1e400',
    '-1e400',
    'true',
    '{}',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '[null,{"a":[1e308,-0,"\\u0000"]}]',
    '{"a":"\\u0000\\u0000"}',
    '"\\ud800"',
    deep,
  ];
  const hostileValues: unknown[] = [
    null,
    [],
    {},
    [null],
    { nested: { junk: [1, { x: '\u0000' }] } },
    1e308,
    -1e308,
    2 ** 63,
    1.5,
    -1,
    0,
    true,
    '',
    ' ',
    'a\u0000b',
    '\u0000',
    '\ud800',
    'x'.repeat(1500),
    '☃️𝄞',
    "'; DROP TABLE customers; --",
    '../../etc/passwd',
  ];

  // With both passes, the PostgreSQL one sends only the bodies the route's schema accepts: those
  // reach the service and the store. A body the schema refuses is answered before any store is
  // touched, the same on both, and the SQLite pass sends every one.
  const onlyWhatReachesTheStore =
    process.env.FJORD_TEST_STORE === 'postgres' && process.env.FJORD_TEST_BOTH_PASSES === '1';
  const compileBodySchema = makeValidatorCompiler();
  const bodyValidators = new Map<Schema, ReturnType<typeof compileBodySchema>>();
  const passesSchema = (schema: Schema, payload: string): boolean => {
    let validate = bodyValidators.get(schema);
    if (!validate) {
      validate = compileBodySchema({ schema, httpPart: 'body', method: 'POST', url: '/' });
      bodyValidators.set(schema, validate);
    }
    try {
      return validate(JSON.parse(payload)) === true;
    } catch {
      return true; // what JSON.parse refuses, send: the server's own parser decides
    }
  };

  // Hundreds of routes times the hostile inputs: minutes on a loaded 2-core machine, a hang never.
  it('for every route with a body', { timeout: 300_000 }, async () => {
    const withBody = t.fjord.routes.filter((r) => r.body);
    expect(withBody.length).toBeGreaterThan(3);
    const seen: string[] = [];
    let refusedBySchemaAlone = 0;
    // Each route's payloads go one after another, and several routes at once: with every area's
    // routes this is some 4,000 requests, which one at a time outlast the timeout on a loaded
    // PostgreSQL. Concurrent routes also make a hostile body meet other requests' writes.
    const fuzzRoute = async (route: (typeof withBody)[number]) => {
      const auth =
        route.access.kind === 'operator' ? { bearer: OPERATOR_TOKEN } : { key: a.pat as string | null };
      const path = samplePath(route);
      const label = `${route.method} ${route.url}`;
      const send = async (payload: string, what: string) => {
        if (onlyWhatReachesTheStore && !passesSchema(route.body, payload)) return void refusedBySchemaAlone++;
        const r = await t.request(route.method, path, {
          ...auth,
          rawBody: payload,
          headers: { 'content-type': 'application/json' },
        });
        expect(r.status, `${label} with ${what.slice(0, 200)}: ${r.text}`).toBeLessThan(500);
        if (r.status >= 400 && r.status !== 429) {
          // Routes with their own error shape (OpenAI's `{error: {message, code}}`, IP
          // intelligence's `{detail: {error, message}}`) still say what went wrong.
          const code = route.errorFormat
            ? (r.body?.error?.message ?? r.body?.detail?.error)
            : r.body?.detail?.code;
          expect(code, `${label} with ${what.slice(0, 200)}`).toEqual(expect.any(String));
        }
        seen.push(`${label} ${r.status}`);
        return r;
      };
      for (const raw of hostileBodies) await send(raw, raw);
      const base = good[route.operationId] ?? (() => sample(route.body) as Record<string, unknown>);
      const fields = Object.keys(route.body.properties ?? {});
      for (const field of fields) {
        for (const v of hostileValues) {
          const body = { ...base(), [field]: v };
          await send(JSON.stringify(body), JSON.stringify(body));
          // The same value inside an array, where the field is one.
          if (route.body.properties[field].type === 'array') {
            const inArray = { ...base(), [field]: [v] };
            await send(JSON.stringify(inArray), JSON.stringify(inArray));
          }
        }
      }
    };
    const queue = [...withBody];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let route = queue.shift(); route; route = queue.shift()) await fuzzRoute(route);
      }),
    );
    expect(seen.length).toBeGreaterThan(100);
    if (onlyWhatReachesTheStore) expect(refusedBySchemaAlone).toBeGreaterThan(0);
    expect(Object.prototype).not.toHaveProperty('polluted');
    // The customer and its credential survived all of that.
    expect((await t.request('GET', '/v1/account/profile', { key: a.pat })).status).toBe(200);
  });

  // Hundreds of routes times the hostile inputs: minutes on a loaded 2-core machine, a hang never.
  it('for hostile path parameters and query strings', { timeout: 300_000 }, async () => {
    const withParams = t.fjord.routes.filter((r) => /:[a-z_]+/.test(r.url));
    expect(withParams.length).toBeGreaterThan(0);
    for (const route of withParams) {
      const auth =
        route.access.kind === 'operator' ? { bearer: OPERATOR_TOKEN } : { key: a.pat as string | null };
      for (const value of [
        '%00',
        'a%00b',
        'x'.repeat(5000),
        '%F0%9F%92%A9',
        '..%2F..%2Fetc',
        "'%20OR%201=1",
      ]) {
        const url = route.url.replace(/:([a-z_]+)/g, value);
        const body = route.body ? sample(route.body) : undefined;
        const r = await t.request(route.method, url, { ...auth, body });
        expect(r.status, `${route.method} ${url.slice(0, 100)}: ${r.text}`).toBeLessThan(500);
      }
    }
    const queries: Record<string, string>[] = [
      { currency: '\u0000' },
      { currency: 'x'.repeat(5000) },
      { limit: '1e400' },
    ];
    for (const query of queries) {
      for (const url of ['/v1/regions/oslo/pricing', '/v1/webhooks/deliveries', '/admin/v1/customers']) {
        const r = await t.request('GET', url, {
          ...(url.startsWith('/admin') ? { bearer: OPERATOR_TOKEN } : { key: a.pat }),
          query,
        });
        expect(r.status, `${url} ${JSON.stringify(query).slice(0, 80)}: ${r.text}`).toBeLessThan(500);
      }
    }
    const pages: Record<string, string>[] = [
      { page: '99999999999999999999' },
      { per_page: '-1' },
      { page: '1.5' },
    ];
    for (const query of pages) {
      const r = await t.request('GET', '/admin/v1/customers', { bearer: OPERATOR_TOKEN, query });
      expect(r.status, `${JSON.stringify(query)}: ${r.text}`).toBeLessThan(500);
    }
  });

  it('for a deeply nested body with an Idempotency-Key on a route without a body', async () => {
    let nested = '0';
    for (let i = 0; i < 100_000; i++) nested = `[${nested}]`;
    const r = await t.request('POST', '/v1/webhooks/secret/rotate', {
      key: a.pat,
      rawBody: nested,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'deep' },
    });
    expect(r.status, r.text.slice(0, 300)).toBeLessThan(500);
  });

  it('for hostile credentials and headers', async () => {
    const hostile: Record<string, string>[] = [
      { 'x-api-key': 'a.b.c' },
      { 'x-api-key': 'x'.repeat(10_000) },
      { authorization: 'Bearer a.b.c' },
      { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' },
      { authorization: 'Bearer' },
      { authorization: `Bearer ${'y'.repeat(10_000)}` },
      { 'x-api-key': ' ' },
    ];
    for (const headers of hostile) {
      const r = await t.request('GET', '/v1/account/profile', { headers });
      expect(r.status, `${JSON.stringify(headers).slice(0, 80)}: ${r.text}`).toBe(401);
    }
  });
});
