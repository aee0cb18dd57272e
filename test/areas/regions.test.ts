import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAuthMatrix } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let c: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create();
  c = await t.customer();
});
afterAll(() => t.close());

describe('regions', () => {
  it('lists regions with code, name, country and status', async () => {
    const r = await t.request('GET', '/v1/regions', { key: c.pat });
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(r.body.regions.length);
    expect(r.body.regions.length).toBeGreaterThan(0);
    for (const region of r.body.regions) {
      expect(Object.keys(region).sort()).toEqual(['code', 'country', 'name', 'status']);
      expect(['active', 'maintenance', 'deprecated']).toContain(region.status);
    }
    expect(r.body.regions.map((x: { code: string }) => x.code)).toContain('oslo');
  });

  it('details a region with its available services; unknown is 404', async () => {
    const r = await t.request('GET', '/v1/regions/oslo', { key: c.pat });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ code: 'oslo', name: 'Oslo', country: 'NO', status: 'active' });
    expect(r.body.available_services).toEqual(expect.arrayContaining(['vps', 'storage', 'dns', 'database']));
    const missing = await t.request('GET', '/v1/regions/atlantis', { key: c.pat });
    expect(missing.status).toBe(404);
    expect(missing.body.detail.code).toBe('not_found');
    expect((await t.request('GET', '/v1/regions/atlantis/pricing', { key: c.pat })).status).toBe(404);
  });

  it('prices a region in NOK by default and in each supported currency', async () => {
    const nok = await t.request('GET', '/v1/regions/oslo/pricing', { key: c.pat });
    expect(nok.status).toBe(200);
    expect(nok.body.region).toBe('oslo');
    expect(nok.body.currency).toBe('NOK');
    expect(nok.body.services.sms.unit).toBe(0.99);
    for (const [currency, smsUnit] of [
      ['SEK', 0.99],
      ['DKK', 0.79],
      ['EUR', 0.1],
      ['usd', 0.1],
    ] as const) {
      const r = await t.request('GET', `/v1/regions/oslo/pricing?currency=${currency}`, { key: c.pat });
      expect(r.status, currency).toBe(200);
      expect(r.body.currency).toBe(currency.toUpperCase());
      expect(r.body.services.sms.unit).toBe(smsUnit);
      expect(Object.keys(r.body.services).sort()).toEqual(Object.keys(nok.body.services).sort());
    }
    const bad = await t.request('GET', '/v1/regions/oslo/pricing?currency=GBP', { key: c.pat });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.errors[0].path).toBe('/query/currency');
  });

  it('prices only the services a region offers', async () => {
    const detail = await t.request('GET', '/v1/regions/copenhagen', { key: c.pat });
    const pricing = await t.request('GET', '/v1/regions/copenhagen/pricing', { key: c.pat });
    expect(Object.keys(pricing.body.services).sort()).toEqual([...detail.body.available_services].sort());
  });

  it('accepts any service key and PATs with regions:read', async () => {
    const { key } = await t.kernel.identity.createServiceKey(c.id, 'iot', null);
    expect((await t.request('GET', '/v1/regions', { key })).status).toBe(200);
    const pat = await t.kernel.identity.createPat(c.id, ['regions:read'], null);
    expect((await t.request('GET', '/v1/regions/oslo', { bearer: pat.key })).status).toBe(200);
  });

  it('answers 401/403 correctly on every route', async () => {
    await expectAuthMatrix(t, 'Regions');
  });
});
