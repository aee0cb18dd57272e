import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * Three details of the contract an outside probe found short: the clusters area's own code for
 * schema refusals, X-RateLimit-* on keyed requests to the public catalogues, and a stable
 * creation order among resources created at the same instant in "newest first" lists.
 */
let t: TestFjord;
let a: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_LIMITS: JSON.stringify({ 'live.events': 20 }),
    FJORD_RATE_LIMITS: JSON.stringify({ 'live-events': { points: 10_000, duration: 60 } }),
  });
  a = await t.customer();
});
afterAll(() => t.close());

describe('the contract’s last details', () => {
  it('answers invalid_request for a cluster request its schema refuses', async () => {
    const r = await t.request('POST', '/v1/kubernetes/clusters', {
      key: a.pat,
      body: { name: 42, node_pools: 'none' },
    });
    expect(r.status).toBe(422);
    expect(r.body.detail.code).toBe('invalid_request');
    expect(r.body.detail.errors.length).toBeGreaterThan(0);
    // Other areas keep the kernel's code.
    const other = await t.request('POST', '/v1/live-events/events', { key: a.pat, body: { name: 42 } });
    expect(other.body.detail.code).toBe('validation_error');
  });

  it('counts keyed requests to the public catalogues and says so in X-RateLimit-*', async () => {
    for (const url of [
      '/v1/vps/plans/',
      '/v1/vps/os-templates',
      '/v1/vps/regions',
      '/v1/kubernetes/plans',
      '/v1/kubernetes/regions',
      '/v1/kubernetes/versions',
    ]) {
      const keyed = await t.request('GET', url, { key: a.pat });
      expect(keyed.status, url).toBe(200);
      expect(keyed.headers['x-ratelimit-limit'], url).toMatch(/^\d+$/);
      expect(keyed.headers['x-ratelimit-remaining'], url).toMatch(/^\d+$/);
      expect(keyed.headers['x-ratelimit-reset'], url).toMatch(/^\d+$/);
      const anonymous = await t.request('GET', url);
      expect(anonymous.status, url).toBe(200);
      expect(anonymous.headers['x-ratelimit-limit'], url).toBeUndefined();
      // A key that identifies nobody is ignored where none is needed.
      const wrong = await t.request('GET', url, { key: 'fjk_not_a_key' });
      expect(wrong.status, url).toBe(200);
    }
  });

  it('lists resources created at the same instant newest first, in creation order', async () => {
    // Made back to back, several share a millisecond of created_at: ties must keep creation order.
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await t.request('POST', '/v1/live-events/events', { key: a.pat, body: { name: `tie ${i}` } });
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    const list = await t.request('GET', '/v1/live-events/events?per_page=100', { key: a.pat });
    expect(list.status).toBe(200);
    const listed = (list.body.data ?? list.body.events ?? list.body.items) as {
      id: string;
      created_at: string;
    }[];
    const ties = listed.filter((e) => ids.includes(e.id));
    expect(ties.map((e) => e.id)).toEqual([...ids].reverse());
  });
});
