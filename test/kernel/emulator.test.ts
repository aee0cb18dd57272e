import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../src/kernel/auth/catalogue.js';
import { AdjustableClock } from '../../src/kernel/clock.js';
import { OPERATOR_TOKEN, TestFjord } from '../helpers/fjord.js';

const EMULATOR_ROUTES = [
  { method: 'POST', url: '/admin/v1/clock/advance', body: { seconds: 60 } },
  { method: 'POST', url: '/admin/v1/reset', body: undefined },
] as const;

describe('AdjustableClock', () => {
  it('moves forward by whole milliseconds and never backward', () => {
    const clock = new AdjustableClock();
    const before = clock.nowMs();
    clock.advance(90);
    expect(clock.offsetSeconds).toBe(90);
    expect(clock.nowMs() - before).toBeGreaterThanOrEqual(90_000);
    expect(clock.now().getTime()).toBeGreaterThanOrEqual(before + 90_000);

    clock.advance(1.2345);
    expect(Number.isInteger(clock.nowMs())).toBe(true);
    clock.advance(0.0001);
    expect(Number.isInteger(clock.nowMs())).toBe(true);

    const offset = clock.offsetSeconds;
    for (const bad of [-1, -0.001, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => clock.advance(bad), String(bad)).toThrow(RangeError);
    }
    expect(clock.offsetSeconds).toBe(offset);
  });
});

describe('emulator controls', () => {
  let t: TestFjord;
  beforeAll(async () => {
    t = await TestFjord.create();
  });
  afterAll(() => t.close());

  it('need the operator token: 401 without one, 401 with a customer PAT', async () => {
    const c = await t.customer();
    const offset = (await t.operator('GET', '/admin/v1/clock')).body.offset_seconds;
    for (const route of EMULATOR_ROUTES) {
      const none = await t.request(route.method, route.url, { body: route.body });
      expect(none.status, `${route.url} without credential`).toBe(401);
      expect(none.body.detail.code).toBe('unauthenticated');
      for (const key of [{ key: c.pat }, { bearer: c.pat }, { bearer: `${OPERATOR_TOKEN}x` }]) {
        const r = await t.request(route.method, route.url, { ...key, body: route.body });
        expect(r.status, `${route.url} with ${JSON.stringify(key)}`).toBe(401);
      }
    }
    expect((await t.request('GET', '/admin/v1/clock', { key: c.pat })).status).toBe(401);
    // Nothing moved, nothing was erased.
    expect((await t.operator('GET', '/admin/v1/clock')).body.offset_seconds).toBe(offset);
    expect((await t.request('GET', '/v1/account/profile', { key: c.pat })).status).toBe(200);
  });

  it('advance moves the clock forward and reports the jobs it ran', async () => {
    let runs = 0;
    t.kernel.jobs.register('test.emulator.due-later', { run: async () => void runs++ });
    await t.kernel.jobs.enqueue('test.emulator.due-later', {}, { delaySeconds: 120 });

    const before = await t.operator('GET', '/admin/v1/clock');
    expect(before.status).toBe(200);
    expect(before.body.now).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const early = await t.operator('POST', '/admin/v1/clock/advance', { seconds: 60 });
    expect(early.status).toBe(200);
    // The areas' own schedules (the GPU lease sweep runs every 15 s) may run too: count ours.
    expect(early.body.jobs_run).toBeGreaterThanOrEqual(0);
    expect(early.body.offset_seconds).toBe(before.body.offset_seconds + 60);
    expect(Date.parse(early.body.now) - Date.parse(before.body.now)).toBeGreaterThanOrEqual(60_000);
    expect(runs).toBe(0);

    const due = await t.operator('POST', '/admin/v1/clock/advance', { seconds: 61 });
    expect(due.body.jobs_run).toBeGreaterThanOrEqual(1);
    expect(due.body.jobs_due).toBeGreaterThanOrEqual(1);
    expect(runs).toBe(1);

    const after = await t.operator('GET', '/admin/v1/clock');
    expect(after.body.offset_seconds).toBe(before.body.offset_seconds + 121);
    expect(Date.parse(after.body.now)).toBeGreaterThanOrEqual(Date.parse(before.body.now) + 121_000);
    expect(Date.parse(after.body.now)).toBeGreaterThanOrEqual(Date.parse(due.body.now));
    expect(Math.abs(Date.parse(after.body.now) - t.kernel.clock.nowMs())).toBeLessThan(60_000);

    const zero = await t.operator('POST', '/admin/v1/clock/advance', { seconds: 0 });
    expect(zero.status).toBe(200);
    expect(runs).toBe(1);
  });

  it('refuses to move the clock backward or by nonsense', async () => {
    const offset = (await t.operator('GET', '/admin/v1/clock')).body.offset_seconds;
    for (const body of [{ seconds: -1 }, { seconds: 'ten' }, {}, { seconds: 1, extra: true }]) {
      const r = await t.operator('POST', '/admin/v1/clock/advance', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
    }
    expect((await t.operator('GET', '/admin/v1/clock')).body.offset_seconds).toBe(offset);
  });

  it('keeps working on the store after a fractional advance', async () => {
    await t.advance(1.2345);
    await t.advance(0.0004);
    expect(Number.isInteger(t.kernel.clock.nowMs())).toBe(true);
    const created = await t.operator('POST', '/admin/v1/customers', { email: 'fraction@example.test' });
    expect(created.status).toBe(201);
    expect((await t.request('GET', '/v1/account/profile', { key: created.body.pat })).status).toBe(200);
  });

  it('reset erases customers, keys and jobs, and keeps the recurring schedules', async () => {
    const created = await t.operator('POST', '/admin/v1/customers', { email: 'erase-me@example.test' });
    expect(created.status).toBe(201);
    const c = await t.customer();
    expect((await t.request('GET', '/v1/account/profile', { key: created.body.pat })).status).toBe(200);
    t.kernel.jobs.register('test.emulator.erased', { run: async () => {} });
    await t.kernel.jobs.enqueue('test.emulator.erased', {}, { delaySeconds: 3600 });

    const r = await t.operator('POST', '/admin/v1/reset');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true });

    for (const pat of [created.body.pat, c.pat]) {
      const after = await t.request('GET', '/v1/account/profile', { key: pat });
      expect(after.status).toBe(401);
    }
    const list = await t.operator('GET', '/admin/v1/customers');
    expect(list.body).toMatchObject({ customers: [], total: 0 });
    expect((await t.operator('GET', '/admin/v1/jobs')).body.jobs).toEqual({});
    const schedules = await t.kernel.store.db.selectFrom('schedules').select('name').execute();
    expect(schedules.map((s: { name: string }) => s.name)).toContain('kernel.idempotency.purge');

    // The clock is back to real time: nothing dated by the old offset is left.
    expect((await t.operator('GET', '/admin/v1/clock')).body.offset_seconds).toBe(0);
    expect(Math.abs(t.kernel.clock.nowMs() - Date.now())).toBeLessThan(60_000);

    // The same e-mail can be used again, and the operator token still works.
    const again = await t.operator('POST', '/admin/v1/customers', { email: 'erase-me@example.test' });
    expect(again.status).toBe(201);
    expect(again.body.customer_id).not.toBe(created.body.customer_id);
  });
});

describe('emulator controls with FJORD_EMULATOR off', () => {
  let t: TestFjord;
  beforeAll(async () => {
    t = await TestFjord.create({ FJORD_EMULATOR: '0' });
  });
  afterAll(() => t.close());

  it('answer 403 emulator_only and change nothing', async () => {
    const c = await t.customer();
    for (const route of EMULATOR_ROUTES) {
      const r = await t.operator(route.method, route.url, route.body);
      expect(r.status, route.url).toBe(403);
      expect(r.body.detail.code).toBe('emulator_only');
      // Still 401 before 403: the emulator's existence is not revealed to strangers.
      expect((await t.request(route.method, route.url, { body: route.body })).status).toBe(401);
    }
    const clock = await t.operator('GET', '/admin/v1/clock');
    expect(clock.status).toBe(200);
    expect(clock.body.offset_seconds).toBe(0);
    expect(t.kernel.clock.offsetSeconds).toBe(0);
    expect((await t.request('GET', '/v1/account/profile', { key: c.pat })).status).toBe(200);
    expect((await t.operator('GET', '/admin/v1/customers')).body.total).toBe(1);
  });
});

describe('admin customer API', () => {
  let t: TestFjord;
  beforeAll(async () => {
    t = await TestFjord.create();
  });
  afterAll(() => t.close());

  it('creates a customer with a PAT holding every scope', async () => {
    const r = await t.operator('POST', '/admin/v1/customers', {
      email: 'Grace@Example.test',
      customer_type: 'business',
      first_name: 'Grace',
      last_name: 'Hopper',
      company: 'Navy',
      plan: 'pro',
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      customer_id: expect.any(String),
      short_id: expect.stringMatching(/^[a-z][a-z0-9]{7}$/),
      email: 'grace@example.test',
      first_name: 'Grace',
      last_name: 'Hopper',
      company: 'Navy',
      customer_type: 'business',
      status: 'active',
      plan: 'pro',
      created_at: expect.stringMatching(/Z$/),
      pat: expect.stringMatching(/^fjp_/),
      pat_id: expect.any(String),
    });

    const profile = await t.request('GET', '/v1/account/profile', { key: r.body.pat });
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({ customer_id: r.body.customer_id, email: 'grace@example.test' });

    const keys = await t.request('GET', '/v1/account/api-keys', { key: r.body.pat });
    expect(keys.status).toBe(200);
    const pat = keys.body.find((k: { id: string }) => k.id === r.body.pat_id);
    expect(pat).toMatchObject({ key_type: 'account', is_active: true, expires_at: null });
    expect([...pat.scopes].sort()).toEqual([...ALL_SCOPES].sort());

    const minimal = await t.operator('POST', '/admin/v1/customers', { email: 'min@example.test' });
    expect(minimal.status).toBe(201);
    expect(minimal.body).toMatchObject({ customer_type: 'private', plan: 'free', first_name: null });
  });

  it('refuses a duplicate e-mail with 409, whatever its case', async () => {
    expect((await t.operator('POST', '/admin/v1/customers', { email: 'dup@example.test' })).status).toBe(201);
    for (const email of ['dup@example.test', 'DUP@example.TEST']) {
      const r = await t.operator('POST', '/admin/v1/customers', { email });
      expect(r.status, email).toBe(409);
      expect(r.body.detail.code).toBe('email_taken');
    }
    const list = await t.operator('GET', '/admin/v1/customers', undefined);
    expect(list.body.customers.filter((c: { email: string }) => c.email === 'dup@example.test')).toHaveLength(
      1,
    );
  });

  it('validates the body', async () => {
    for (const body of [{}, { email: 'not-an-email' }, { email: 'x@example.test', plan: 'platinum' }]) {
      const r = await t.operator('POST', '/admin/v1/customers', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
    }
  });

  it('lists customers with paging', async () => {
    const r = await t.operator('GET', '/admin/v1/customers');
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(r.body.customers.length);
    expect(r.body.total).toBeGreaterThanOrEqual(3);
    expect(r.body).toMatchObject({ page: 1, per_page: 50 });
    for (const c of r.body.customers) expect(c).not.toHaveProperty('pat');

    const page1 = await t.request('GET', '/admin/v1/customers', {
      bearer: OPERATOR_TOKEN,
      query: { per_page: '2', page: '1' },
    });
    const page2 = await t.request('GET', '/admin/v1/customers', {
      bearer: OPERATOR_TOKEN,
      query: { per_page: '2', page: '2' },
    });
    expect(page1.body.customers).toHaveLength(2);
    expect(page1.body.total).toBe(r.body.total);
    const ids1 = page1.body.customers.map((c: { customer_id: string }) => c.customer_id);
    const ids2 = page2.body.customers.map((c: { customer_id: string }) => c.customer_id);
    expect(ids1.filter((id: string) => ids2.includes(id))).toEqual([]);
  });

  it('suspending a customer stops its PAT at the next request; reactivating restores it', async () => {
    const c = await t.operator('POST', '/admin/v1/customers', { email: 'suspend-me@example.test' });
    const bystander = await t.customer();
    expect((await t.request('GET', '/v1/account/profile', { key: c.body.pat })).status).toBe(200);

    const s = await t.operator('PATCH', `/admin/v1/customers/${c.body.customer_id}`, { status: 'suspended' });
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ customer_id: c.body.customer_id, status: 'suspended' });
    const refused = await t.request('GET', '/v1/account/profile', { key: c.body.pat });
    expect(refused.status).toBe(401);
    expect(refused.body.detail.code).toBe('unauthenticated');
    expect((await t.request('GET', '/v1/account/profile', { bearer: c.body.pat })).status).toBe(401);
    expect((await t.request('GET', '/v1/account/profile', { key: bystander.pat })).status).toBe(200);

    const back = await t.operator('PATCH', `/admin/v1/customers/${c.body.customer_id}`, { status: 'active' });
    expect(back.status).toBe(200);
    expect(back.body.status).toBe('active');
    expect((await t.request('GET', '/v1/account/profile', { key: c.body.pat })).status).toBe(200);
  });

  it('answers 404 for an unknown customer and 422 for an unknown status', async () => {
    const missing = await t.operator('PATCH', '/admin/v1/customers/no-such-customer', {
      status: 'suspended',
    });
    expect(missing.status).toBe(404);
    const c = await t.customer();
    const bad = await t.operator('PATCH', `/admin/v1/customers/${c.id}`, { status: 'deleted' });
    expect(bad.status).toBe(422);
  });

  it('needs the operator token', async () => {
    const c = await t.customer();
    const calls = [
      ['POST', '/admin/v1/customers', { email: 'sneaky@example.test' }],
      ['GET', '/admin/v1/customers', undefined],
      ['PATCH', `/admin/v1/customers/${c.id}`, { status: 'suspended' }],
    ] as const;
    for (const [method, url, body] of calls) {
      expect((await t.request(method, url, { body })).status, `${method} ${url}`).toBe(401);
      expect((await t.request(method, url, { key: c.pat, body })).status, `${method} ${url} PAT`).toBe(401);
    }
    expect((await t.request('GET', '/v1/account/profile', { key: c.pat })).status).toBe(200);
  });
});

describe('development credentials', () => {
  let t: TestFjord;
  beforeAll(async () => {
    t = await TestFjord.create({ FJORD_DEV_CREDENTIALS: '1' });
  });
  afterAll(() => t.close());

  const path = () => join(t.kernel.config.dataDir, 'dev-credentials.json');
  const read = () => JSON.parse(readFileSync(path(), 'utf8'));

  it('are written to <data dir>/dev-credentials.json with mode 0600, and work', async () => {
    expect(existsSync(path())).toBe(true);
    expect(t.fjord.devCredentialsPath).toBe(path());
    expect(statSync(path()).mode & 0o777).toBe(0o600);
    const creds = read();
    expect(creds).toMatchObject({
      customer_id: expect.any(String),
      email: 'developer@fjord.local',
      pat: expect.stringMatching(/^fjp_/),
      operator_token: OPERATOR_TOKEN,
    });
    const profile = await t.request('GET', '/v1/account/profile', { key: creds.pat });
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({ customer_id: creds.customer_id, email: 'developer@fjord.local' });
  });

  it('survive a reset: the same PAT keeps working, other customers are gone', async () => {
    const before = read();
    const other = await t.customer();
    await t.request('POST', '/v1/account/api-keys/pat', {
      key: before.pat,
      body: { scopes: ['account:read'], description: 'extra' },
    });

    const r = await t.operator('POST', '/admin/v1/reset');
    expect(r.status).toBe(200);

    const after = read();
    expect(after.pat).toBe(before.pat);
    expect(after.customer_id).toBe(before.customer_id);
    expect(statSync(path()).mode & 0o777).toBe(0o600);
    const profile = await t.request('GET', '/v1/account/profile', { key: before.pat });
    expect(profile.status).toBe(200);
    expect(profile.body.customer_id).toBe(before.customer_id);
    expect((await t.request('GET', '/v1/account/profile', { key: other.pat })).status).toBe(401);

    const keys = await t.request('GET', '/v1/account/api-keys', { key: before.pat });
    expect(keys.body).toHaveLength(1);
    const list = await t.operator('GET', '/admin/v1/customers');
    expect(list.body.customers.map((c: { customer_id: string }) => c.customer_id)).toEqual([
      before.customer_id,
    ]);

    // A second reset is as good as the first.
    expect((await t.operator('POST', '/admin/v1/reset')).status).toBe(200);
    expect((await t.request('GET', '/v1/account/profile', { key: before.pat })).status).toBe(200);
  });
});
