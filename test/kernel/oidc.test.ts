import { type JWTPayload, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { type Issuer, type SigningKey, signingKey, startIssuer } from '../helpers/oidc-issuer.js';

/**
 * OIDC bearer tokens: a local issuer (discovery document and JWKS on 127.0.0.1) signs tokens with
 * ES256 and RS256 keys; Fjord must accept exactly the valid ones, link them to customers by
 * e-mail once and by `sub` after that.
 */

let es: SigningKey;
let rs: SigningKey;
let rogue: SigningKey;

beforeAll(async () => {
  es = await signingKey('ES256', 'es-1');
  rs = await signingKey('RS256', 'rs-1');
  rogue = await signingKey('ES256', 'rogue');
});

interface TokenOptions {
  key?: SigningKey;
  kid?: string;
  iss?: string;
  aud?: string | string[] | null;
  /** Seconds from Fjord's clock. */
  exp?: number;
  nbf?: number;
}

/** Signs a token against Fjord's clock (which tests may have moved). */
async function sign(t: TestFjord, issuer: string, claims: JWTPayload, o: TokenOptions = {}) {
  const key = o.key ?? es;
  const now = Math.floor(t.kernel.clock.nowMs() / 1000);
  // Issuers vouch for e-mails with email_verified; tests that need otherwise set it explicitly.
  const withVerified =
    typeof claims.email === 'string' && !('email_verified' in claims)
      ? { ...claims, email_verified: true }
      : claims;
  const jwt = new SignJWT(withVerified)
    .setProtectedHeader({ alg: key.alg, kid: o.kid ?? key.kid, typ: 'JWT' })
    .setIssuer(o.iss ?? issuer)
    .setIssuedAt(now)
    .setExpirationTime(now + (o.exp ?? 600));
  if (o.aud !== null) jwt.setAudience(o.aud ?? 'fjord');
  if (o.nbf !== undefined) jwt.setNotBefore(now + o.nbf);
  return jwt.sign(key.privateKey);
}

const profile = (t: TestFjord, bearer: string) => t.request('GET', '/v1/account/profile', { bearer });

const expect401 = (r: { status: number; body: { detail?: { code?: string } } }, label: string) => {
  expect(r.status, label).toBe(401);
  expect(r.body.detail?.code, label).toBe('unauthenticated');
};

describe('OIDC through a discovery document', () => {
  let issuer: Issuer;
  let t: TestFjord;
  let alice: TestCustomer;
  let bob: TestCustomer;

  beforeAll(async () => {
    issuer = await startIssuer([es.jwk, rs.jwk], { discovery: true });
    t = await TestFjord.create({ FJORD_OIDC_ISSUER: issuer.url, FJORD_OIDC_AUDIENCE: 'fjord' });
    alice = await t.customer('alice@oidc.test');
    bob = await t.customer('bob@oidc.test');
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.close();
  });

  it('accepts a valid ES256 token whose e-mail names a customer, then knows the subject', async () => {
    const first = await profile(t, await sign(t, issuer.url, { sub: 'alice-sub', email: 'Alice@OIDC.test' }));
    expect(first.status, first.text).toBe(200);
    expect(first.body.customer_id).toBe(alice.id);
    expect(first.headers['x-ratelimit-limit']).toBeDefined();
    expect(first.headers['x-ratelimit-remaining']).toBeDefined();
    expect(issuer.hits['/.well-known/openid-configuration']).toBe(1);
    expect(issuer.hits['/keys/jwks.json']).toBeGreaterThanOrEqual(1);

    // Linked by `sub`: no e-mail needed any more …
    const later = await profile(t, await sign(t, issuer.url, { sub: 'alice-sub' }));
    expect(later.status, later.text).toBe(200);
    expect(later.body.customer_id).toBe(alice.id);
    // … and the link wins over a changed e-mail claim.
    const moved = await profile(t, await sign(t, issuer.url, { sub: 'alice-sub', email: bob.email }));
    expect(moved.body.customer_id).toBe(alice.id);
    // The discovery document is read once.
    expect(issuer.hits['/.well-known/openid-configuration']).toBe(1);
  });

  it('accepts RS256 tokens from the same key set', async () => {
    const r = await profile(t, await sign(t, issuer.url, { sub: 'bob-sub', email: bob.email }, { key: rs }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.customer_id).toBe(bob.id);
  });

  it('acts with the customer’s full rights on other routes', async () => {
    const token = await sign(t, issuer.url, { sub: 'alice-sub' });
    expect((await t.request('GET', '/v1/regions', { bearer: token })).status).toBe(200);
    const created = await t.request('POST', '/v1/account/api-keys/service', {
      bearer: token,
      body: { service: 'dns', description: 'made with oidc' },
    });
    expect(created.status, created.text).toBe(201);
    const list = await t.request('GET', '/v1/account/api-keys', { key: alice.pat });
    expect(list.body.map((k: { id: string }) => k.id)).toContain(created.body.id);
    // Resources stay the customer's: bob's token cannot revoke alice's key.
    const bobToken = await sign(t, issuer.url, { sub: 'bob-sub' });
    const foreign = await t.request('DELETE', `/v1/account/api-keys/${created.body.id}`, {
      bearer: bobToken,
    });
    expect(foreign.status).toBe(404);
  });

  it('refuses a token with the wrong audience, issuer, lifetime or signature', async () => {
    const claims = { sub: 'alice-sub', email: alice.email };
    expect401(await profile(t, await sign(t, issuer.url, claims, { aud: 'someone-else' })), 'wrong aud');
    expect401(await profile(t, await sign(t, issuer.url, claims, { aud: null })), 'no aud');
    expect401(
      await profile(t, await sign(t, issuer.url, claims, { iss: 'https://evil.example' })),
      'wrong iss',
    );
    expect401(await profile(t, await sign(t, issuer.url, claims, { exp: -3600 })), 'expired');
    expect401(await profile(t, await sign(t, issuer.url, claims, { nbf: 3600 })), 'not yet valid');
    expect401(await profile(t, await sign(t, issuer.url, claims, { key: rogue })), 'unknown key');
    expect401(
      await profile(t, await sign(t, issuer.url, claims, { key: rogue, kid: es.kid })),
      'unknown key under a known kid',
    );
    expect401(await profile(t, await sign(t, issuer.url, { email: alice.email })), 'no sub');

    const unsecured = new UnsecuredJWT(claims)
      .setIssuer(issuer.url)
      .setAudience('fjord')
      .setIssuedAt()
      .setExpirationTime('10m')
      .encode();
    expect401(await profile(t, unsecured), 'alg none');

    const valid = await sign(t, issuer.url, { sub: 'bob-sub' });
    const [h, , sig] = valid.split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'alice-sub', iss: issuer.url, aud: 'fjord' })).toString(
      'base64url',
    );
    expect401(await profile(t, `${h}.${forged}.${sig}`), 'tampered payload');
    expect401(await profile(t, `${valid.slice(0, -4)}AAAA`), 'tampered signature');

    // The valid token itself works (so the refusals above are about the changes).
    expect((await profile(t, valid)).status).toBe(200);
  });

  it('refuses a valid token that names no customer, or only an unverified e-mail', async () => {
    expect401(
      await profile(t, await sign(t, issuer.url, { sub: 'stranger', email: 'nobody@oidc.test' })),
      'unknown e-mail',
    );
    expect401(await profile(t, await sign(t, issuer.url, { sub: 'stranger-2' })), 'no e-mail');
    const unverified = await sign(t, issuer.url, {
      sub: 'sneaky',
      email: bob.email,
      email_verified: false,
    });
    expect401(await profile(t, unverified), 'unverified e-mail');
    // An e-mail the issuer does not say it verified is not trusted either.
    const unstated = await sign(t, issuer.url, {
      sub: 'sneaky-2',
      email: bob.email,
      email_verified: undefined,
    });
    expect401(await profile(t, unstated), 'e-mail without email_verified');
  });

  it('stops working for a suspended customer', async () => {
    const carol = await t.customer('carol@oidc.test');
    const token = await sign(t, issuer.url, { sub: 'carol-sub', email: carol.email });
    expect((await profile(t, token)).status).toBe(200);
    const suspend = await t.operator('PATCH', `/admin/v1/customers/${carol.id}`, { status: 'suspended' });
    expect(suspend.status).toBe(200);
    expect401(await profile(t, token), 'suspended, linked by sub');
    const dave = await t.customer('dave@oidc.test');
    await t.operator('PATCH', `/admin/v1/customers/${dave.id}`, { status: 'suspended' });
    expect401(
      await profile(t, await sign(t, issuer.url, { sub: 'dave-sub', email: dave.email })),
      'suspended, found by e-mail',
    );
    await t.operator('PATCH', `/admin/v1/customers/${carol.id}`, { status: 'active' });
    expect((await profile(t, token)).status).toBe(200);
  });

  it('takes the token in X-API-Key as well as in Authorization: Bearer', async () => {
    const token = await sign(t, issuer.url, { sub: 'alice-sub' });
    const r = await t.request('GET', '/v1/account/profile', { key: token });
    expect(r.status, r.text).toBe(200);
    expect(r.body.customer_id).toBe(alice.id);
    const bad = await sign(t, issuer.url, { sub: 'alice-sub' }, { aud: 'someone-else' });
    expect401(await t.request('GET', '/v1/account/profile', { key: bad }), 'bad token in X-API-Key');
  });

  it('is refused by operator routes', async () => {
    const token = await sign(t, issuer.url, { sub: 'alice-sub' });
    expect401(await t.request('GET', '/admin/v1/customers', { bearer: token }), 'operator route');
  });

  it('is refused with 403 by customer routes that do not take OIDC', async (ctx) => {
    const routes = t.fjord.routes.filter(
      (r) => r.access.kind === 'customer' && !r.access.oidc && r.method === 'GET' && !r.url.includes(':'),
    );
    // Every customer route takes OIDC today; the case applies once one does not.
    if (routes.length === 0) ctx.skip();
    const token = await sign(t, issuer.url, { sub: 'alice-sub' });
    for (const route of routes) {
      // Routes that take X-API-Key only (doc 3's areas) get the token in that header.
      const via =
        route.access.kind === 'customer' && route.access.bearer ? { bearer: token } : { key: token };
      const r = await t.request('GET', route.url, via);
      expect(r.status, route.url).toBe(403);
    }
  });

  it('judges expiry by Fjord’s clock', async () => {
    const token = await sign(t, issuer.url, { sub: 'alice-sub' }, { exp: 600 });
    expect((await profile(t, token)).status).toBe(200);
    await t.advance(3600);
    expect401(await profile(t, token), 'expired after the clock moved');
    expect((await profile(t, await sign(t, issuer.url, { sub: 'alice-sub' }))).status).toBe(200);
  });
});

describe('OIDC with FJORD_OIDC_JWKS_URL and no discovery document', () => {
  let issuer: Issuer;
  let t: TestFjord;
  let alice: TestCustomer;

  beforeAll(async () => {
    issuer = await startIssuer([es.jwk, rs.jwk], { discovery: false });
    t = await TestFjord.create({
      FJORD_OIDC_ISSUER: issuer.url,
      FJORD_OIDC_AUDIENCE: 'fjord',
      FJORD_OIDC_JWKS_URL: `${issuer.url}/keys/jwks.json`,
    });
    alice = await t.customer('alice@jwks.test');
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.close();
  });

  it('verifies against the configured key set without asking for discovery', async () => {
    for (const key of [es, rs]) {
      const r = await profile(t, await sign(t, issuer.url, { sub: 'a', email: alice.email }, { key }));
      expect(r.status, r.text).toBe(200);
      expect(r.body.customer_id).toBe(alice.id);
    }
    expect401(
      await profile(t, await sign(t, issuer.url, { sub: 'a' }, { aud: 'someone-else' })),
      'wrong aud',
    );
    expect401(await profile(t, await sign(t, issuer.url, { sub: 'a' }, { key: rogue })), 'unknown key');
    expect(issuer.hits['/.well-known/openid-configuration']).toBeUndefined();
    expect(issuer.hits['/keys/jwks.json']).toBeGreaterThanOrEqual(1);
  });
});

describe('OIDC when the issuer cannot be reached or is not configured', () => {
  it('answers 401, not 500, when discovery fails', async () => {
    const gone = await startIssuer([], { discovery: true });
    const url = gone.url;
    await gone.close();
    const t = await TestFjord.create({ FJORD_OIDC_ISSUER: url, FJORD_OIDC_AUDIENCE: 'fjord' });
    try {
      const c = await t.customer('e@unreachable.test');
      expect401(await profile(t, await sign(t, url, { sub: 'x', email: c.email })), 'unreachable issuer');
      // API keys keep working.
      expect((await t.request('GET', '/v1/account/profile', { key: c.pat })).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('refuses every JWT when no issuer is configured', async () => {
    const t = await TestFjord.create();
    try {
      const c = await t.customer('f@none.test');
      expect401(
        await profile(t, await sign(t, 'https://issuer.example', { sub: 'x', email: c.email })),
        'no issuer',
      );
    } finally {
      await t.close();
    }
  });
});
