import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { dnsAddresses } from '../helpers/dns-records.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let home: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_DYN_HOME_LIMITS: 'hostnames=3,updates_per_hour=6,sources=2' });
  home = await t.customer();
});
afterAll(() => t.close());

const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

async function nic(
  query: string,
  auth: { username: string; password: string } | null,
  agent = 'ddclient/3.10.0',
) {
  const headers: Record<string, string> = {};
  if (auth) headers['authorization'] = basic(auth.username, auth.password);
  headers['user-agent'] = agent;
  const r = await t.fjord.http.inject({ method: 'GET', url: `/nic/update?${query}`, headers });
  return { status: r.statusCode, body: r.body, headers: r.headers };
}

async function hostnameWithToken(c: TestCustomer, label: string) {
  const h = await t.request('POST', '/v1/dyn/hostnames', {
    key: c.pat,
    body: { hostname: `${label}.dyn.fjord.test` },
  });
  expect(h.status).toBe(201);
  const tok = await t.request('POST', `/v1/dyn/hostnames/${h.body.id}/router-tokens`, { key: c.pat });
  expect(tok.status).toBe(201);
  return { hostname: h.body, token: tok.body as { id: string; username: string; password: string } };
}

describe('dynamic DNS: entitlement and hostnames', () => {
  it('gives private customers the home plan and business customers the fleet plan', async () => {
    const r = await t.request('GET', '/v1/dyn/entitlement', { key: home.pat });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      plan: 'home',
      customer_type: 'private',
      limits: { hostnames: 3, updates_per_hour: 6, sources: 2 },
      usage: { hostnames: 0 },
      zone: 'dyn.fjord.test',
      ttl: 60,
    });
    expect(r.body.update_url).toMatch(/\/nic\/update$/);
    const biz = await t.customer(undefined, 'business');
    const f = await t.request('GET', '/v1/dyn/entitlement', { key: biz.pat });
    expect(f.body).toMatchObject({
      plan: 'fleet',
      limits: { hostnames: 500, updates_per_hour: 360, sources: 10 },
    });
  });

  it('claims one-label names in the dynamic zone, first come first served', async () => {
    const c = await t.customer();
    const r = await t.request('POST', '/v1/dyn/hostnames', {
      key: c.pat,
      body: { hostname: 'MyHome.Dyn.Fjord.Test.' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      hostname: 'myhome.dyn.fjord.test',
      zone_kind: 'platform',
      ipv4: null,
      ipv6: null,
      offline: false,
      active_source_id: null,
      last_update_at: null,
    });
    const other = await t.customer();
    const taken = await t.request('POST', '/v1/dyn/hostnames', {
      key: other.pat,
      body: { hostname: 'myhome.dyn.fjord.test' },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.detail.code).toBe('hostname_taken');
    for (const hostname of ['a.b.dyn.fjord.test', 'dyn.fjord.test', 'example.com', 'not a name', '']) {
      const bad = await t.request('POST', '/v1/dyn/hostnames', { key: c.pat, body: { hostname } });
      expect(bad.status, hostname).toBe(422);
    }
  });

  it('claims names inside the customer’s own Fjord zone', async () => {
    const c = await t.customer();
    expect(
      (await t.request('POST', '/v1/dns/zones', { key: c.pat, body: { domain: 'own-zone.com' } })).status,
    ).toBe(201);
    const r = await t.request('POST', '/v1/dyn/hostnames', {
      key: c.pat,
      body: { hostname: 'office.own-zone.com' },
    });
    expect(r.status).toBe(201);
    expect(r.body.zone_kind).toBe('customer');
    const other = await t.customer();
    const foreign = await t.request('POST', '/v1/dyn/hostnames', {
      key: other.pat,
      body: { hostname: 'x.own-zone.com' },
    });
    expect(foreign.status).toBe(422);
  });

  it('enforces the plan’s hostnames and sources', async () => {
    const c = await t.customer();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await t.request('POST', '/v1/dyn/hostnames', {
        key: c.pat,
        body: { hostname: `quota${i}-${c.shortId}.dyn.fjord.test` },
      });
      ids.push(r.body.id);
    }
    const over = await t.request('POST', '/v1/dyn/hostnames', {
      key: c.pat,
      body: { hostname: `quota9-${c.shortId}.dyn.fjord.test` },
    });
    expect(over.status).toBe(403);
    expect(over.body.detail.code).toBe('quota_exceeded');
    const url = `/v1/dyn/hostnames/${ids[0]}`;
    expect((await t.request('POST', `${url}/router-tokens`, { key: c.pat })).status).toBe(201);
    expect((await t.request('POST', `${url}/updater-credentials`, { key: c.pat })).status).toBe(201);
    const third = await t.request('POST', `${url}/router-tokens`, { key: c.pat });
    expect(third.status).toBe(403);
    expect((await t.request('GET', '/v1/dyn/entitlement', { key: c.pat })).body.usage.hostnames).toBe(3);
  });
});

describe('dynamic DNS: /nic/update', () => {
  it('answers good, then nochg, and writes the A record', async () => {
    const { hostname, token } = await hostnameWithToken(home, 'router1');
    const first = await nic(`system=dyndns&hostname=${hostname.hostname}&myip=203.0.113.7`, token);
    expect(first).toMatchObject({ status: 200, body: 'good 203.0.113.7' });
    expect(first.headers['content-type']).toMatch(/^text\/plain/);
    expect(await dnsAddresses(t, hostname.hostname, 'A')).toEqual(['203.0.113.7']);
    expect((await nic(`hostname=${hostname.hostname}&myip=203.0.113.7`, token)).body).toBe(
      'nochg 203.0.113.7',
    );
    const view = (await t.request('GET', `/v1/dyn/hostnames/${hostname.id}`, { key: home.pat })).body;
    expect(view).toMatchObject({ ipv4: '203.0.113.7', ipv6: null, active_source_id: token.id });
    expect(view.last_update_at).not.toBeNull();
  });

  it('keeps IPv4 in A and IPv6 in AAAA, and uses the client address when myip is absent', async () => {
    const { hostname, token } = await hostnameWithToken(home, 'dualstack');
    expect((await nic(`hostname=${hostname.hostname}&myip=2001:DB8::1`, token)).body).toBe(
      'good 2001:db8::1',
    );
    expect(await dnsAddresses(t, hostname.hostname, 'AAAA')).toEqual(['2001:db8::1']);
    expect(await dnsAddresses(t, hostname.hostname, 'A')).toEqual([]);
    expect((await nic(`hostname=${hostname.hostname}`, token)).body).toBe('good 127.0.0.1');
    expect(await dnsAddresses(t, hostname.hostname, 'A')).toEqual(['127.0.0.1']);
    expect(await dnsAddresses(t, hostname.hostname, 'AAAA')).toEqual(['2001:db8::1']);
    expect((await nic(`hostname=${hostname.hostname}&myip=198.51.100.1,2001:db8::2`, token)).body).toBe(
      'good 198.51.100.1',
    );
    expect(await dnsAddresses(t, hostname.hostname, 'AAAA')).toEqual(['2001:db8::2']);
  });

  it('takes a hostname offline and back', async () => {
    const { hostname, token } = await hostnameWithToken(await t.customer(), 'offline');
    await nic(`hostname=${hostname.hostname}&myip=192.0.2.10`, token);
    expect((await nic(`hostname=${hostname.hostname}&myip=192.0.2.10&offline=YES`, token)).body).toBe(
      'good 192.0.2.10',
    );
    expect(await dnsAddresses(t, hostname.hostname, 'A')).toEqual([]);
    expect((await nic(`hostname=${hostname.hostname}&myip=192.0.2.10`, token)).body).toBe('good 192.0.2.10');
    expect(await dnsAddresses(t, hostname.hostname, 'A')).toEqual(['192.0.2.10']);
  });

  it('answers the DynDNS2 codes for bad requests', async () => {
    const { hostname, token } = await hostnameWithToken(await t.customer(), 'codes');
    const noAuth = await nic(`hostname=${hostname.hostname}`, null);
    expect(noAuth).toMatchObject({ status: 401, body: 'badauth' });
    expect(noAuth.headers['www-authenticate']).toMatch(/^Basic/);
    expect((await nic(`hostname=${hostname.hostname}`, { ...token, password: 'wrong' })).body).toBe(
      'badauth',
    );
    expect((await nic(`hostname=${hostname.hostname}`, { username: 'rt-nobody', password: 'x' })).body).toBe(
      'badauth',
    );
    expect((await nic(`hostname=${hostname.hostname}`, token, '')).body).toBe('badagent');
    expect((await nic('hostname=', token)).body).toBe('notfqdn');
    expect((await nic('hostname=localhost', token)).body).toBe('notfqdn');
    expect((await nic('hostname=other.dyn.fjord.test', token)).body).toBe('nohost');
    const many = Array.from({ length: 21 }, (_, i) => `h${i}.dyn.fjord.test`).join(',');
    expect((await nic(`hostname=${many}`, token)).body).toBe('numhost');
    expect((await nic(`hostname=${hostname.hostname},other.dyn.fjord.test&myip=192.0.2.5`, token)).body).toBe(
      'good 192.0.2.5\nnohost',
    );
  });

  it('answers abuse past the plan’s updates per hour, until the hour has passed', async () => {
    const { hostname, token } = await hostnameWithToken(await t.customer(), 'loop');
    for (let i = 0; i < 6; i++) {
      expect((await nic(`hostname=${hostname.hostname}&myip=192.0.2.${i + 1}`, token)).body).toMatch(
        /^good /,
      );
    }
    expect((await nic(`hostname=${hostname.hostname}&myip=192.0.2.99`, token)).body).toBe('abuse');
    expect(await dnsAddresses(t, hostname.hostname, 'A')).toEqual(['192.0.2.6']);
    await t.advance(3601);
    expect((await nic(`hostname=${hostname.hostname}&myip=192.0.2.99`, token)).body).toBe('good 192.0.2.99');
  });

  it('lets exactly one source update a hostname and switches it atomically', async () => {
    const c = await t.customer();
    const { hostname, token: router } = await hostnameWithToken(c, 'switch');
    const url = `/v1/dyn/hostnames/${hostname.id}`;
    const desktop = (
      await t.request('POST', `${url}/updater-credentials`, { key: c.pat, body: { description: 'laptop' } })
    ).body;
    expect(desktop).toMatchObject({ kind: 'updater', active: false, description: 'laptop' });
    expect(desktop.username).toMatch(/^up-/);
    expect((await nic(`hostname=${hostname.hostname}&myip=192.0.2.1`, desktop)).body).toBe('badauth');
    expect((await nic(`hostname=${hostname.hostname}&myip=192.0.2.1`, router)).body).toBe('good 192.0.2.1');

    const switched = await t.request('PUT', `${url}/active-source`, {
      key: c.pat,
      body: { source_id: desktop.id },
    });
    expect(switched.status).toBe(200);
    expect(switched.body.active_source_id).toBe(desktop.id);
    expect((await nic(`hostname=${hostname.hostname}&myip=192.0.2.2`, router)).body).toBe('badauth');
    expect((await nic(`hostname=${hostname.hostname}&myip=192.0.2.2`, desktop)).body).toBe('good 192.0.2.2');

    const tokens = (await t.request('GET', `${url}/router-tokens`, { key: c.pat })).body;
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).not.toHaveProperty('password');
    expect(tokens[0].active).toBe(false);
    const bad = await t.request('PUT', `${url}/active-source`, { key: c.pat, body: { source_id: 'nope' } });
    expect(bad.status).toBe(422);

    // Deleting the active source leaves none: no implicit switch back.
    expect(
      (await t.request('DELETE', `${url}/updater-credentials/${desktop.id}`, { key: c.pat })).status,
    ).toBe(200);
    expect((await t.request('GET', url, { key: c.pat })).body.active_source_id).toBeNull();
    expect((await nic(`hostname=${hostname.hostname}&myip=192.0.2.3`, router)).body).toBe('badauth');
  });

  it('keeps an update history, newest first', async () => {
    const c = await t.customer();
    const { hostname, token } = await hostnameWithToken(c, 'history');
    await nic(`hostname=${hostname.hostname}&myip=192.0.2.1`, token, 'inadyn/2.10');
    await nic(`hostname=${hostname.hostname}&myip=192.0.2.1`, token, 'inadyn/2.10');
    const h = await t.request('GET', `/v1/dyn/hostnames/${hostname.id}/updates?page_size=1`, { key: c.pat });
    expect(h.body).toMatchObject({ total: 2, page: 1, page_size: 1 });
    expect(h.body.updates[0]).toMatchObject({
      result: 'nochg',
      ipv4: '192.0.2.1',
      source_id: token.id,
      user_agent: 'inadyn/2.10',
      client_ip: '127.0.0.1',
    });
  });

  it('removes the records when a hostname is deleted', async () => {
    const c = await t.customer();
    const { hostname, token } = await hostnameWithToken(c, 'deleted');
    await nic(`hostname=${hostname.hostname}&myip=192.0.2.1`, token);
    const del = await t.request('DELETE', `/v1/dyn/hostnames/${hostname.id}`, { key: c.pat });
    expect(del.status).toBe(200);
    expect(await dnsAddresses(t, hostname.hostname, 'A')).toEqual([]);
    expect((await nic(`hostname=${hostname.hostname}&myip=192.0.2.1`, token)).body).toBe('badauth');
    // The name is free again.
    expect(
      (await t.request('POST', '/v1/dyn/hostnames', { key: c.pat, body: { hostname: hostname.hostname } }))
        .status,
    ).toBe(201);
  });
});

describe('dynamic DNS: edge cases and races', () => {
  it('keeps the platform zone out of customers’ hands', async () => {
    const c = await t.customer();
    for (const domain of ['dyn.fjord.test', 'squat.dyn.fjord.test', 'fjord.test']) {
      const r = await t.request('POST', '/v1/dns/zones', { key: c.pat, body: { domain } });
      expect(r.status, domain).toBe(409);
      expect(r.body.detail.code).toBe('zone_reserved');
    }
  });

  it('stores addresses in canonical form and maps IPv4-mapped IPv6 to the A record', async () => {
    const { hostname, token } = await hostnameWithToken(await t.customer(), 'canonical');
    expect((await nic(`hostname=${hostname.hostname}&myip=2001:DB8:0:0::1`, token)).body).toBe(
      'good 2001:db8::1',
    );
    expect((await nic(`hostname=${hostname.hostname}&myip=2001:db8::1`, token)).body).toBe(
      'nochg 2001:db8::1',
    );
    expect((await nic(`hostname=${hostname.hostname}&myip=::ffff:192.0.2.77`, token)).body).toBe(
      'good 192.0.2.77',
    );
    expect(await dnsAddresses(t, hostname.hostname, 'A')).toEqual(['192.0.2.77']);
    expect(await dnsAddresses(t, hostname.hostname, 'AAAA')).toEqual(['2001:db8::1']);
  });

  it('answers repeated parameters in text, never with a JSON error', async () => {
    const { hostname, token } = await hostnameWithToken(await t.customer(), 'repeated');
    const r = await nic(
      `hostname=${hostname.hostname}&hostname=other.dyn.fjord.test&myip=192.0.2.8&myip=192.0.2.9`,
      token,
    );
    expect(r).toMatchObject({ status: 200, body: 'good 192.0.2.8\nnohost' });
  });

  it('creates exactly `sources` credentials and one active source under concurrency', async () => {
    const c = await t.customer();
    const h = await t.request('POST', '/v1/dyn/hostnames', {
      key: c.pat,
      body: { hostname: `race-${c.shortId}.dyn.fjord.test` },
    });
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.request('POST', `/v1/dyn/hostnames/${h.body.id}/router-tokens`, { key: c.pat }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(2);
    expect(results.filter((r) => r.status === 403)).toHaveLength(4);
    expect(created.filter((r) => r.body.active)).toHaveLength(1);
  });

  it('leaves DNS equal to the hostname’s row after concurrent updates', async () => {
    const c = await t.customer(undefined, 'business');
    const { hostname, token } = await hostnameWithToken(c, 'concurrent');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        nic(`hostname=${hostname.hostname}&myip=198.51.100.${i + 1}`, token),
      ),
    );
    for (const a of answers) expect(a.body).toMatch(/^(good|nochg) 198\.51\.100\.\d$/);
    const row = (await t.request('GET', `/v1/dyn/hostnames/${hostname.id}`, { key: c.pat })).body;
    expect(await dnsAddresses(t, hostname.hostname, 'A')).toEqual([row.ipv4]);
  });

  it('refuses names in a customer zone that hold other records, and keeps them on delete', async () => {
    const c = await t.customer();
    await t.request('POST', '/v1/dns/zones', { key: c.pat, body: { domain: `keep-${c.shortId}.com` } });
    const zone = `keep-${c.shortId}.com`;
    const rec = (host: string, record_type: string, record: string) =>
      t.request('POST', `/v1/dns/zones/${zone}/records`, {
        key: c.pat,
        body: { host, record_type, record, ttl: 300 },
      });
    expect((await rec('office', 'A', '192.0.2.50')).status).toBe(201);
    expect((await rec('alias', 'CNAME', `office.${zone}`)).status).toBe(201);

    const cname = await t.request('POST', '/v1/dyn/hostnames', {
      key: c.pat,
      body: { hostname: `alias.${zone}` },
    });
    expect(cname.status).toBe(409);
    expect(cname.body.detail.code).toBe('name_in_use');
    const taken = await t.request('POST', '/v1/dyn/hostnames', {
      key: c.pat,
      body: { hostname: `office.${zone}` },
    });
    expect(taken.status).toBe(409);
    const replaced = await t.request('POST', '/v1/dyn/hostnames', {
      key: c.pat,
      body: { hostname: `office.${zone}`, replace_records: true },
    });
    expect(replaced.status).toBe(201);

    // Deleted before any update: the customer's own record stays.
    expect((await t.request('DELETE', `/v1/dyn/hostnames/${replaced.body.id}`, { key: c.pat })).status).toBe(
      200,
    );
    expect(await dnsAddresses(t, `office.${zone}`, 'A')).toEqual(['192.0.2.50']);

    // A hostname whose zone was deleted can still be deleted.
    const fresh = await t.request('POST', '/v1/dyn/hostnames', {
      key: c.pat,
      body: { hostname: `home.${zone}` },
    });
    const tok = (await t.request('POST', `/v1/dyn/hostnames/${fresh.body.id}/router-tokens`, { key: c.pat }))
      .body;
    expect((await nic(`hostname=home.${zone}&myip=192.0.2.60`, tok)).body).toBe('good 192.0.2.60');
    expect((await t.request('DELETE', `/v1/dns/zones/${zone}`, { key: c.pat })).status).toBe(200);
    expect((await t.request('DELETE', `/v1/dyn/hostnames/${fresh.body.id}`, { key: c.pat })).status).toBe(
      200,
    );
  });
});

describe('dynamic DNS: account services', () => {
  it('lists hostnames among the account’s services', async () => {
    const c = await t.customer();
    const { hostname } = await hostnameWithToken(c, 'services');
    const r = await t.request('GET', '/v1/account/services', { key: c.pat });
    expect(r.status).toBe(200);
    const entries = (Array.isArray(r.body) ? r.body : r.body.services) as {
      id: string;
      service_type: string;
    }[];
    expect(entries.find((e) => e.id === hostname.id)).toMatchObject({
      service_type: 'dyndns',
      name: hostname.hostname,
      status: 'active',
    });
  });
});

describe('dynamic DNS: access', () => {
  it('isolates customers', async () => {
    const { hostname, token } = await hostnameWithToken(home, 'isolated');
    const other = await t.customer();
    const url = `/v1/dyn/hostnames/${hostname.id}`;
    await expectTenantIsolation(t, { key: home.pat }, { key: other.pat }, [
      { method: 'GET', url },
      { method: 'GET', url: `${url}/router-tokens` },
      { method: 'GET', url: `${url}/updater-credentials` },
      { method: 'GET', url: `${url}/updates` },
      { method: 'POST', url: `${url}/router-tokens` },
      { method: 'PUT', url: `${url}/active-source`, body: { source_id: token.id } },
      { method: 'DELETE', url: `${url}/router-tokens/${token.id}` },
      { method: 'DELETE', url },
    ]);
    expect((await t.request('GET', '/v1/dyn/hostnames', { key: other.pat })).body).toEqual([]);
  });

  it('accepts a dyndns service key', async () => {
    const { key } = await t.kernel.identity.createServiceKey(home.id, 'dyndns', null);
    expect((await t.request('GET', '/v1/dyn/entitlement', { key })).status).toBe(200);
  });

  it('answers 401/403 correctly on every route', async () => {
    await expectAuthMatrix(t, 'Dynamic DNS');
  });
});
