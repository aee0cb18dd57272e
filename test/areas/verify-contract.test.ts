import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer();
  b = await t.customer();
});
afterAll(() => t?.close());

const start = (key: string, recipient = `x${Math.random()}@example.test`.replace('0.', '')) =>
  t.request('POST', '/v1/verify/start', { key, body: { channel: 'email', recipient } });

describe('auth', () => {
  it('refuses missing, expired, revoked and wrong credentials on every route', async () => {
    await expectAuthMatrix(t, 'Code verification');
  });

  it('takes a verify service key in X-API-Key, and no other service’s key', async () => {
    const { key } = await t.kernel.identity.createServiceKey(a.id, 'verify', null);
    const r = await start(key);
    expect(r.status, r.text).toBe(200);
    expect((await t.request('GET', `/v1/verify/status/${r.body.session_id}`, { key })).status).toBe(200);
    const sms = await t.kernel.identity.createServiceKey(a.id, 'sms', null);
    expect((await start(sms.key)).status).toBe(403);
    // Code verification takes X-API-Key only (doc 3, Authentication §4).
    expect((await t.request('POST', '/v1/verify/start', { bearer: key, body: {} })).status).toBe(401);
  });

  it('lets verify:read see sessions but not start, check or cancel them', async () => {
    const reader = await t.kernel.identity.createPat(a.id, ['verify:read'], 'reader');
    const made = await start(a.pat);
    const id = made.body.session_id;
    expect((await t.request('GET', `/v1/verify/status/${id}`, { key: reader.key })).status).toBe(200);
    expect((await start(reader.key)).status).toBe(403);
    const check = { session_id: id, code: '123456' };
    expect((await t.request('POST', '/v1/verify/check', { key: reader.key, body: check })).status).toBe(403);
    expect((await t.request('DELETE', `/v1/verify/sessions/${id}`, { key: reader.key })).status).toBe(403);
  });
});

describe('account services', () => {
  it('lists verification once used, with its simulated back ends marked', async () => {
    const c = await t.customer();
    const before = await t.request('GET', '/v1/account/services', { key: c.pat });
    expect(before.body.some((e: { service_type: string }) => e.service_type === 'verify')).toBe(false);
    await start(c.pat);
    const after = await t.request('GET', '/v1/account/services', { key: c.pat });
    const entry = after.body.find((e: { service_type: string }) => e.service_type === 'verify');
    expect(entry).toMatchObject({
      name: 'Code verification',
      status: 'active',
      metadata: {
        sessions: 1,
        channels: { voice: { driver: 'simulated', simulated: true }, email: { simulated: true } },
      },
    });
  });
});

describe('tenant isolation', () => {
  it('shows customer B none of A’s sessions: session_not_found everywhere', async () => {
    const made = await start(a.pat);
    const id = made.body.session_id;
    await expectTenantIsolation(t, { key: a.pat }, { key: b.pat }, [
      { method: 'GET', url: `/v1/verify/status/${id}` },
      { method: 'POST', url: '/v1/verify/check', body: { session_id: id, code: '000000' } },
      { method: 'DELETE', url: `/v1/verify/sessions/${id}` },
    ]);
    const probe = await t.request('POST', '/v1/verify/check', {
      key: b.pat,
      body: { session_id: id, code: '000000' },
    });
    expect(probe.body.detail.code).toBe('session_not_found');
    // B's attempts took nothing from A's session.
    const after = await t.request('GET', `/v1/verify/status/${id}`, { key: a.pat });
    expect(after.body).toMatchObject({ status: 'delivered', attempt_count: 0 });
  });
});
