import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';
import { TinyDns } from '../helpers/tiny-dns.js';

/**
 * Custom domains of container apps (simulated driver): proof through domain verification
 * (purpose custom_host), a CNAME to the app's host looked up through a resolver, a certificate
 * from the local CA, renewal before expiry on the clock, refusals, the per-app quota under
 * concurrent creates, and tenant isolation.
 */
let t: TestFjord;
let dns: TinyDns;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  dns = await TinyDns.start();
  t = await TestFjord.create({
    FJORD_RESOLVER: dns.address,
    FJORD_RATE_LIMITS: JSON.stringify({ 'container-apps': { points: 10_000, duration: 60 } }),
  });
  b = await t.customer();
});
beforeEach(async () => {
  a = await t.customer();
});
afterAll(async () => {
  await t.close();
  await dns.close();
});

const createApp = async (name: string, key = a.pat) => {
  const r = await t.request('POST', '/v1/apps', { key, body: { name, image: 'quay.io/team/web:1' } });
  expect(r.status).toBe(201);
  return r.body as { id: string; url: string };
};
const addDomain = (app: string, host: string, key = a.pat) =>
  t.request('POST', `/v1/apps/${app}/domains`, { key, body: { host_name: host } });
/** Proves `domain` for custom_host through Fjord's domain verification and a TXT record. */
async function prove(domain: string, key = a.pat) {
  const v = await t.request('POST', '/v1/domain-verification/domains', {
    key,
    body: { domain, purpose: 'custom_host' },
  });
  expect(v.status).toBe(201);
  dns.txt.set(v.body.instructions.record_name, [v.body.instructions.record_value]);
  const r = await t.request('POST', `/v1/domain-verification/domains/${v.body.id}/verify`, { key });
  expect(r.body.status).toBe('verified');
}

describe('container app custom domains', () => {
  it('activates a proven, pointed name, issues its certificate and renews it before expiry', async () => {
    const app = await createApp('site');
    const host = new URL(app.url).hostname;
    const d = await addDomain(app.id, 'WWW.Shop-One.example.');
    expect(d.status).toBe(201);
    expect(d.body).toMatchObject({
      host_name: 'www.shop-one.example',
      status: 'pending',
      cname_target: host,
      certificate_status: 'pending',
      certificate_expires_at: null,
    });
    const check = () => t.request('POST', `/v1/apps/site/domains/www.shop-one.example/check`, { key: a.pat });

    let c = await check();
    expect(c.body.status).toBe('pending');
    expect(c.body.status_message).toContain('not proven');
    expect(c.body.status_message).toContain(`no CNAME to ${host}`);

    await prove('shop-one.example');
    dns.cname.set('www.shop-one.example', 'elsewhere.example');
    c = await check();
    expect(c.body.status).toBe('pending');
    expect(c.body.status_message).not.toContain('not proven');
    expect(c.body.status_message).toContain('elsewhere.example');

    dns.cname.set('www.shop-one.example', `${host}.`);
    c = await check();
    expect(c.body).toMatchObject({ status: 'active', certificate_status: 'issued', certificate_error: null });
    const issued = Date.parse(c.body.certificate_issued_at);
    expect(Date.parse(c.body.certificate_expires_at) - issued).toBe(90 * 86_400_000);

    // The certificate names the host and is signed by the CA Fjord publishes.
    const ca = await t.request('GET', '/v1/apps/certificate-authority');
    expect(ca.status).toBe(200);
    const caCert = new X509Certificate(ca.body.certificate_pem);
    const leaf = new X509Certificate(c.body.certificate_pem);
    expect(leaf.subjectAltName).toBe('DNS:www.shop-one.example');
    expect(leaf.verify(caCert.publicKey)).toBe(true);

    // 61 days on, the hourly job renews it (30 days before expiry).
    await t.advance(61 * 86_400);
    await t.advance(3600);
    const renewed = await t.request('GET', `/v1/apps/site/domains/www.shop-one.example`, { key: a.pat });
    expect(Date.parse(renewed.body.certificate_issued_at)).toBeGreaterThan(issued);
    expect(Date.parse(renewed.body.certificate_expires_at)).toBeGreaterThan(
      Date.parse(c.body.certificate_expires_at),
    );

    const list = await t.request('GET', `/v1/apps/site/domains`, { key: a.pat });
    expect(list.body).toMatchObject({ total: 1, domains: [{ host_name: 'www.shop-one.example' }] });
    const gone = await t.request('DELETE', `/v1/apps/site/domains/www.shop-one.example`, { key: a.pat });
    expect(gone.body).toEqual({ deleted: true, id: d.body.id });
  });

  it('refuses names that are not custom hosts, and one another app already has', async () => {
    const app = await createApp('names');
    for (const host of ['localhost', 'not a name', `x.${new URL(app.url).hostname}`, 'apps.fjord.test'])
      expect((await addDomain(app.id, host)).body.detail?.code, host).toBe('invalid_host_name');
    expect((await addDomain(app.id, 'taken.example')).status).toBe(201);
    const theirs = await createApp('other', b.pat);
    const again = await addDomain(theirs.id, 'taken.example', b.pat);
    expect([again.status, again.body.detail.code]).toEqual([409, 'domain_exists']);
  });

  it('never shows or checks another customer’s domain, nor counts their proof', async () => {
    const app = await createApp('mine');
    await addDomain(app.id, 'www.mine.example');
    for (const [method, path] of [
      ['GET', `/v1/apps/${app.id}/domains`],
      ['GET', `/v1/apps/${app.id}/domains/www.mine.example`],
      ['POST', `/v1/apps/${app.id}/domains/www.mine.example/check`],
      ['DELETE', `/v1/apps/${app.id}/domains/www.mine.example`],
    ] as const)
      expect((await t.request(method, path, { key: b.pat })).status).toBe(404);
    // B proves the parent name: that proves nothing for A.
    await prove('mine.example', b.pat);
    dns.cname.set('www.mine.example', new URL(app.url).hostname);
    const c = await t.request('POST', `/v1/apps/mine/domains/www.mine.example/check`, { key: a.pat });
    expect(c.body.status).toBe('pending');
    expect(c.body.status_message).toContain('not proven');
  });

  it('holds the per-app domain quota under concurrent creates', async () => {
    const app = await createApp('race');
    // The free plan allows 2 custom domains per app.
    await expectLimitHolds({
      room: 2,
      attempts: 20,
      send: (i) => addDomain(app.id, `d${i}.race-${app.id.slice(-6)}.example`),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });
});
