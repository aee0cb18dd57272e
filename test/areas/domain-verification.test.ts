import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { TinyDns } from '../helpers/tiny-dns.js';

let t: TestFjord;
let dns: TinyDns;
let c: TestCustomer;

beforeAll(async () => {
  dns = await TinyDns.start();
  t = await TestFjord.create({ FJORD_RESOLVER: dns.address });
  c = await t.customer();
});
afterAll(async () => {
  await t.close();
  await dns.close();
});

const create = (body: object, key = c.pat) =>
  t.request('POST', '/v1/domain-verification/domains', { key, body });

describe('domain verification', () => {
  it('creates a pending DNS_TXT record with instructions in both forms', async () => {
    const r = await create({ domain: 'Example-One.COM.', purpose: 'email', metadata: { team: 'mail' } });
    expect(r.status).toBe(201);
    const d = r.body;
    expect(d).toMatchObject({
      domain: 'example-one.com',
      purpose: 'email',
      status: 'pending',
      verification_method: 'DNS_TXT',
      internal_dns_zone_id: null,
      verification_attempts: 0,
      verified_at: null,
      metadata: { team: 'mail' },
    });
    expect(d.verification_token).toMatch(/^[a-z0-9]{32}$/);
    expect(d.dns_challenge).toBe(d.verification_token);
    expect(d.instructions).toMatchObject({
      method: 'DNS_TXT',
      record_type: 'TXT',
      record_name: '_fjord.example-one.com',
      record_value: `fjord-domain-verification=${d.verification_token}`,
      ttl_recommendation: 300,
      auto_verified: false,
    });
    expect(d.instructions.example_bind).toBe(
      `_fjord.example-one.com. 300 IN TXT "fjord-domain-verification=${d.verification_token}"`,
    );
    expect(d.dns_record_name).toBe('_fjord.example-one.com');
    expect(d.dns_instructions).toEqual({
      record_type: 'TXT',
      host: '_fjord.example-one.com',
      value: d.instructions.record_value,
    });
  });

  it('normalises internationalised names to punycode and refuses non-domains', async () => {
    const r = await create({ domain: 'BlÅbær.no', purpose: 'other' });
    expect(r.status).toBe(201);
    expect(r.body.domain).toBe('xn--blbr-roah.no');
    for (const domain of [
      'localhost',
      '192.0.2.1',
      'exa mple.com',
      '-bad.com',
      'a..b.com',
      'https://x.com',
      'x.123',
    ]) {
      const bad = await create({ domain, purpose: 'other' });
      expect(bad.status, domain).toBe(422);
      expect(bad.body.detail.errors[0].path).toBe('/body/domain');
    }
    expect((await create({ domain: 'ok.com', purpose: 'phishing' })).status).toBe(422);
    expect((await create({ domain: 'ok.com', purpose: 'other', verification_method: 'HTTP' })).status).toBe(
      422,
    );
  });

  it('refuses a second live record for the same domain and purpose', async () => {
    expect((await create({ domain: 'twice.com', purpose: 'webhook' })).status).toBe(201);
    const again = await create({ domain: 'TWICE.com', purpose: 'webhook' });
    expect(again.status).toBe(409);
    expect(again.body.detail.code).toBe('domain_already_registered');
    expect((await create({ domain: 'twice.com', purpose: 'custom_host' })).status).toBe(201);
  });

  it('verifies once the TXT record exists, and records every check in the history', async () => {
    const d = (await create({ domain: 'txt-check.com', purpose: 'email' })).body;
    const url = `/v1/domain-verification/domains/${d.id}`;

    const missing = await t.request('POST', `${url}/verify`, { key: c.pat });
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({
      id: d.id,
      domain: 'txt-check.com',
      status: 'pending',
      verified: false,
    });
    expect(missing.body.dns_records_found).toEqual([]);
    expect(missing.body.message).toContain('_fjord.txt-check.com');

    dns.txt.set('_fjord.txt-check.com', ['v=spf1 -all', 'fjord-domain-verification=wrong']);
    const wrong = await t.request('POST', `${url}/verify`, { key: c.pat });
    expect(wrong.body.verified).toBe(false);
    expect(wrong.body.dns_records_found).toEqual(['v=spf1 -all', 'fjord-domain-verification=wrong']);

    dns.txt.set('_fjord.txt-check.com', ['v=spf1 -all', d.instructions.record_value]);
    const ok = await t.request('POST', `${url}/verify`, { key: c.pat });
    expect(ok.body).toMatchObject({ status: 'verified', verified: true, message: 'Domain verified.' });
    expect(ok.body.dns_records_found).toContain(d.instructions.record_value);
    expect(Date.parse(ok.body.checked_at)).not.toBeNaN();

    const after = (await t.request('GET', url, { key: c.pat })).body;
    expect(after).toMatchObject({ status: 'verified', verification_attempts: 3 });
    expect(after.verified_at).toBe(ok.body.checked_at);
    expect(after.last_checked_at).toBe(ok.body.checked_at);

    const history = (await t.request('GET', `${url}/history`, { key: c.pat })).body;
    expect(history.map((h: { event_type: string }) => h.event_type)).toEqual([
      'check_completed',
      'check_completed',
      'check_completed',
    ]);
    expect(history[0]).toMatchObject({
      previous_status: 'pending',
      new_status: 'pending',
      performed_by: 'api',
      dns_response: { records_found: false, actual_values: [] },
    });
    expect(history[2]).toMatchObject({ previous_status: 'pending', new_status: 'verified' });
    expect(history[2].dns_response.records_found).toBe(true);
  });

  it('verifies a DNS_CNAME record', async () => {
    const d = (
      await create({ domain: 'cname-check.com', purpose: 'link_branding', verification_method: 'DNS_CNAME' })
    ).body;
    expect(d.instructions).toMatchObject({ method: 'DNS_CNAME', record_type: 'CNAME' });
    expect(d.instructions.cname_record_name).toBe(d.instructions.record_name);
    expect(d.instructions.cname_record_value).toBe(`${d.verification_token}.verify.fjord.test`);
    expect(d.instructions.cname_example_bind).toContain(' IN CNAME ');
    const url = `/v1/domain-verification/domains/${d.id}/verify`;
    expect((await t.request('POST', url, { key: c.pat })).body.verified).toBe(false);
    dns.cname.set(d.instructions.cname_record_name, d.instructions.cname_record_value);
    const ok = await t.request('POST', url, { key: c.pat });
    expect(ok.body.verified).toBe(true);
    expect(ok.body.dns_records_found).toEqual([d.instructions.cname_record_value]);
  });

  it('answers a failed lookup with verified: false and a message, not an error', async () => {
    const d = (await create({ domain: 'servfail.com', purpose: 'other' })).body;
    dns.failing.add('_fjord.servfail.com');
    const r = await t.request('POST', `/v1/domain-verification/domains/${d.id}/verify`, { key: c.pat });
    expect(r.status).toBe(200);
    expect(r.body.verified).toBe(false);
    expect(r.body.message).toMatch(/lookup failed/i);
  });

  it('revokes only from verified, replaces metadata, and refuses verify after revocation', async () => {
    const d = (await create({ domain: 'revoke.com', purpose: 'email', metadata: { a: 1 } })).body;
    const url = `/v1/domain-verification/domains/${d.id}`;
    const early = await t.request('PATCH', url, { key: c.pat, body: { status: 'revoked' } });
    expect(early.status).toBe(422);
    expect(early.body.detail.code).toBe('invalid_status_transition');
    const meta = await t.request('PATCH', url, { key: c.pat, body: { metadata: { b: 2 } } });
    expect(meta.status).toBe(200);
    expect(meta.body.metadata).toEqual({ b: 2 });

    dns.txt.set('_fjord.revoke.com', [d.instructions.record_value]);
    await t.request('POST', `${url}/verify`, { key: c.pat });
    const toVerified = await t.request('PATCH', url, { key: c.pat, body: { status: 'verified' } });
    expect(toVerified.status).toBe(422);
    const revoked = await t.request('PATCH', url, { key: c.pat, body: { status: 'revoked' } });
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    const verify = await t.request('POST', `${url}/verify`, { key: c.pat });
    expect(verify.status).toBe(409);
    expect(verify.body.detail.code).toBe('domain_revoked');
    const history = (await t.request('GET', `${url}/history`, { key: c.pat })).body;
    expect(history.at(-1)).toMatchObject({
      event_type: 'revoked',
      previous_status: 'verified',
      new_status: 'revoked',
    });
    // A revoked domain can be registered again for the same purpose.
    expect((await create({ domain: 'revoke.com', purpose: 'email' })).status).toBe(201);
  });

  it('soft-deletes: gone from the API, kept in the store', async () => {
    const d = (await create({ domain: 'deleted.com', purpose: 'other' })).body;
    const url = `/v1/domain-verification/domains/${d.id}`;
    const del = await t.request('DELETE', url, { key: c.pat });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, message: 'Domain verification for deleted.com deleted.' });
    expect((await t.request('GET', url, { key: c.pat })).status).toBe(404);
    expect((await t.request('DELETE', url, { key: c.pat })).status).toBe(404);
    const row = await t.kernel.store.db
      .selectFrom('domain_verifications' as never)
      .selectAll()
      .where('id' as never, '=', d.id as never)
      .executeTakeFirst();
    expect(row).toBeDefined();
  });

  it('lists with purpose and status filters and page / page_size', async () => {
    const other = await t.customer();
    for (let i = 0; i < 5; i++)
      await create({ domain: `list${i}.com`, purpose: i < 3 ? 'webhook' : 'email' }, other.pat);
    const all = await t.request('GET', '/v1/domain-verification/domains?page_size=2', { key: other.pat });
    expect(all.body).toMatchObject({ total: 5, page: 1, page_size: 2 });
    expect(all.body.domains).toHaveLength(2);
    const page3 = await t.request('GET', '/v1/domain-verification/domains?page_size=2&page=3', {
      key: other.pat,
    });
    expect(page3.body.domains).toHaveLength(1);
    const hooks = await t.request('GET', '/v1/domain-verification/domains?purpose=webhook', {
      key: other.pat,
    });
    expect(hooks.body.total).toBe(3);
    const verified = await t.request('GET', '/v1/domain-verification/domains?status=verified', {
      key: other.pat,
    });
    expect(verified.body.total).toBe(0);
    expect(
      (await t.request('GET', '/v1/domain-verification/domains?status=done', { key: other.pat })).status,
    ).toBe(422);
  });

  it('fails pending domains after 7 days and verified ones after 3 missed daily re-checks', async () => {
    const owner = await t.customer();
    const stale = (await create({ domain: 'stale.com', purpose: 'other' }, owner.pat)).body;
    const kept = (await create({ domain: 'kept.com', purpose: 'other' }, owner.pat)).body;
    dns.txt.set('_fjord.kept.com', [kept.instructions.record_value]);
    await t.request('POST', `/v1/domain-verification/domains/${kept.id}/verify`, { key: owner.pat });

    await t.advance(8 * 86400);
    const s = (await t.request('GET', `/v1/domain-verification/domains/${stale.id}`, { key: owner.pat }))
      .body;
    expect(s.status).toBe('failed');
    expect(s.failed_reason).toContain('7 days');
    expect(
      (await t.request('GET', `/v1/domain-verification/domains/${kept.id}`, { key: owner.pat })).body.status,
    ).toBe('verified');

    dns.txt.delete('_fjord.kept.com');
    for (let day = 0; day < 3; day++) await t.advance(86400);
    const k = (await t.request('GET', `/v1/domain-verification/domains/${kept.id}`, { key: owner.pat })).body;
    expect(k.status).toBe('failed');
    expect(k.failed_reason).toContain('3 daily checks');
    const history = (
      await t.request('GET', `/v1/domain-verification/domains/${kept.id}/history`, { key: owner.pat })
    ).body;
    expect(history.some((h: { performed_by: string }) => h.performed_by === 'system')).toBe(true);

    // A failed domain whose record is back verifies again.
    dns.txt.set('_fjord.kept.com', [kept.instructions.record_value]);
    const again = await t.request('POST', `/v1/domain-verification/domains/${kept.id}/verify`, {
      key: owner.pat,
    });
    expect(again.body).toMatchObject({ status: 'verified', verified: true });
  });

  it('does not count a resolver outage against a verified domain', async () => {
    const owner = await t.customer();
    const d = (await create({ domain: 'outage.com', purpose: 'other' }, owner.pat)).body;
    dns.txt.set('_fjord.outage.com', [d.instructions.record_value]);
    await t.request('POST', `/v1/domain-verification/domains/${d.id}/verify`, { key: owner.pat });
    dns.failing.add('_fjord.outage.com');
    for (let day = 0; day < 4; day++) await t.advance(86400);
    const after = (await t.request('GET', `/v1/domain-verification/domains/${d.id}`, { key: owner.pat }))
      .body;
    expect(after.status).toBe('verified');
    dns.failing.delete('_fjord.outage.com');
  });

  it('keeps one live record per domain and purpose under concurrent creation', async () => {
    const owner = await t.customer();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => create({ domain: 'concurrent.com', purpose: 'email' }, owner.pat)),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(4);
  });

  it('accepts a dns service key and PATs with the area scopes', async () => {
    const { key } = await t.kernel.identity.createServiceKey(c.id, 'dns', null);
    expect((await t.request('GET', '/v1/domain-verification/domains', { key })).status).toBe(200);
    const pat = await t.kernel.identity.createPat(c.id, ['domain-verification:read'], null);
    expect((await t.request('GET', '/v1/domain-verification/domains', { key: pat.key })).status).toBe(200);
    expect((await create({ domain: 'scoped.com', purpose: 'other' }, pat.key)).status).toBe(403);
  });

  it('isolates customers', async () => {
    const d = (await create({ domain: 'mine.com', purpose: 'other' })).body;
    const other = await t.customer();
    const url = `/v1/domain-verification/domains/${d.id}`;
    await expectTenantIsolation(t, { key: c.pat }, { key: other.pat }, [
      { method: 'GET', url },
      { method: 'GET', url: `${url}/history` },
      { method: 'PATCH', url, body: { metadata: {} } },
      { method: 'POST', url: `${url}/verify` },
      { method: 'DELETE', url },
    ]);
    const list = await t.request('GET', '/v1/domain-verification/domains', { key: other.pat });
    expect(list.body.total).toBe(0);
  });

  it('answers 401/403 correctly on every route', async () => {
    await expectAuthMatrix(t, 'Domain verification');
  });
});
