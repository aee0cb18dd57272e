import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { Limits } from '../../src/kernel/limits/quotas.js';
import { TestFjord } from '../helpers/fjord.js';

describe('the limits table', () => {
  it('answers per plan, applies overrides of one value or per plan, and refuses unknown names', () => {
    const l = new Limits({ 'dns.zones': { free: 5 }, 'storage.cors_rules': 20 });
    expect(l.of('dns.zones', 'free')).toBe(5);
    expect(l.of('dns.zones', 'basic')).toBe(10);
    expect(l.of('dns.zones', 'enterprise')).toBeNull();
    expect(l.of('storage.cors_rules', 'pro')).toBe(20);
    expect(l.allows('dns.zones', 'free', 4)).toBe(true);
    expect(l.allows('dns.zones', 'free', 5)).toBe(false);
    expect(() => loadConfig({ FJORD_LIMITS: '{"dns.zonez": 3}' })).toThrow(/dns\.zonez/);
    expect(() => loadConfig({ FJORD_LIMITS: '{"dns.zones": {"gold": 3}}' })).toThrow(/plans are/);
  });
});

describe('plans through the operator API', () => {
  let t: TestFjord;
  beforeAll(async () => {
    t = await TestFjord.create({ FJORD_LIMITS: '{"dns.zones": {"free": 1, "basic": 2}}' });
  });
  afterAll(() => t.close());

  it('publishes the table in force and moves a customer to a plan whose quota applies at once', async () => {
    const table = await t.operator('GET', '/admin/v1/limits');
    expect(table.status).toBe(200);
    expect(table.body.limits['dns.zones'].value).toMatchObject({ free: 1, basic: 2, enterprise: null });
    const c = await t.customer();
    const zone = (i: number) =>
      t.request('POST', '/v1/dns/zones', { key: c.pat, body: { domain: `plan${i}.example` } });
    expect((await zone(1)).status).toBe(201);
    expect((await zone(2)).body.detail.code).toBe('quota_exceeded');
    const moved = await t.operator('PUT', `/admin/v1/customers/${c.id}/plan`, { plan: 'basic' });
    expect(moved.status).toBe(200);
    expect(moved.body.plan).toBe('basic');
    expect((await zone(3)).status).toBe(201);
    expect((await t.operator('PUT', `/admin/v1/customers/${c.id}/plan`, { plan: 'gold' })).status).toBe(422);
    expect((await t.operator('PUT', '/admin/v1/customers/nobody/plan', { plan: 'pro' })).status).toBe(404);
  });
});

describe('FJORD_LIMITS changes what is enforced, not only what is published', () => {
  let t: TestFjord;
  beforeAll(async () => {
    t = await TestFjord.create({ FJORD_LIMITS: '{"storage.cors_rules":2,"dns.batch_records":3}' });
  });
  afterAll(() => t.close());

  it('refuses a third CORS rule and a fourth change in a DNS batch', async () => {
    const c = await t.customer();
    const key = (await t.kernel.identity.createServiceKey(c.id, 'storage', null)).key;
    expect(
      (await t.request('POST', '/v1/storage/buckets', { key, body: { bucket_name: 'limited' } })).status,
    ).toBe(201);
    const rules = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        id: `r${i}`,
        allowed_origins: ['*'],
        allowed_methods: ['GET'],
      }));
    const cors = (n: number) =>
      t.request('PUT', '/v1/storage/buckets/limited/cors', { key, body: { rules: rules(n) } });
    expect((await cors(2)).status).toBe(200);
    const three = await cors(3);
    expect(three.status).toBe(422);
    expect(three.body.detail.errors).toEqual([{ path: '/body/rules', message: '1-2 rules' }]);

    expect(
      (await t.request('POST', '/v1/dns/zones', { key: c.pat, body: { domain: 'limited.example' } })).status,
    ).toBe(201);
    const changes = (n: number, stem: string) =>
      Array.from({ length: n }, (_, i) => ({
        action: 'create',
        record_type: 'A',
        host: `${stem}${i}`,
        record: '192.0.2.1',
      }));
    const batch = (n: number, stem: string) =>
      t.request('POST', '/v1/dns/zones/limited.example/records/batch', {
        key: c.pat,
        body: { changes: changes(n, stem) },
      });
    expect((await batch(3, 'a')).status).toBe(200);
    const four = await batch(4, 'b');
    expect(four.status).toBe(422);
    expect(four.body.detail.errors).toEqual([{ path: '/body/changes', message: 'at most 3 changes' }]);
  });
});
