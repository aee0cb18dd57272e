import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.mjs';
import { OPERATOR_TOKEN, type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * The console's session, through `inject`: a PAT exchanged for an HttpOnly, SameSite=Strict
 * cookie; the cookie authenticates API calls only with its CSRF header; sign-out, a revoked PAT
 * or a changed credential ends it; an operator's session opens operator routes only. And the
 * page and its assets: a strict CSP, hashed assets cached as immutable, compressed.
 */
let t: TestFjord;
let a: TestCustomer;

beforeAll(async () => {
  await buildConsole();
  t = await TestFjord.create();
  a = await t.customer();
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const cookieOf = (setCookie: unknown): string => {
  const line = String(Array.isArray(setCookie) ? setCookie[0] : setCookie);
  return line.split(';')[0]!;
};

async function signIn(token: string) {
  const r = await t.request('POST', '/console/session', { body: { token } });
  expect(r.status).toBe(201);
  return { cookie: cookieOf(r.headers['set-cookie']), csrf: r.body.csrf_token as string, reply: r };
}

describe('console sessions', () => {
  it('exchanges a PAT for an HttpOnly, SameSite=Strict, expiring cookie that needs its CSRF header', async () => {
    const { cookie, csrf, reply } = await signIn(a.pat);
    const set = String(reply.headers['set-cookie']);
    expect(set).toMatch(/^fjord_console=fjs_[\w-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(reply.body).toMatchObject({ kind: 'customer', customer_id: a.id });
    expect(reply.text).not.toContain(a.pat);
    expect(reply.headers['cache-control']).toBe('no-store');

    // The cookie alone authenticates nothing (a form posted by another site would carry it).
    const bare = await t.request('GET', '/v1/dns/zones', { headers: { cookie } });
    expect(bare.status).toBe(401);
    const wrong = await t.request('GET', '/v1/dns/zones', {
      headers: { cookie, 'x-fjord-csrf': 'x'.repeat(43) },
    });
    expect(wrong.status).toBe(401);
    const ok = await t.request('POST', '/v1/dns/zones', {
      headers: { cookie, 'x-fjord-csrf': csrf },
      body: { domain: 'console-session.example' },
    });
    expect(ok.status).toBe(201);
    // The resource is the PAT's customer's.
    const listed = await t.request('GET', '/v1/dns/zones', { key: a.pat });
    expect(listed.body.zones.map((z: { name: string }) => z.name)).toContain('console-session.example');

    // After a reload the page asks who is signed in and gets the CSRF token again.
    const again = await t.request('GET', '/console/session', { headers: { cookie } });
    expect(again.status).toBe(200);
    expect(again.body.csrf_token).toBe(csrf);

    // Signing out needs the CSRF token too, ends the session and clears the cookie.
    expect((await t.request('DELETE', '/console/session', { headers: { cookie } })).status).toBe(401);
    const out = await t.request('DELETE', '/console/session', { headers: { cookie, 'x-fjord-csrf': csrf } });
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect(
      (await t.request('GET', '/v1/dns/zones', { headers: { cookie, 'x-fjord-csrf': csrf } })).status,
    ).toBe(401);
    expect((await t.request('GET', '/console/session', { headers: { cookie } })).status).toBe(401);
  });

  it('refuses what is not a PAT, and ends when the PAT is revoked', async () => {
    expect((await t.request('POST', '/console/session', { body: { token: 'fjp_nope' } })).status).toBe(401);
    const svc = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns', description: 'svc' },
    });
    expect(svc.status).toBe(201);
    expect((await t.request('POST', '/console/session', { body: { token: svc.body.key } })).status).toBe(401);

    const pat = await t.request('POST', '/v1/account/api-keys/pat', {
      key: a.pat,
      body: { scopes: ['dns:read'], description: 'reader' },
    });
    const { cookie, csrf } = await signIn(pat.body.key);
    const headers = { cookie, 'x-fjord-csrf': csrf };
    expect((await t.request('GET', '/v1/dns/zones', { headers })).status).toBe(200);
    // The session has the PAT's scopes, no more.
    expect(
      (await t.request('POST', '/v1/dns/zones', { headers, body: { domain: 'nope.example' } })).status,
    ).toBe(403);
    expect((await t.request('DELETE', `/v1/account/api-keys/${pat.body.id}`, { key: a.pat })).status).toBe(
      200,
    );
    expect((await t.request('GET', '/v1/dns/zones', { headers })).status).toBe(401);
  });

  it("opens the operator's routes with the operator token, and no customer's", async () => {
    const { cookie, csrf, reply } = await signIn(OPERATOR_TOKEN);
    expect(reply.body).toMatchObject({ kind: 'operator', customer_id: null });
    const headers = { cookie, 'x-fjord-csrf': csrf };
    expect((await t.request('GET', '/admin/v1/customers', { headers })).status).toBe(200);
    expect((await t.request('GET', '/v1/dns/zones', { headers })).status).toBe(401);
    // A customer's session opens no operator route.
    const c = await signIn(a.pat);
    const customer = { cookie: c.cookie, 'x-fjord-csrf': c.csrf };
    expect((await t.request('GET', '/admin/v1/customers', { headers: customer })).status).toBe(401);
  });
});

describe('console page and assets', () => {
  it('serves the page with a strict CSP at every depth, and hashed assets as immutable and compressed', async () => {
    for (const url of [
      '/console',
      '/console/',
      '/console/dns',
      '/console/dns/example.com',
      '/console/a/b/c',
    ]) {
      const page = await t.request('GET', url);
      expect(page.status, url).toBe(200);
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
      expect(page.headers['cache-control']).toBe('no-cache');
      expect(page.text).toContain('<script type="module" src="/console/assets/console-');
    }
    const page = await t.request('GET', '/console/');
    expect(page.text).not.toMatch(/<script>|<script [^>]*>[^<]/); // no inline script
    expect(page.text).not.toMatch(/https?:\/\//); // nothing from elsewhere
    const script = /src="\/console\/assets\/([\w.-]+\.js)"/.exec(page.text)![1]!;
    const style = /href="\/console\/assets\/([\w.-]+\.css)"/.exec(page.text)![1]!;
    const br = await t.request('GET', `/console/assets/${script}`, {
      headers: { 'accept-encoding': 'gzip, br' },
    });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const plain = await t.request('GET', `/console/assets/${script}`);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(br.raw.length).toBeLessThan(plain.raw.length / 2);
    const gz = await t.request('GET', `/console/assets/${style}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect((await t.request('GET', '/console/assets/nope.js')).status).toBe(404);
    expect((await t.request('GET', '/console/assets/..%2fpackage.json')).status).not.toBe(200);
  });
});
