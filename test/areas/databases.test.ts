import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';
import { connectAs, type SharedEngines, startSharedEngines } from './databases-engines.js';
import { createDb, creds, DB_TYPES, dbCustomer, marker } from './databases-fixtures.js';

/** The API contract of every databases endpoint, against real servers (one pair per file). */
let engines: SharedEngines;
let t: TestFjord;

beforeAll(async () => {
  engines = await startSharedEngines();
  t = await TestFjord.create(engines.env);
}, 120_000);

afterAll(async () => {
  await t?.close();
  await engines?.stop();
});

describe('databases API', () => {
  it('answers every route with 401/403 per the auth matrix', async () => {
    await expectAuthMatrix(t, 'Databases');
  });

  it('lists tiers and engines with versions read from the servers', async () => {
    const c = await dbCustomer(t);
    const tiers = await t.request('GET', '/v1/databases/tiers', { key: c.pat });
    expect(tiers.status).toBe(200);
    expect(tiers.body.map((x: { tier: string }) => x.tier)).toEqual(['standard', 'encrypted']);
    expect(tiers.body[1].is_encrypted).toBe(true);
    const viaPat = await t.request('GET', '/v1/databases/engines', { key: c.pat });
    expect(viaPat.status, 'engines need the service key').toBe(403);
    const engines_ = await t.request('GET', '/v1/databases/engines', { key: c.key });
    expect(engines_.status).toBe(200);
    const pg = engines_.body.engines.find((e: { name: string }) => e.name === 'postgresql');
    const my = engines_.body.engines.find((e: { name: string }) => e.name === 'mariadb');
    expect(pg.default_version).toMatch(/^1[5-9]\.\d+/);
    expect(my.default_version).toMatch(/^1[01]\.\d+\.\d+/);
    expect(pg.versions).toEqual([pg.default_version]);
    expect(pg.simulated).toBe(false);
  });

  describe.each(DB_TYPES)('%s', (dbType) => {
    it('creates in form A, lists, gets, patches and deletes', async () => {
      const c = await dbCustomer(t);
      const created = await createDb(t, c, dbType, 'orders');
      const tech = `cust_${c.shortId}_${marker(dbType)}_orders`;
      expect(created.technical_name).toBe(tech);
      expect(created.connection_string).toBe(
        `${dbType === 'postgresql' ? 'postgresql' : 'mysql'}://${tech}:${created.password}@${created.host}:${created.port}/${tech}`,
      );
      const again = await t.request('POST', '/v1/databases', {
        key: c.key,
        body: { db_type: dbType, db_name: 'orders' },
      });
      expect(again.status).toBe(409);
      expect(again.body.detail.code).toBe('database_exists');

      const list = await t.request('GET', '/v1/databases', { key: c.pat });
      expect(list.status).toBe(200);
      expect(list.body.total).toBe(1);
      expect(list.body.databases[0]).toMatchObject({
        name: 'orders',
        technical_name: tech,
        type: dbType,
        tier: 'standard',
        description: null,
      });
      const names = await t.request('GET', `/v1/databases/${dbType}`, { key: c.key });
      expect(names.body).toEqual({ db_type: dbType, databases: [tech] });

      const detail = await t.request('GET', `/v1/databases/${dbType}/${tech}`, { key: c.key });
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({
        db_name: tech,
        friendly_name: 'orders',
        technical_name: tech,
        db_type: dbType,
        status: 'running',
        port: created.port,
      });
      expect(typeof detail.body.size_mb).toBe('number');
      const byFriendly = await t.request('GET', `/v1/databases/${dbType}/orders`, { key: c.key });
      expect(byFriendly.body.technical_name).toBe(tech);

      const info = await t.request('GET', `/v1/databases/${dbType}/${tech}/info`, { key: c.key });
      expect(info.body).toMatchObject({
        db_name: tech,
        db_type: dbType,
        connection_limit: 100,
        owner: tech,
        connection_count: 0,
      });

      const patch = await t.request('PATCH', `/v1/databases/${dbType}/${tech}`, {
        key: c.key,
        body: { connection_limit: 25, description: 'orders db' },
      });
      expect(patch.status).toBe(200);
      expect(patch.body.success).toBe(true);
      const after = await t.request('GET', `/v1/databases/${dbType}/${tech}/info`, { key: c.key });
      expect(after.body.connection_limit).toBe(25);
      for (const bad of [9, 1001, 'x']) {
        const r = await t.request('PATCH', `/v1/databases/${dbType}/${tech}`, {
          key: c.key,
          body: { connection_limit: bad },
        });
        expect(r.status, `connection_limit ${bad}`).toBe(422);
      }
      const creds_ = await t.request('GET', `/v1/databases/${dbType}/${tech}/credentials`, { key: c.key });
      expect(creds_.body).toEqual({
        host: created.host,
        port: created.port,
        database: tech,
        username: tech,
        connection_string: `${dbType === 'postgresql' ? 'postgresql' : 'mysql'}://${tech}@${created.host}:${created.port}/${tech}`,
      });
      expect(creds_.text).not.toContain(created.password);

      const mismatch = await t.request('DELETE', `/v1/databases/${dbType}/${tech}`, {
        key: c.key,
        query: { username: 'other' },
      });
      expect(mismatch.status).toBe(400);
      const del = await t.request('DELETE', `/v1/databases/${dbType}/${tech}`, {
        key: c.key,
        query: { username: tech },
      });
      expect(del.status).toBe(200);
      expect(del.body).toMatchObject({ ok: true, deleted: true, db_name: tech, success: true });
      expect((await t.request('GET', `/v1/databases/${dbType}/${tech}`, { key: c.key })).status).toBe(404);
      expect((await t.request('GET', '/v1/databases', { key: c.key })).body.total).toBe(0);
    });

    it('creates in form B idempotently and deletes by body', async () => {
      const c = await dbCustomer(t);
      const first = await t.request('POST', '/v1/databases', {
        key: c.key,
        body: { db_type: dbType, requested_name: 'Analytics' },
      });
      expect(first.status).toBe(201);
      const tech = `cust_${c.shortId}_${marker(dbType)}_analytics`;
      expect(first.body).toMatchObject({
        success: true,
        db_type: dbType,
        db_name: tech,
        username: tech,
        password_generated: true,
        idempotent: false,
      });
      expect(first.body.password).toMatch(/^[A-Za-z0-9]{32}$/);
      const second = await t.request('POST', '/v1/databases', {
        key: c.key,
        body: { db_type: dbType, requested_name: 'analytics' },
      });
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({
        success: true,
        db_name: tech,
        password: null,
        password_generated: false,
        idempotent: true,
      });
      const conn = await connectAs(dbType, creds(first.body));
      await conn.end();

      const deflt = await t.request('POST', '/v1/databases', { key: c.key, body: { db_type: dbType } });
      expect(deflt.status).toBe(201);
      expect(deflt.body.db_name).toBe(`cust_${c.shortId}_${marker(dbType)}_main`);

      const both = await t.request('POST', '/v1/databases', {
        key: c.key,
        body: { db_type: dbType, db_name: 'a', requested_name: 'b' },
      });
      expect(both.status).toBe(422);
      const long = await t.request('POST', '/v1/databases', {
        key: c.key,
        body: { db_type: dbType, requested_name: 'x'.repeat(31) },
      });
      expect(long.status).toBe(422);
      const upper = await t.request('POST', '/v1/databases', {
        key: c.key,
        body: { db_type: dbType, db_name: 'Bad-Name' },
      });
      expect(upper.status).toBe(422);
      const badType = await t.request('POST', '/v1/databases', {
        key: c.key,
        body: { db_type: 'oracle', db_name: 'x' },
      });
      expect(badType.status).toBe(422);

      const del = await t.request('DELETE', '/v1/databases', {
        key: c.key,
        body: { db_type: dbType, db_name: tech, username: tech },
      });
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ success: true, message: expect.stringContaining(tech) });
      expect(
        (await t.request('DELETE', '/v1/databases', { key: c.key, body: { db_type: dbType, db_name: tech } }))
          .status,
      ).toBe(404);
    });

    it('honours customer_id for internal service keys only', async () => {
      const internal = await dbCustomer(t);
      const target = await dbCustomer(t);
      const regular = await dbCustomer(t);
      const t2 = await TestFjord.create({ ...engines.env, FJORD_DATABASE_INTERNAL_CUSTOMERS: internal.id });
      try {
        for (const c of [internal, target, regular]) {
          await t2.kernel.identity.createCustomer({
            id: c.id,
            shortId: c.shortId,
            email: `${c.id}@x.test`,
            plan: 'pro',
          });
        }
        const ik = (await t2.kernel.identity.createServiceKey(internal.id, 'database', null)).key;
        const rk = (await t2.kernel.identity.createServiceKey(regular.id, 'database', null)).key;
        const forTarget = await t2.request('POST', '/v1/databases', {
          key: ik,
          body: { db_type: dbType, requested_name: 'svc', customer_id: target.id },
        });
        expect(forTarget.status).toBe(201);
        expect(forTarget.body.db_name).toBe(`cust_${target.shortId}_${marker(dbType)}_svc`);
        const listed = await t2.request('GET', `/v1/databases/${dbType}`, {
          key: ik,
          query: { customer_id: target.id },
        });
        expect(listed.body.databases).toEqual([forTarget.body.db_name]);
        const ignored = await t2.request('POST', '/v1/databases', {
          key: rk,
          body: { db_type: dbType, requested_name: 'svc', customer_id: target.id },
        });
        expect(ignored.status).toBe(201);
        expect(ignored.body.db_name).toBe(`cust_${regular.shortId}_${marker(dbType)}_svc`);
        const notListed = await t2.request('GET', `/v1/databases/${dbType}`, {
          key: rk,
          query: { customer_id: target.id },
        });
        expect(notListed.body.databases).toEqual([ignored.body.db_name]);
        for (const [k, name] of [
          [ik, forTarget.body.db_name],
          [rk, ignored.body.db_name],
        ]) {
          const owner = k === ik ? target : regular;
          const ok = await t2.request('DELETE', `/v1/databases/${dbType}/${name}`, {
            key: (await t2.kernel.identity.createServiceKey(owner.id, 'database', null)).key,
          });
          expect(ok.status).toBe(200);
        }
      } finally {
        await t2.close();
      }
    });

    it('keeps one customer out of another’s databases (API)', async () => {
      const a = await dbCustomer(t);
      const b = await dbCustomer(t);
      const db = await createDb(t, a, dbType, 'private');
      const snap = await t.request('POST', `/v1/databases/${dbType}/${db.technical_name}/snapshots`, {
        key: a.key,
        body: {},
      });
      expect(snap.status).toBe(201);
      const rule = await t.request('POST', `/v1/databases/${dbType}/${db.technical_name}/firewall`, {
        key: a.pat,
        body: { ip_address: '10.1.2.3' },
      });
      expect(rule.status).toBe(201);
      const base = `/v1/databases/${dbType}/${db.technical_name}`;
      await expectTenantIsolation(t, a, b, [
        { method: 'GET', url: base },
        { method: 'GET', url: `${base}/info` },
        { method: 'GET', url: `${base}/credentials` },
        { method: 'GET', url: `${base}/metrics` },
        { method: 'GET', url: `${base}/snapshots` },
        { method: 'GET', url: `${base}/backup-policy` },
        { method: 'PATCH', url: base, body: { connection_limit: 10 } },
        { method: 'POST', url: `${base}/restart` },
        { method: 'POST', url: `${base}/credentials/rotate` },
        { method: 'POST', url: `${base}/snapshots`, body: {} },
        { method: 'DELETE', url: `${base}/snapshots/${snap.body.snapshot_id}` },
        { method: 'POST', url: `${base}/restore`, body: { snapshot_id: snap.body.snapshot_id } },
        { method: 'PUT', url: `${base}/backup-policy`, body: { enabled: true } },
        { method: 'DELETE', url: `${base}/firewall/${rule.body.rule_id}` },
        { method: 'DELETE', url: base },
        { method: 'DELETE', url: '/v1/databases', body: { db_type: dbType, db_name: db.technical_name } },
      ]);
      const pat = { key: a.pat };
      const bPat = { key: b.pat };
      await expectTenantIsolation(t, pat, bPat, [
        { method: 'GET', url: `${base}/firewall` },
        { method: 'POST', url: `${base}/firewall`, body: { ip_address: '10.9.9.9' } },
      ]);
      const bList = await t.request('GET', '/v1/databases', { key: b.key });
      expect(bList.body.total).toBe(0);
      const bHistory = await t.request('GET', '/v1/databases/history', { key: b.key });
      expect(bHistory.body.total).toBe(0);
    });

    it('manages firewall rules: IPv4 and CIDR, duplicates, at most 50', async () => {
      const c = await dbCustomer(t);
      const db = await createDb(t, c, dbType, 'fw');
      const base = `/v1/databases/${dbType}/${db.technical_name}/firewall`;
      const one = await t.request('POST', base, {
        key: c.pat,
        body: { ip_address: '203.0.113.7', description: 'office' },
      });
      expect(one.status).toBe(201);
      expect(one.body).toMatchObject({
        ip_address: '203.0.113.7',
        port: db.port,
        description: 'office',
        db_name: db.technical_name,
        db_type: dbType,
      });
      expect(one.body.rule_id).toMatch(/^[0-9a-f-]{36}$/);
      const net = await t.request('POST', base, { key: c.key, body: { ip_address: '198.51.100.0/24' } });
      expect(net.status).toBe(201);
      expect(net.body.ip_address).toBe('198.51.100.0/24');
      expect(
        (await t.request('POST', base, { key: c.key, body: { ip_address: '203.0.113.7' } })).body.detail.code,
      ).toBe('firewall_rule_exists');
      for (const bad of ['300.1.1.1', '::1', '10.0.0.0/33', 'example.com', '010.1.1.1']) {
        const r = await t.request('POST', base, { key: c.key, body: { ip_address: bad } });
        expect(r.status, bad).toBe(422);
      }
      // The last 48 places are taken by 60 rules sent at once: exactly 48 land (a race test).
      await expectLimitHolds({
        room: 48,
        attempts: 60,
        send: (i) => t.request('POST', base, { key: c.key, body: { ip_address: `192.0.2.${i + 1}` } }),
        refusal: { status: 409, code: 'firewall_rule_limit' },
      });
      const list = await t.request('GET', base, { key: c.key });
      expect(list.body.total).toBe(50);
      const del = await t.request('DELETE', `${base}/${one.body.rule_id}`, { key: c.pat });
      expect(del.body).toEqual({ ok: true, message: expect.any(String), rule_id: one.body.rule_id });
      expect((await t.request('DELETE', `${base}/${one.body.rule_id}`, { key: c.pat })).status).toBe(404);
      expect((await t.request('GET', base, { key: c.key })).body.total).toBe(49);
      await t.request('DELETE', `/v1/databases/${dbType}/${db.technical_name}`, { key: c.key });
    });

    it('reports metrics from the server statistics', async () => {
      const c = await dbCustomer(t);
      const db = await createDb(t, c, dbType, 'metered');
      const conn = await connectAs(dbType, creds(db));
      await conn.query('CREATE TABLE m (id int)');
      await conn.query('INSERT INTO m VALUES (1), (2), (3)');
      await conn.query('SELECT * FROM m');
      const r = await t.request('GET', `/v1/databases/${dbType}/${db.technical_name}/metrics`, {
        key: c.key,
      });
      expect(r.status, r.text).toBe(200);
      expect(r.body.connections.active).toBeGreaterThanOrEqual(1);
      expect(r.body.connections.limit).toBe(100);
      expect(r.body.transactions.commits).toBeGreaterThan(0);
      expect(r.body.size_mb).toBeGreaterThanOrEqual(0);
      expect(r.body.cache_hit_ratio).toBeGreaterThan(0);
      expect(r.body.cache_hit_ratio).toBeLessThanOrEqual(1);
      expect(r.body.cache_hit_scope).toBe(dbType === 'postgresql' ? 'database' : 'server');
      await conn.end();
    });
  });

  it('enforces the plan quota, the 100-per-account cap and the creation rate', async () => {
    const free = await dbCustomer(t, 'free');
    // Nine creates at once on the free plan: exactly three databases (a race test; the key may
    // create 10 an hour, so the tenth below meets the quota, not the rate).
    await expectLimitHolds({
      room: 3,
      attempts: 9,
      send: (i) =>
        t.request('POST', '/v1/databases', {
          key: free.key,
          body: { db_type: 'postgresql', db_name: `race${i}` },
        }),
      refusal: { status: 403, code: 'database_quota_exceeded' },
    });
    const fourth = await t.request('POST', '/v1/databases', {
      key: free.key,
      body: { db_type: 'mariadb', db_name: 'd' },
    });
    expect(fourth.status).toBe(403);
    expect(fourth.body.detail.code).toBe('database_quota_exceeded');
    const quota = await t.request('GET', '/v1/quota', { key: free.pat });
    expect(quota.body).toMatchObject({
      plan: 'free',
      databases: { used: 3, limit: 3 },
      database_size_mb: 1024,
      snapshots_per_database: 5,
      connections_per_database: 100,
      firewall_rules_per_database: 50,
      rate_limits: { api_requests_per_minute: 500, creations_per_hour: 10, snapshots_per_hour: 20 },
    });
    const ent = await dbCustomer(t, 'enterprise');
    expect((await t.request('GET', '/v1/quota', { key: ent.key })).body.databases.limit).toBe(100);

    // 10 creations per hour per key: the 11th is refused with the stated 429 body.
    const busy = await dbCustomer(t, 'pro');
    let last = null;
    for (let i = 0; i < 11; i++) {
      last = await t.request('POST', '/v1/databases', {
        key: busy.key,
        body: { db_type: 'postgresql', db_name: `r${i}` },
      });
    }
    expect(last?.status).toBe(429);
    expect(last?.body.error).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      details: { limit: 10, window: '3600s' },
    });
    // A restore into a new database is a creation too: refused the same way (nothing made).
    const snap = await t.request('POST', `/v1/databases/postgresql/cust_${busy.shortId}_pg_r0/snapshots`, {
      key: busy.key,
      body: {},
    });
    expect(snap.status, snap.text).toBe(201);
    const copy = await t.request('POST', `/v1/databases/postgresql/cust_${busy.shortId}_pg_r0/restore`, {
      key: busy.key,
      body: { snapshot_id: snap.body.snapshot_id, target_db_name: 'sneaky' },
    });
    expect(copy.status).toBe(429);
    expect(copy.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    const names = (await t.request('GET', '/v1/databases/postgresql', { key: busy.key })).body.databases;
    expect(names).not.toContain(`cust_${busy.shortId}_pg_sneaky`);
    for (const c of [free, busy]) {
      for (const name of (await t.request('GET', '/v1/databases/postgresql', { key: c.key })).body
        .databases) {
        await t.request('DELETE', `/v1/databases/postgresql/${name}`, { key: c.key });
      }
    }
  });

  it('counts every route against 500 requests a minute and snapshots against 20 an hour', async () => {
    const t2 = await TestFjord.create({
      ...engines.env,
      FJORD_RATE_LIMITS: JSON.stringify({ database: { points: 6 }, 'database.snapshot': { points: 1 } }),
    });
    try {
      const c = await dbCustomer(t2);
      const db = await createDb(t2, c, 'mariadb', 'rl');
      const base = `/v1/databases/mariadb/${db.technical_name}`;
      expect((await t2.request('POST', `${base}/snapshots`, { key: c.key, body: {} })).status).toBe(201);
      const second = await t2.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
      expect(second.status).toBe(429);
      expect(second.body.error.details).toEqual({ limit: 1, window: '3600s' });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await t2.request('GET', base, { key: c.key })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const r = await t2.request('GET', base, { key: c.key });
      expect(r.headers['retry-after']).toBeDefined();
      expect(r.headers['x-ratelimit-limit']).toBe('6');
      // Another credential of the same customer has its own count.
      expect((await t2.request('GET', base, { key: c.pat })).status).toBe(200);
    } finally {
      await t2.close();
    }
  });

  it('refuses firewall rules it cannot enforce (external PostgreSQL without a managed pg_hba.conf)', async () => {
    const { FJORD_POSTGRES_HBA_FILE: _, ...env } = engines.env;
    const t2 = await TestFjord.create(env);
    try {
      const c = await dbCustomer(t2);
      const db = await createDb(t2, c, 'postgresql', 'nohba');
      const base = `/v1/databases/postgresql/${db.technical_name}/firewall`;
      const r = await t2.request('POST', base, { key: c.pat, body: { ip_address: '127.0.0.2' } });
      expect(r.status).toBe(409);
      expect(r.body.detail.code).toBe('firewall_unmanaged');
      expect((await t2.request('GET', base, { key: c.pat })).body.total, 'the rule is not kept').toBe(0);
      // A snapshot needs no body at all.
      const snap = await t2.request('POST', `/v1/databases/postgresql/${db.technical_name}/snapshots`, {
        key: c.key,
      });
      expect(snap.status, snap.text).toBe(201);
      await t2.request('DELETE', `/v1/databases/postgresql/${db.technical_name}`, { key: c.key });
    } finally {
      await t2.close();
    }
  });

  it('refuses the encrypted tier where the server has no encrypted storage', async () => {
    const c = await dbCustomer(t);
    const pg = await t.request('POST', '/v1/databases', {
      key: c.key,
      body: { db_type: 'postgresql', db_name: 'sec', tier: 'encrypted' },
    });
    expect(pg.status).toBe(409);
    expect(pg.body.detail.code).toBe('tier_unavailable');
    const my = await createDb(t, c, 'mariadb', 'sec', 'encrypted');
    const list = await t.request('GET', '/v1/databases', { key: c.key });
    expect(list.body.databases[0].tier).toBe('encrypted');
    await t.request('DELETE', `/v1/databases/mariadb/${my.technical_name}`, { key: c.key });
  });

  it('records every operation in the history, newest first, paginated', async () => {
    const c = await dbCustomer(t);
    const db = await createDb(t, c, 'postgresql', 'hist');
    await t.request('POST', `/v1/databases/postgresql/${db.technical_name}/credentials/rotate`, {
      key: c.key,
    });
    await t.request('POST', `/v1/databases/postgresql/${db.technical_name}/restart`, { key: c.key });
    // By the name the customer chose, as well as by the technical name.
    const byFriendly = await t.request('GET', '/v1/databases/history', {
      key: c.pat,
      query: { db_name: 'hist' },
    });
    expect(byFriendly.body.total).toBe(3);
    await t.request('DELETE', `/v1/databases/postgresql/${db.technical_name}`, { key: c.key });
    const h = await t.request('GET', '/v1/databases/history', { key: c.pat, query: { per_page: '2' } });
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ total: 4, page: 1, per_page: 2 });
    expect(h.body.history.map((e: { action: string }) => e.action)).toEqual([
      'database.deleted',
      'database.restarted',
    ]);
    const p2 = await t.request('GET', '/v1/databases/history', {
      key: c.pat,
      query: { per_page: '2', page: '2' },
    });
    expect(p2.body.history.map((e: { action: string }) => e.action)).toEqual([
      'database.credentials_rotated',
      'database.created',
    ]);
    expect(p2.body.history[1]).toMatchObject({
      db_name: db.technical_name,
      db_type: 'postgresql',
      actor_type: 'service_key',
    });
  });

  it('lists databases among the account services', async () => {
    const c = await dbCustomer(t);
    const db = await createDb(t, c, 'mariadb', 'svc');
    const r = await t.request('GET', '/v1/account/services', { key: c.pat });
    expect(r.body.find((s: { name: string }) => s.name === db.technical_name)).toMatchObject({
      service_type: 'database',
    });
    await t.request('DELETE', `/v1/databases/mariadb/${db.technical_name}`, { key: c.key });
  });
});
