import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVISIONING_SECONDS } from '../../src/areas/clusters/lifecycle.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * Fault injection on the simulated driver: an error at a provisioning step, a degraded and a
 * suspended cluster, a region out of capacity — and which operations each state allows.
 */
let t: TestFjord;
let a: TestCustomer;
beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_LIMITS: JSON.stringify({ 'kubernetes.clusters': 20 }),
    FJORD_RATE_LIMITS: JSON.stringify({ kubernetes: { points: 10_000, duration: 60 } }),
  });
  a = await t.customer();
});
afterAll(() => t.close());

const pools = [{ name: 'default', plan_code: 'k8s-node-s', count: 2 }];
const create = (name: string) =>
  t.request('POST', '/v1/kubernetes/clusters', { key: a.pat, body: { name, node_pools: pools } });
const get = async (id: string) =>
  (await t.request('GET', `/v1/kubernetes/clusters/${id}`, { key: a.pat })).body;
const fault = (id: string, body: unknown) =>
  t.operator('PUT', `/admin/v1/kubernetes/clusters/${id}/fault`, body);
const kubeconfig = (id: string) =>
  t.request('GET', `/v1/kubernetes/clusters/${id}/kubeconfig`, { key: a.pat });

describe('cluster fault injection', () => {
  it('fails provisioning at the named step, once the clock reaches it', async () => {
    const c = await create('fails-at-gateway');
    expect(c.status).toBe(202);
    const set = await fault(c.body.id, { fault: 'error', step: 'gateway', message: 'no gateway quota' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ fault: 'error', step: 'gateway', status: 'provisioning' });
    await t.advance(10);
    expect(await get(c.body.id)).toMatchObject({ status: 'provisioning', provisioning_step: 'network' });
    await t.advance(60);
    const failed = await get(c.body.id);
    expect(failed).toMatchObject({ status: 'error', provisioning_step: 'gateway', api_endpoint: null });
    expect(failed.status_message).toContain('no gateway quota');
    expect((await kubeconfig(c.body.id)).body.detail.code).toBe('not_ready');
    const history = (await t.request('GET', `/v1/kubernetes/clusters/${c.body.id}/history`, { key: a.pat }))
      .body.history as { action: string; actor: string }[];
    expect(history.some((h) => h.action === 'cluster.fault' && h.actor === 'operator:fault-injection')).toBe(
      true,
    );
    const del = await t.request('DELETE', `/v1/kubernetes/clusters/${c.body.id}`, {
      key: a.pat,
      body: { confirm_name: 'fails-at-gateway' },
    });
    expect(del.status).toBe(202);
    expect((await get(c.body.id)).status).toBe('deleting');
  });

  it('keeps a degraded cluster usable, holds a suspended one, and clears back to the clock’s state', async () => {
    const c = await create('flaky');
    await t.advance(PROVISIONING_SECONDS);
    expect((await fault(c.body.id, { fault: 'degraded', message: 'node NotReady' })).body.status).toBe(
      'degraded',
    );
    expect((await kubeconfig(c.body.id)).status).toBe(200);
    const scale = (count: number) =>
      t.request('POST', `/v1/kubernetes/clusters/${c.body.id}/node-pools/default/scale`, {
        key: a.pat,
        body: { count },
      });
    expect((await scale(3)).status).toBe(200);
    expect((await fault(c.body.id, { fault: 'suspended' })).body.status).toBe('suspended');
    expect((await scale(4)).body.detail.code).toBe('not_ready');
    expect((await kubeconfig(c.body.id)).status).toBe(409);
    const ip = await t.request('POST', `/v1/kubernetes/clusters/${c.body.id}/ips`, { key: a.pat, body: {} });
    expect(ip.status).toBe(409);
    const cleared = await fault(c.body.id, { fault: null });
    expect(cleared.body).toMatchObject({ fault: null, status: 'running' });
    expect((await get(c.body.id)).status).toBe('running');
    const bad = await fault(c.body.id, { fault: 'degraded', step: 'network' });
    expect(bad.status).toBe(422);
    expect((await fault('nope', { fault: 'error' })).status).toBe(404);
    const notOperator = await t.request('PUT', `/admin/v1/kubernetes/clusters/${c.body.id}/fault`, {
      key: a.pat,
      body: { fault: 'error' },
    });
    expect([401, 403]).toContain(notOperator.status);
  });

  it('answers 503 capacity while the operator marks a region out of capacity', async () => {
    const out = await t.operator('PUT', '/admin/v1/kubernetes/regions/no/capacity', {
      available: false,
      message: 'Region no is full until the new rack arrives.',
    });
    expect(out.body).toMatchObject({ region: 'no', available: false });
    const refused = await create('no-room');
    expect([refused.status, refused.body.detail.code]).toEqual([503, 'capacity']);
    expect(refused.body.detail.message).toContain('new rack');
    await t.operator('PUT', '/admin/v1/kubernetes/regions/no/capacity', { available: true });
    expect((await create('room-again')).status).toBe(202);
    expect(
      (await t.operator('PUT', '/admin/v1/kubernetes/regions/mars/capacity', { available: false })).status,
    ).toBe(404);
  });
});
