import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PROVISIONING_SECONDS,
  PROVISIONING_STEPS,
  UPGRADE_BACKUP_SECONDS,
  UPGRADE_SECONDS,
} from '../../src/areas/clusters/lifecycle.js';
import { DRAIN_SECONDS, JOIN_SECONDS } from '../../src/areas/clusters/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';

/** Managed clusters: catalogue and estimate, validation, the lifecycle on the clock, the limit. */
let t: TestFjord;
let a: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_LIMITS: JSON.stringify({ 'kubernetes.clusters': 6 }),
    FJORD_RATE_LIMITS: JSON.stringify({ kubernetes: { points: 10_000, duration: 60 } }),
  });
  a = await t.customer();
});
afterAll(() => t.close());

const pools = [
  { name: 'default', plan_code: 'k8s-node-s', count: 2, labels: { 'fjord.example/tier': 'web' } },
];
const create = (body: Record<string, unknown>, key = a.pat) =>
  t.request('POST', '/v1/kubernetes/clusters', { key, body: { node_pools: pools, ...body } });
const code = (r: { body: { detail?: { code: string } } }) => r.body.detail?.code;

describe('managed clusters', () => {
  it('lists plans, regions and versions, and estimates in integer minor units', async () => {
    const plans = (await t.request('GET', '/v1/kubernetes/plans?kind=node')).body.plans;
    expect(plans.map((p: { plan_code: string }) => p.plan_code)).toEqual([
      'k8s-node-s',
      'k8s-node-m',
      'k8s-node-l',
    ]);
    expect(plans[0]).toMatchObject({ prices: { NOK: 365, EUR: 31.76 }, hourly: { NOK: 0.5 } });
    const regions = (await t.request('GET', '/v1/kubernetes/regions')).body.regions;
    expect(regions.find((r: { code: string }) => r.code === 'fi')).toMatchObject({
      kubernetes_available: false,
    });
    const versions = (await t.request('GET', '/v1/kubernetes/versions')).body.versions;
    expect(versions.filter((v: { default: boolean }) => v.default)).toEqual([
      expect.objectContaining({ version: '1.34' }),
    ]);
    const e = await t.request('POST', '/v1/kubernetes/estimate', {
      body: {
        plan_code: 'k8s-cluster-prod',
        region: 'dk',
        currency: 'EUR',
        node_pools: [{ name: 'a', plan_code: 'k8s-node-m', count: 3 }],
      },
    });
    expect(e.body).toEqual({
      currency: 'EUR',
      region_multiplier: 1.05,
      lines: [
        { item: 'controlplane:k8s-cluster-prod', quantity: 1, monthly: 91.26 },
        { item: 'node_pool:a:k8s-node-m', quantity: 3, monthly: 200.06 },
        { item: 'ip:gateway (included)', quantity: 1, monthly: 0 },
      ],
      monthly_total: 291.32,
    });
  });

  it('validates names, pools, labels, taints, CIDRs, plans and regions', async () => {
    expect(code(await create({ name: 'A' }))).toBe('invalid_request');
    expect(code(await create({ name: 'ok-1', node_pools: [] }))).toBe('invalid_request');
    expect(code(await create({ name: 'ok-1', node_pools: [{ ...pools[0], count: 17 }] }))).toBe(
      'invalid_request',
    );
    expect(
      code(await create({ name: 'ok-1', node_pools: [{ ...pools[0], labels: { 'bad key!': 'x' } }] })),
    ).toBe('invalid_request');
    expect(
      code(
        await create({
          name: 'ok-1',
          node_pools: [{ ...pools[0], taints: [{ key: 'gpu', effect: 'Sometimes' }] }],
        }),
      ),
    ).toBe('invalid_request');
    expect(code(await create({ name: 'ok-1', api_ip_filter: ['10.0.0.1/8'] }))).toBe('invalid_request');
    expect(code(await create({ name: 'ok-1', plan_code: 'k8s-node-s' }))).toBe('invalid_plan');
    expect(code(await create({ name: 'ok-1', region: 'fi' }))).toBe('region_unavailable');
    expect(code(await create({ name: 'ok-1', ssh_key_ids: ['nope'] }))).toBe('invalid_request');
    expect((await t.request('GET', '/v1/kubernetes/clusters', { key: a.pat })).body.total).toBe(0);
  });

  it('walks the provisioning steps on the clock, then runs; delete needs the name and leaves the list', async () => {
    t.freezeClock(); // Each step is checked at its exact second.
    const r = await create({ name: 'web', api_ip_filter: ['198.51.100.0/24'] });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({
      status: 'provisioning',
      provisioning_step: 'validate',
      api_endpoint: null,
      public_ips: [],
    });
    expect(r.body.status_message).toMatch(/simulated/i);
    expect(code(await create({ name: 'web' }))).toBe('name_taken');
    const id = r.body.id as string;
    const get = async () => (await t.request('GET', `/v1/kubernetes/clusters/${id}`, { key: a.pat })).body;
    for (const [step, seconds] of PROVISIONING_STEPS) {
      expect((await get()).provisioning_step).toBe(step);
      await t.advance(seconds);
    }
    const running = await get();
    expect(running).toMatchObject({
      status: 'running',
      provisioning_step: null,
      plan_code: 'k8s-cluster-dev',
    });
    expect(running.api_endpoint).toMatch(/:7443$/);
    expect(running.public_ips).toEqual([expect.objectContaining({ kind: 'gateway', included: true })]);
    expect(Date.parse(running.running_since) - Date.parse(running.created_at)).toBe(
      PROVISIONING_SECONDS * 1000,
    );
    expect(Date.parse(running.trial_ends_at) - Date.parse(running.running_since)).toBe(14 * 86_400_000);
    const del = (confirm_name: string) =>
      t.request('DELETE', `/v1/kubernetes/clusters/${id}`, { key: a.pat, body: { confirm_name } });
    expect(code(await del('webb'))).toBe('invalid_request');
    const d = await del('web');
    expect(d.status).toBe(202);
    expect(d.body.status).toBe('deleting');
    expect(code(await del('web'))).toBe('not_ready');
    const history = (await t.request('GET', `/v1/kubernetes/clusters/${id}/history`, { key: a.pat })).body
      .history;
    expect(history.map((h: { action: string }) => h.action)).toEqual(['cluster.create', 'cluster.delete']);
    await t.advance(120);
    expect((await t.request('GET', `/v1/kubernetes/clusters/${id}`, { key: a.pat })).status).toBe(404);
    expect((await create({ name: 'web' })).status).toBe(202);
  });

  it('changes API access and upgrades one minor version at a time, backup first', async () => {
    const c = (await create({ name: 'upgrade-me', version: '1.34' })).body;
    const url = `/v1/kubernetes/clusters/${c.id}`;
    const upgrade = (version: string) =>
      t.request('POST', `${url}/upgrade`, { key: a.pat, body: { version } });
    expect(code(await upgrade('1.35'))).toBe('not_ready');
    const access = (cidrs: string[]) =>
      t.request('PUT', `${url}/api-access`, { key: a.pat, body: { cidrs } });
    expect(code(await access(['300.0.0.0/8']))).toBe('invalid_request');
    expect((await access(['192.0.2.0/24'])).body.api_ip_filter).toEqual(['192.0.2.0/24']);
    await t.advance(PROVISIONING_SECONDS);
    expect((await t.request('GET', `${url}/upgrade`, { key: a.pat })).body).toEqual({ versions: ['1.35'] });
    expect(code(await upgrade('1.33'))).toBe('invalid_request');
    const u = await upgrade('1.35');
    expect(u.status).toBe(202);
    expect(u.body).toMatchObject({ status: 'upgrading', version: '1.34' });
    expect(code(await upgrade('1.35'))).toBe('not_ready');
    await t.advance(UPGRADE_SECONDS);
    expect((await t.request('GET', url, { key: a.pat })).body).toMatchObject({
      status: 'running',
      version: '1.35',
    });
    expect((await t.request('GET', `${url}/upgrade`, { key: a.pat })).body).toEqual({ versions: [] });
    const history = (await t.request('GET', `${url}/history`, { key: a.pat })).body.history;
    expect(history.map((h: { action: string }) => h.action)).toEqual([
      'cluster.create',
      'cluster.api-access',
      'cluster.upgrade',
    ]);
    expect(history[2].details).toMatchObject({ from: '1.34', to: '1.35', backup_first: true });
    // The backup taken first is listed, Completed, and restorable.
    const backups = (await t.request('GET', `${url}/backups`, { key: a.pat })).body.backups;
    expect(backups).toEqual([
      expect.objectContaining({
        id: history[2].details.backup,
        kind: 'pre-upgrade',
        name: history[2].details.backup_name,
        status: 'Completed',
        include_volumes: false,
        namespaces: null,
      }),
    ]);
    expect(Date.parse(backups[0].completed_at) - Date.parse(backups[0].started_at)).toBe(
      UPGRADE_BACKUP_SECONDS * 1000,
    );
  });

  it('adds, scales (draining first) and deletes node pools, keeping at least one', async () => {
    const c = (await create({ name: 'pools' })).body;
    const url = `/v1/kubernetes/clusters/${c.id}/node-pools`;
    const add = () =>
      t.request('POST', url, { key: a.pat, body: { name: 'batch', plan_code: 'k8s-node-m', count: 3 } });
    expect(code(await add())).toBe('not_ready');
    await t.advance(PROVISIONING_SECONDS);
    const added = await add();
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      name: 'batch',
      count: 3,
      status: 'scaling',
      nodes_seen: 0,
      cpu_cores: 4,
    });
    expect(code(await add())).toBe('invalid_request');
    const scale = (pool: string, count: number) =>
      t.request('POST', `${url}/${pool}/scale`, { key: a.pat, body: { count } });
    expect(code(await scale('batch', 1))).toBe('not_ready');
    await t.advance(JOIN_SECONDS);
    const down = await scale('batch', 1);
    expect(down.body).toMatchObject({ count: 1, status: 'draining', nodes_seen: 3 });
    expect(code(await scale('batch', 17))).toBe('invalid_request');
    expect(code(await scale('nope', 1))).toBe('not_found');
    await t.advance(DRAIN_SECONDS);
    const pool = async (name: string) =>
      (await t.request('GET', `/v1/kubernetes/clusters/${c.id}`, { key: a.pat })).body.node_pools.find(
        (p: { name: string }) => p.name === name,
      );
    expect(await pool('batch')).toMatchObject({ count: 1, status: 'ready', nodes_seen: 1 });
    expect((await t.request('DELETE', `${url}/batch`, { key: a.pat })).status).toBe(204);
    expect(code(await t.request('DELETE', `${url}/default`, { key: a.pat }))).toBe('invalid_request');
    expect(await pool('batch')).toBeUndefined();
  });

  it('says it is simulated in the account services list', async () => {
    const s = await t.request('GET', '/v1/account/services', { key: a.pat });
    const mine = (s.body as { service_type: string; metadata: Record<string, unknown> }[]).filter(
      (e) => e.service_type === 'kubernetes',
    );
    expect(mine.length).toBeGreaterThan(0);
    for (const e of mine) expect(e.metadata).toMatchObject({ driver: 'simulated', simulated: true });
  });

  it('refuses reads without kubernetes:read and keeps accounts apart', async () => {
    const b = await t.customer();
    const mine = (await create({ name: 'private' })).body;
    expect((await t.request('GET', `/v1/kubernetes/clusters/${mine.id}`, { key: b.pat })).status).toBe(404);
    expect((await t.request('GET', '/v1/kubernetes/clusters')).status).toBe(401);
  });

  it('holds the clusters limit when creates arrive together', async () => {
    const c = await t.customer();
    await expectLimitHolds({
      room: 6,
      attempts: 12,
      ok: [202],
      send: (i) => create({ name: `race-${i}` }, c.pat),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });
});
