import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';

/**
 * Virtual servers with the simulated driver: the state table on the kernel clock, every refused
 * move, snapshots and their limit, quotas under concurrent creates, and `vm_count` of SSH keys.
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;

/** An Ed25519 public key line, built from a fresh key in the SSH wire format. */
function publicKeyLine(comment: string): string {
  const der = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });
  const raw = der.subarray(der.length - 32);
  const str = (b: Buffer) => Buffer.concat([Buffer.alloc(4, 0), b]).fill(0, 0, 4);
  const field = (b: Buffer) => {
    const out = str(b);
    out.writeUInt32BE(b.length, 0);
    return out;
  };
  const blob = Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]);
  return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
}

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_RATE_LIMITS: JSON.stringify({ vps: { points: 10_000, duration: 60 } }),
  });
  a = await t.customer();
  b = await t.customer();
});
afterAll(() => t.close());

const body = (hostname: string, extra: Record<string, unknown> = {}) => ({
  hostname,
  plan_code: 'vps-1-2',
  region: 'oslo',
  os_template: 'debian-12',
  ...extra,
});
const create = (hostname: string, key = a.pat, extra: Record<string, unknown> = {}) =>
  t.request('POST', '/v1/vps', { key, body: body(hostname, extra) });
const act = (id: string, action: string, key = a.pat) =>
  t.request('POST', `/v1/vps/${id}/${action}`, { key });
const statusOf = async (id: string, key = a.pat) =>
  (await t.request('GET', `/v1/vps/${id}`, { key })).body.status as string;
const remove = (id: string, key = a.pat) => t.request('DELETE', `/v1/vps/${id}`, { key });

describe('virtual servers (simulated driver)', () => {
  it('lists plans with and without the slash, templates and regions', async () => {
    const plans = await t.request('GET', '/v1/vps/plans');
    expect(plans.status).toBe(200);
    expect(plans.body[0]).toEqual({
      plan_code: 'vps-1-2',
      name: expect.any(String),
      vcpus: 1,
      ram_gb: 2,
      storage_gb: 40,
      bandwidth_tb: 1,
      price: 99,
      currency: 'NOK',
    });
    expect((await t.request('GET', '/v1/vps/plans/')).body).toEqual(plans.body);
    expect((await t.request('GET', '/v1/vps/plans?currency=EUR')).body[0]).toMatchObject({ currency: 'EUR' });
    const templates = (await t.request('GET', '/v1/vps/os-templates')).body as {
      family: string;
      is_windows: boolean;
    }[];
    expect(new Set(templates.map((x) => x.family))).toEqual(
      new Set(['ubuntu', 'debian', 'rocky', 'almalinux', 'windows']),
    );
    expect(templates.find((x) => x.family === 'windows')?.is_windows).toBe(true);
    const regions = (await t.request('GET', '/v1/vps/regions')).body as { id: string; available: boolean }[];
    expect(regions.find((r) => r.id === 'oslo')).toMatchObject({ available: true, country: 'NO' });
  });

  it('says it is simulated in the account’s services and the back-end report', async () => {
    const c = await t.customer();
    const id = (await create('svc.example.com', c.pat)).body.id;
    const r = await t.request('GET', '/v1/account/services', { key: c.pat });
    expect(r.status).toBe(200);
    expect(r.body).toContainEqual(
      expect.objectContaining({
        id,
        service_type: 'vps',
        status: 'provisioning',
        metadata: expect.objectContaining({ driver: 'simulated', simulated: true }),
      }),
    );
    expect(t.kernel.registry.backends).toContainEqual(
      expect.objectContaining({ area: 'vps', simulated: true }),
    );
  });

  it('walks the state table on the clock and refuses every other move with the current state', async () => {
    const c = await create('web-1.example.com', a.pat, { display_name: 'Web' });
    expect(c.status).toBe(201);
    expect(c.body).toEqual({
      id: expect.any(String),
      hostname: 'web-1.example.com',
      status: 'provisioning',
      ipv4: expect.stringMatching(/^203\.0\.113\.\d+$/),
      ipv6: expect.stringMatching(/^2001:db8::/),
    });
    const id = c.body.id as string;
    for (const action of ['start', 'stop', 'reboot']) {
      const r = await act(id, action);
      expect(r.status).toBe(409);
      expect(r.body.detail).toMatchObject({ code: 'invalid_state', status: 'provisioning', action });
    }
    await t.advance(181);
    expect(await statusOf(id)).toBe('running');
    expect((await act(id, 'start')).body.detail).toMatchObject({ code: 'invalid_state', status: 'running' });

    const running = await t.request('GET', `/v1/vps/${id}/status`, { key: a.pat });
    expect(running.body.status).toBe('running');
    expect(running.body.uptime_seconds).toBeGreaterThanOrEqual(1);
    expect(running.body.network_in_bytes).toBeGreaterThan(0);

    expect((await act(id, 'reboot')).body).toEqual({
      success: true,
      action: 'reboot',
      message: expect.any(String),
    });
    expect(await statusOf(id)).toBe('starting');
    expect((await act(id, 'stop')).body.detail).toMatchObject({ status: 'starting' });
    await t.advance(121);
    expect(await statusOf(id)).toBe('running');

    expect((await act(id, 'stop')).status).toBe(200);
    expect(await statusOf(id)).toBe('stopping');
    expect((await act(id, 'start')).body.detail).toMatchObject({ status: 'stopping' });
    await t.advance(31);
    expect(await statusOf(id)).toBe('stopped');
    expect((await act(id, 'stop')).body.detail).toMatchObject({ status: 'stopped' });
    expect((await act(id, 'reboot')).body.detail).toMatchObject({ status: 'stopped' });
    const stopped = await t.request('GET', `/v1/vps/${id}/status`, { key: a.pat });
    expect(stopped.body).toMatchObject({ status: 'stopped', uptime_seconds: 0, cpu_usage_percent: 0 });

    expect((await act(id, 'start')).status).toBe(200);
    expect(await statusOf(id)).toBe('starting');
    await t.advance(61);
    const detail = await t.request('GET', `/v1/vps/${id}`, { key: a.pat });
    expect(detail.body).toMatchObject({
      status: 'running',
      display_name: 'Web',
      plan_code: 'vps-1-2',
      region: 'oslo',
      os_template: 'debian-12',
      vcpus: 1,
      memory_gb: 2,
      disk_gb: 40,
    });
    const list = await t.request('GET', '/v1/vps', { key: a.pat });
    expect(list.body.instances).toContainEqual({
      id,
      hostname: 'web-1.example.com',
      display_name: 'Web',
      status: 'running',
      ipv4_address: c.body.ipv4,
    });
    // Another customer sees nothing of it.
    expect((await t.request('GET', `/v1/vps/${id}`, { key: b.pat })).status).toBe(404);
    expect((await act(id, 'stop', b.pat)).status).toBe(404);
    expect((await remove(id)).status).toBe(200);
    expect((await t.request('GET', `/v1/vps/${id}`, { key: a.pat })).status).toBe(404);
  });

  it('validates host names, plans, templates and regions', async () => {
    const bad = async (hostname: string, extra: Record<string, unknown>, code: string) => {
      const r = await create(hostname, a.pat, extra);
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body.detail.code).toBe(code);
    };
    await bad('-bad.example', {}, 'invalid_hostname');
    await bad('a..b', {}, 'invalid_hostname');
    await bad('ok', { plan_code: 'vps-99' }, 'unknown_plan');
    await bad('ok', { os_template: 'beos-5' }, 'unknown_os_template');
    await bad('ok', { region: 'mars' }, 'unknown_region');
    await bad('ok', { ssh_keys: ['not a key'] }, 'invalid_ssh_key');
  });

  it('keeps snapshots only while stopped, at most 10, with sanitised names, and rolls back', async () => {
    const id = (await create('snap.example.com')).body.id as string;
    await t.advance(181);
    const snap = (name: string) =>
      t.request('POST', `/v1/vps/${id}/snapshots`, { key: a.pat, body: { name, description: 'd' } });
    const running = await snap('first');
    expect(running.status).toBe(409);
    expect(running.body.detail).toMatchObject({ code: 'invalid_state', status: 'running' });
    await act(id, 'stop');
    await t.advance(31);
    const made = await snap('before upgrade!');
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ status: 'created', snapshot_name: 'before_upgrade' });
    expect((await snap('before-upgrade')).body.detail.code).toBe('snapshot_exists');
    expect((await snap('***')).body.detail.code).toBe('invalid_snapshot_name');
    for (let i = 2; i <= 10; i++) expect((await snap(`s${i}`)).status).toBe(201);
    const full = await snap('eleventh');
    expect(full.status).toBe(409);
    expect(full.body.detail.code).toBe('snapshot_limit');
    const list = await t.request('GET', `/v1/vps/${id}/snapshots`, { key: a.pat });
    expect(list.body).toMatchObject({ total: 10, max_snapshots: 10 });
    expect(list.body.snapshots[0]).toEqual({
      name: 'before_upgrade',
      description: 'd',
      created_at: expect.any(String),
      size_bytes: expect.any(Number),
    });
    const rb = await t.request('POST', `/v1/vps/${id}/snapshots/before_upgrade/rollback`, { key: a.pat });
    expect(rb.body).toEqual({
      status: 'rolling_back',
      snapshot_name: 'before_upgrade',
      message: expect.any(String),
    });
    expect((await t.request('POST', `/v1/vps/${id}/snapshots/nope/rollback`, { key: a.pat })).status).toBe(
      404,
    );
    const del = await t.request('DELETE', `/v1/vps/${id}/snapshots/s10`, { key: a.pat });
    expect(del.body).toEqual({ status: 'deleted', snapshot_name: 's10' });
    await act(id, 'start');
    const rbRunning = await t.request('POST', `/v1/vps/${id}/snapshots/before_upgrade/rollback`, {
      key: a.pat,
    });
    expect(rbRunning.body.detail).toMatchObject({ code: 'invalid_state', status: 'starting' });
    await remove(id);
  });

  it('counts servers per SSH key in vm_count', async () => {
    const line = publicKeyLine('laptop');
    const added = await t.request('POST', '/v1/account/ssh-keys', {
      key: b.pat,
      body: { name: 'laptop', public_key: line },
    });
    expect(added.status).toBe(201);
    const count = async () =>
      ((await t.request('GET', '/v1/account/ssh-keys', { key: b.pat })).body as { vm_count: number }[])[0]!
        .vm_count;
    expect(await count()).toBe(0);
    const one = (await create('k1.example.com', b.pat)).body.id as string;
    const two = (await create('k2.example.com', b.pat, { ssh_keys: [line, publicKeyLine('other')] })).body.id;
    expect(await count()).toBe(2);
    await remove(one, b.pat);
    await remove(two, b.pat);
    expect(await count()).toBe(0);
  });

  it('holds the server quota under concurrent creates', async () => {
    const c = await t.customer();
    // The free plan allows 2 servers.
    await expectLimitHolds({
      room: 2,
      attempts: 20,
      send: (i) => create(`race-${i}.example.com`, c.pat),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });

  it('counts vCPUs of all servers against the plan, and frees them on delete', async () => {
    const c = await t.customer();
    // The free plan allows 4 vCPUs: one 4-vCPU server fills them though a second server would fit.
    const big = await create('big.example.com', c.pat, { plan_code: 'vps-4-8' });
    expect(big.status).toBe(201);
    const small = await create('small.example.com', c.pat);
    expect(small.status).toBe(403);
    expect(small.body.detail).toMatchObject({ code: 'quota_exceeded', limit: 4 });
    await remove(big.body.id, c.pat);
    expect((await create('small.example.com', c.pat)).status).toBe(201);
  });
});
