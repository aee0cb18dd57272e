import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsService } from '../../src/areas/dns/service.js';
import { openStore, type Store } from '../../src/kernel/store/store.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
const Z = 'source.example';
const dns = () => t.fjord.areas.get('dns')!.service as DnsService;

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer();
  b = await t.customer();
  await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: Z } });
});
afterAll(() => t.close());

describe('the zone source the DNS server reads', () => {
  it('gives each served zone its SOA, records as data, and no key while unsigned', async () => {
    await t.request('POST', `/v1/dns/zones/${Z}/records/batch`, {
      key: a.pat,
      body: {
        changes: [
          { action: 'create', record_type: 'A', host: '@', record: '192.0.2.1', ttl: 120 },
          { action: 'create', record_type: 'MX', host: '@', record: 'mx', priority: 10 },
          { action: 'create', record_type: 'SRV', host: '_imap._tcp', record: '1 993 mx', priority: 0 },
          { action: 'create', record_type: 'CAA', host: '@', record: '0 issue "ca.example"' },
          { action: 'create', record_type: 'TXT', host: 'txt', record: '"a b" "c"' },
        ],
      },
    });
    const all = await dns().source.loadAll();
    const snap = all.find((z) => z.apex === Z)!;
    expect(snap).toMatchObject({
      customerId: a.id,
      status: 'pending',
      nameservers: ['ns1.fjord.test', 'ns2.fjord.test'],
      signingKey: null,
    });
    expect(snap.soa).toMatchObject({
      mname: 'ns1.fjord.test',
      rname: `hostmaster.${Z}`,
      minimum: 300,
      ttl: 3600,
    });
    expect(snap.records).toEqual(
      expect.arrayContaining([
        { name: Z, ttl: 120, data: { type: 'A', address: '192.0.2.1' } },
        { name: Z, ttl: 3600, data: { type: 'MX', preference: 10, exchange: `mx.${Z}` } },
        {
          name: `_imap._tcp.${Z}`,
          ttl: 3600,
          data: { type: 'SRV', priority: 0, weight: 1, port: 993, target: `mx.${Z}` },
        },
        { name: Z, ttl: 3600, data: { type: 'CAA', flags: 0, tag: 'issue', value: 'ca.example' } },
        { name: `txt.${Z}`, ttl: 3600, data: { type: 'TXT', strings: ['a b', 'c'] } },
      ]),
    );
    expect(snap.records).toHaveLength(5);
    expect(await dns().source.loadZone(Z.toUpperCase())).toEqual(snap);
    expect(await dns().source.loadZone('unknown.example')).toBeNull();
  });

  it('loads thousands of zones at once (id lists are queried in pieces)', async () => {
    const c = await t.customer();
    const now = Date.now();
    const zones = Array.from({ length: 1200 }, (_, i) => ({
      id: `bulk-zone-${i}`,
      customer_id: c.id,
      name: `bulk${i}.load.example`,
      status: 'active',
      serial: 2026010100,
      dnssec_enabled: 0,
      created_at: now,
      updated_at: now,
      delegation_checked_at: null,
    }));
    for (let i = 0; i < zones.length; i += 100) {
      await t.kernel.store.db
        .insertInto('dns_zones')
        .values(zones.slice(i, i + 100))
        .execute();
      await t.kernel.store.db
        .insertInto('dns_records')
        .values(
          zones.slice(i, i + 100).map((z) => ({
            id: `r-${z.id}`,
            zone_id: z.id,
            name: 'www',
            type: 'A',
            content: '192.0.2.1',
            ttl: 300,
            priority: null,
            created_at: now,
          })),
        )
        .execute();
    }
    const all = await dns().source.loadAll();
    const bulk = all.filter((z) => z.apex.endsWith('.load.example'));
    expect(bulk).toHaveLength(1200);
    expect(bulk.every((z) => z.records.length === 1)).toBe(true);
    await t.kernel.store.db.deleteFrom('dns_zones').where('customer_id', '=', c.id).execute();
  });

  it('leaves disabled zones out', async () => {
    await t.operator('POST', `/admin/v1/dns/zones/${Z}/disable`);
    expect((await dns().source.loadAll()).map((z) => z.apex)).not.toContain(Z);
    expect(await dns().source.loadZone(Z)).toBeNull();
    await t.operator('POST', `/admin/v1/dns/zones/${Z}/enable`);
    expect(await dns().source.loadZone(Z)).not.toBeNull();
  });

  it('announces every change to subscribers on another connection of the store', async () => {
    // On PostgreSQL a second store is a second process's view: the notice crosses LISTEN/NOTIFY.
    const other: Store =
      t.kernel.store.kind === 'postgres' ? await openStore(t.kernel.config) : t.kernel.store;
    const heard: string[] = [];
    const { StoreZoneSource } = await import('../../src/areas/dns/zone-source.js');
    const { DnsRepo } = await import('../../src/areas/dns/repo.js');
    const listener = new StoreZoneSource(
      new DnsRepo(other.typed()),
      other,
      t.kernel.secrets,
      ['ns1.fjord.test'],
      t.kernel.log,
      () => t.kernel.clock.nowMs(),
    );
    const stop = listener.onZoneChanged((apex) => heard.push(apex));
    try {
      await other.listening(); // LISTEN is issued asynchronously
      await t.request('POST', `/v1/dns/zones/${Z}/records`, {
        key: a.pat,
        body: { record_type: 'A', host: 'n', record: '192.0.2.5' },
      });
      await t.request('POST', '/v1/dns/zones', { key: b.pat, body: { domain: 'fresh.example' } });
      await t.request('POST', `/v1/dns/zones/${Z}/dnssec/activate`, { key: a.pat });
      // Notices cross LISTEN/NOTIFY on PostgreSQL: a loaded machine may take seconds.
      const deadline = Date.now() + 10_000;
      while (heard.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(heard).toEqual([Z, 'fresh.example', Z]);
      // The listening side reads the change it was told about.
      const seen = await listener.loadZone(Z);
      expect(seen!.records.some((r) => r.name === `n.${Z}`)).toBe(true);
      expect(seen!.signingKey).not.toBeNull();
    } finally {
      stop();
      if (other !== t.kernel.store) await other.close();
    }
  });

  it('asks servers to reload everything after an emulator reset', async () => {
    const heard: string[] = [];
    const stop = dns().source.onZoneChanged((apex) => heard.push(apex));
    await t.operator('POST', '/admin/v1/reset');
    const deadline = Date.now() + 10_000;
    while (!heard.includes('*') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    stop();
    expect(heard).toContain('*');
    a = await t.customer();
    b = await t.customer();
    await t.kernel.store.db.updateTable('customers').set({ plan: 'pro' }).where('id', '=', a.id).execute();
    await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: Z } });
  });
});

describe('query statistics', () => {
  it('aggregates the server’s counts by day and type', async () => {
    const zone = (await t.request('GET', `/v1/dns/zones/${Z}`, { key: a.pat })).body;
    const now = t.kernel.clock.nowMs();
    const today = new Date(now);
    const firstOfMonth = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1, 0, 0, 1);
    const lastMonth = firstOfMonth - 2 * 86400_000;
    const earlierToday = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate(), 0, 0, 1);
    await dns().recordQueries([
      { zoneId: zone.id, qtype: 'A', count: 10, totalMicros: 2000, at: now },
      { zoneId: zone.id, qtype: 'A', count: 5, totalMicros: 1000, at: earlierToday },
      { zoneId: zone.id, qtype: 'AAAA', count: 3, totalMicros: 600, at: now },
      { zoneId: zone.id, qtype: 'mx', count: 2, totalMicros: 400, at: firstOfMonth },
      { zoneId: zone.id, qtype: 'TXT', count: 100, totalMicros: 1, at: lastMonth },
      { zoneId: 'deleted-zone', qtype: 'A', count: 7, totalMicros: 7, at: now },
    ]);
    await dns().recordQueries([{ zoneId: zone.id, qtype: 'A', count: 1, totalMicros: 200, at: now }]);
    const r = await t.request('GET', `/v1/dns/zones/${Z}/statistics`, { key: a.pat });
    expect(r.status).toBe(200);
    const sameDay = new Date(firstOfMonth).getUTCDate() === today.getUTCDate();
    expect(r.body).toEqual({
      queries_today: 19 + (sameDay ? 2 : 0),
      queries_this_month: 21,
      top_record_types: { A: 16, AAAA: 3, MX: 2 },
      response_time_ms_avg: 0.2,
    });
    expect(Object.keys(r.body.top_record_types)).toEqual(['A', 'AAAA', 'MX']);
    const rows = await t.kernel.store.db
      .selectFrom('dns_query_stats')
      .selectAll()
      .where('zone_id', '=', 'deleted-zone')
      .execute();
    expect(rows).toEqual([]);
  });

  it('sums one type spelled in two cases within a batch into one row', async () => {
    await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: 'cases.example' } });
    const zone = (await t.request('GET', '/v1/dns/zones/cases.example', { key: a.pat })).body;
    const at = t.kernel.clock.nowMs();
    await dns().recordQueries([
      { zoneId: zone.id, qtype: 'mx', count: 1, totalMicros: 100, at },
      { zoneId: zone.id, qtype: 'MX', count: 2, totalMicros: 200, at },
    ]);
    const r = await t.request('GET', '/v1/dns/zones/cases.example/statistics', { key: a.pat });
    expect(r.body.top_record_types).toEqual({ MX: 3 });
    expect(r.body.response_time_ms_avg).toBe(0.1);
  });

  it('drops daily counts older than the retention, once a day', async () => {
    const zone = (await t.request('GET', `/v1/dns/zones/${Z}`, { key: a.pat })).body;
    const old = t.kernel.clock.nowMs() - 500 * 86400_000;
    await dns().recordQueries([{ zoneId: zone.id, qtype: 'NS', count: 4, totalMicros: 4, at: old }]);
    const count = async () =>
      (
        await t.kernel.store.db
          .selectFrom('dns_query_stats')
          .select('day')
          .where('qtype', '=', 'NS')
          .execute()
      ).length;
    expect(await count()).toBe(1);
    await t.advance(86400);
    expect(await count()).toBe(0);
  });

  it('answers zeros for a zone nobody asked about', async () => {
    await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: 'quiet.example' } });
    const r = await t.request('GET', '/v1/dns/zones/quiet.example/statistics', { key: a.pat });
    expect(r.body).toEqual({
      queries_today: 0,
      queries_this_month: 0,
      top_record_types: {},
      response_time_ms_avg: 0,
    });
  });
});

describe('the service other areas write through', () => {
  it('finds the customer’s zone of a name, the longest apex first', async () => {
    await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: `home.${Z}` } });
    expect(await dns().findZoneForName(a.id, `router.home.${Z}`)).toMatchObject({
      apex: `home.${Z}`,
      host: 'router',
      status: 'pending',
    });
    expect(await dns().findZoneForName(a.id, `www.${Z}.`)).toMatchObject({ apex: Z, host: 'www' });
    expect(await dns().findZoneForName(a.id, Z)).toMatchObject({ apex: Z, host: '@' });
    expect(await dns().findZoneForName(b.id, `www.${Z}`)).toBeNull();
    expect(await dns().findZoneForName(a.id, 'www.unrelated.example')).toBeNull();
  });

  it('sets and clears address records, raising the serial only on a real change', async () => {
    const found = (await dns().findZoneForName(a.id, `gw.${Z}`))!;
    const serial = async () => (await dns().source.loadZone(Z))!.soa.serial;
    const s0 = await serial();
    expect(await dns().setAddressRecords(found.zoneId, found.host, 'A', ['192.0.2.7'], 60)).toEqual({
      changed: true,
    });
    const s1 = await serial();
    expect(s1).toBeGreaterThan(s0);
    expect(await dns().setAddressRecords(found.zoneId, found.host, 'A', ['192.0.2.7'], 60)).toEqual({
      changed: false,
    });
    expect(await serial()).toBe(s1);
    await dns().setAddressRecords(found.zoneId, `gw.${Z}.`, 'A', ['192.0.2.8', '192.0.2.9'], 60);
    await dns().setAddressRecords(found.zoneId, found.host, 'AAAA', ['2001:db8::7'], 60);
    const list = (await t.request('GET', `/v1/dns/zones/${Z}/records`, { key: a.pat })).body.records.filter(
      (r: { name: string }) => r.name === 'gw',
    );
    expect(list.map((r: { type: string; content: string }) => `${r.type} ${r.content}`).sort()).toEqual([
      'A 192.0.2.8',
      'A 192.0.2.9',
      'AAAA 2001:db8::7',
    ]);
    await expect(dns().setAddressRecords(found.zoneId, found.host, 'A', ['not-an-ip'], 60)).rejects.toThrow(
      /IPv4/,
    );
    expect(await dns().deleteRecordSet(found.zoneId, found.host, 'A')).toEqual({ changed: true });
    const left = (await t.request('GET', `/v1/dns/zones/${Z}/records`, { key: a.pat })).body.records.filter(
      (r: { name: string }) => r.name === 'gw',
    );
    expect(left.map((r: { type: string }) => r.type)).toEqual(['AAAA']);
  });
});
