import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.mjs';
import { ConsoleBrowser, consoleBrowserFound } from '../helpers/console-browser.js';
import { TestFjord } from '../helpers/fjord.js';
import { type LoginIssuer, startLoginIssuer } from '../helpers/oidc-login-issuer.js';

// fjord-test: one store (postgres). One pass runs it: Chromium on the console is its subject; the
// API under the pages is tested on both stores in the integration tier.

/**
 * "Sign in with …" in Chromium against an OIDC issuer started here on loopback: the authorization
 * code flow with PKCE, state and nonce, ending in the same HttpOnly session cookie a PAT's sign-in
 * sets; and the failures a person can meet (an unlinked identity, a callback not started here).
 */
const found = consoleBrowserFound('console-oidc');
const EMAIL = `oidc-${Math.random().toString(36).slice(2)}@example.test`;

let t: TestFjord;
let issuer: LoginIssuer;
let b: ConsoleBrowser;
let origin: string;

beforeAll(async () => {
  if (!found) return;
  await buildConsole();
  issuer = await startLoginIssuer('fjord-console', { sub: 'person-1', email: EMAIL, email_verified: true });
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_OIDC_ISSUER: issuer.url,
    FJORD_OIDC_CLIENT_ID: 'fjord-console',
    FJORD_OIDC_NAME: 'Test ID',
  });
  await t.customer(EMAIL);
  await t.fjord.start(['api']);
  origin = new URL(t.kernel.baseUrl()).origin;
  // The issuer's own pages are visited on purpose; nothing else may be.
  b = await ConsoleBrowser.open(() => [origin, issuer.url]);
}, 120_000);
afterAll(async () => {
  await b?.close();
  await t?.close();
  await issuer?.close();
});

describe.skipIf(!found)('console sign-in through an OIDC issuer', () => {
  it('signs in with the issuer: PKCE S256, state and nonce, then the HttpOnly session', async () => {
    const page = b.page;
    await page.goto(`${origin}/console/`);
    const button = page.getByRole('link', { name: 'Sign in with Test ID' });
    await button.waitFor();
    await b.shot('oidc-0-sign-in');
    await b.accessible('sign-in with OIDC');
    await button.click();
    await page.getByRole('heading', { name: 'Test issuer' }).waitFor();
    const [asked] = issuer.seen;
    expect(asked!.query).toMatchObject({
      response_type: 'code',
      client_id: 'fjord-console',
      redirect_uri: `${t.kernel.baseUrl()}/console/oidc/callback`,
      code_challenge_method: 'S256',
    });
    expect(asked!.query['state']).toMatch(/^[\w-]{40,}$/);
    expect(asked!.query['nonce']).toMatch(/^[\w-]{40,}$/);
    expect(asked!.query['code_challenge']).toMatch(/^[\w-]{43}$/);
    await page.getByRole('link', { name: 'Continue' }).click();
    await expect.poll(() => b.heading()).toBe('Overview');
    expect(asked!.pkceVerified).toBe(true);
    const cookies = await b.context.cookies(origin);
    expect(cookies.map((c) => c.name)).toEqual(['fjord_console']);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    // The session opens the customer's pages that a PAT would: API keys answer, not 403.
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('table', { name: /keys/i }).first().waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    const session = await page.evaluate(async () => {
      const r = await fetch('/console/session');
      return (await r.json()) as { kind: string; customer_id: string; csrf_token: string };
    });
    expect(session.kind).toBe('customer');
    const zones = await page.evaluate(
      async (csrf) => (await fetch('/v1/dns/zones', { headers: { 'x-fjord-csrf': csrf } })).status,
      session.csrf_token,
    );
    expect(zones).toBe(200);
    await b.shot('oidc-1-signed-in');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with Test ID' }).waitFor();
    expect(await b.context.cookies(origin)).toEqual([]);
  });

  it('refuses a callback this browser did not start, and says so', async () => {
    const page = b.page;
    await page.goto(`${origin}/console/oidc/callback?code=forged&state=forged`);
    await page.getByRole('alert').filter({ hasText: 'took too long or was not started here' }).waitFor();
    expect(new URL(page.url()).search).toBe(''); // the reason is read once, then dropped from the address
    expect(await b.context.cookies(origin)).toEqual([]);
  });

  it('signs nobody in when the identity is linked to no customer', async () => {
    const page = b.page;
    issuer.user.sub = 'stranger';
    issuer.user.email = 'stranger@example.test';
    await page.getByRole('link', { name: 'Sign in with Test ID' }).click();
    await page.getByRole('link', { name: 'Continue' }).click();
    await page.getByRole('alert').filter({ hasText: 'no Fjord account is linked' }).waitFor();
    expect(issuer.seen.at(-1)!.pkceVerified).toBe(true);
    expect(await b.context.cookies(origin)).toEqual([]);
    await b.shot('oidc-2-no-customer');
    await b.accessible('sign-in refused');
  });

  it('saw no script error, CSP refusal or request to another origin', () => {
    expect(b.problems).toEqual([]);
  });
});
