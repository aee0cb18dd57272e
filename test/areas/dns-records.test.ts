import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsService } from '../../src/areas/dns/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
const Z = 'records.example';
const url = `/v1/dns/zones/${Z}/records`;
const dns = () => t.fjord.areas.get('dns')!.service as DnsService;
const serial = async () => (await dns().source.loadZone(Z))!.soa.serial;

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_RATE_LIMITS: JSON.stringify({ 'dns.record.delete': { points: 40 } }) });
  a = await t.customer();
  await t.kernel.store.db.updateTable('customers').set({ plan: 'pro' }).where('id', '=', a.id).execute();
  expect((await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: Z } })).status).toBe(201);
});
afterAll(() => t.close());

const create = (body: Record<string, unknown>) => t.request('POST', url, { key: a.pat, body });

describe('record values per type', () => {
  it.each([
    ['A', 'www', '192.0.2.10', null, 'www', '192.0.2.10'],
    ['AAAA', 'v6', '2001:DB8:0:0::1', null, 'v6', '2001:db8::1'],
    ['CNAME', 'alias', 'target.example.net.', null, 'alias', 'target.example.net'],
    ['CNAME', 'alias2', 'www', null, 'alias2', `www.${Z}`],
    ['MX', '@', 'mail', 10, '@', `mail.${Z}`],
    ['MX', 'nomail', '.', 0, 'nomail', '.'],
    ['TXT', '@', 'v=spf1 -all', null, '@', 'v=spf1 -all'],
    ['TXT', 'quoted', '"part one" "part \\"two\\""', null, 'quoted', '"part one" "part \\"two\\""'],
    ['NS', 'sub', 'ns1.other.example', null, 'sub', 'ns1.other.example'],
    ['SRV', '_sip._tcp', '5 5060 sip.example.net', 10, '_sip._tcp', '5 5060 sip.example.net'],
    ['SRV', '_xmpp._tcp.chat', '20 0 5269 xmpp', null, '_xmpp._tcp.chat', `0 5269 xmpp.${Z}`],
    ['CAA', '@', '0 issue "letsencrypt.org"', null, '@', '0 issue "letsencrypt.org"'],
    [
      'CAA',
      '@',
      '128 IODEF mailto:security@example.org',
      null,
      '@',
      '128 iodef "mailto:security@example.org"',
    ],
    ['CAA', '@', '0 issuewild ";"', null, '@', '0 issuewild ";"'],
    ['PTR', '10', 'host.example.net', null, '10', 'host.example.net'],
    ['A', '*', '192.0.2.20', null, '*', '192.0.2.20'],
    ['A', '*.dev', '192.0.2.21', null, '*.dev', '192.0.2.21'],
    ['A', `abs.${Z}.`, '192.0.2.22', null, 'abs', '192.0.2.22'],
    ['A', `Deep.Label.${Z}`, '192.0.2.23', null, 'deep.label', '192.0.2.23'],
    ['TXT', '_dmarc', 'v=DMARC1; p=none', null, '_dmarc', 'v=DMARC1; p=none'],
  ])('%s at %s: %s', async (type, host, record, priority, name, content) => {
    const r = await create({
      record_type: type,
      host,
      record,
      ttl: 300,
      ...(priority === null ? {} : { priority }),
    });
    expect(r.status, r.text).toBe(201);
    const expectedPriority = type === 'SRV' && priority === null ? 20 : priority;
    expect(r.body).toEqual({
      id: expect.any(String),
      name,
      type,
      content,
      ttl: 300,
      priority: expectedPriority,
    });
    expect(Object.keys(r.body).sort()).toEqual(['content', 'id', 'name', 'priority', 'ttl', 'type']);
  });

  it.each([
    ['A', 'x', '256.1.1.1', {}, 'record', 'IPv4'],
    ['A', 'x', '2001:db8::1', {}, 'record', 'IPv4'],
    ['AAAA', 'x', '192.0.2.1', {}, 'record', 'IPv6'],
    ['CNAME', 'x', '192.0.2.1', {}, 'record', 'IP address'],
    ['CNAME', 'x', 'bad..name', {}, 'record', 'valid'],
    ['MX', 'x', 'mail.example.net', {}, 'priority', 'required'],
    ['MX', 'x', 'mail.example.net', { priority: 70000 }, 'priority', ''],
    ['MX', 'x', '.', { priority: 10 }, 'priority', 'null MX'],
    ['A', 'x', '192.0.2.1', { priority: 5 }, 'priority', 'only to MX and SRV'],
    ['SRV', '_sip._tcp', '5060 sip.example.net', { priority: 1 }, 'record', 'weight port target'],
    ['SRV', '_sip._tcp', '1 70000 sip.example.net', { priority: 1 }, 'record', 'port'],
    ['SRV', 'sip', '1 5060 sip.example.net', { priority: 1 }, 'host', '_service._protocol'],
    ['CAA', '@', '0 issue', {}, 'record', 'flags'],
    ['CAA', '@', '300 issue "ca.example"', {}, 'record', 'flags'],
    ['CAA', '@', '0 iodef "ftp://x"', {}, 'record', 'iodef'],
    ['CAA', '@', '0 verylongtagname16 "x"', {}, 'record', 'tag'],
    ['TXT', 'x', 'a'.repeat(4001), {}, 'record', 'longer'],
    ['TXT', 'x', 'bell\u0007', {}, 'record', 'control'],
    ['A', 'www.other.example.', '192.0.2.1', {}, 'host', 'not inside'],
    ['A', 'a.*.b', '192.0.2.1', {}, 'host', 'leftmost'],
    ['A', 'bad label', '192.0.2.1', {}, 'host', 'valid'],
    ['A', `${'a'.repeat(64)}`, '192.0.2.1', {}, 'host', '63'],
    ['CNAME', '@', 'elsewhere.example.net', {}, 'host', 'apex'],
    ['NS', '@', 'ns.example.net', {}, 'host', "Fjord's nameservers"],
    ['NS', '*', 'ns.example.net', {}, 'host', 'wildcard'],
    ['LOC', 'x', '1 2 3', {}, 'record_type', 'one of'],
  ])('rejects %s at %s with %s', async (type, host, record, extra, field, words) => {
    const r = await create({ record_type: type, host, record, ...extra });
    expect(r.status, r.text).toBe(422);
    expect(r.body.detail.errors[0].path).toBe(`/body/${field}`);
    expect(r.body.detail.message).toContain(words);
  });

  it('checks TTL bounds and types at the edge', async () => {
    for (const ttl of [59, 604801, 1.5]) {
      const r = await create({ record_type: 'A', host: 'ttl', record: '192.0.2.1', ttl });
      expect(r.status).toBe(422);
    }
    expect((await create({ record_type: 'A', host: 'ttl', record: '192.0.2.1', ttl: 60 })).status).toBe(201);
    const d = await create({ record_type: 'A', host: 'ttl-default', record: '192.0.2.1' });
    expect(d.body.ttl).toBe(3600);
    expect((await create({ record_type: 'A', host: 'x' })).status).toBe(422);
    expect((await create({ record_type: 'A', host: 'x', record: '192.0.2.1', extra: 1 })).status).toBe(422);
  });

  it('splits long TXT values into 255-byte strings for the server', async () => {
    const text = `${'é'.repeat(200)}${'x'.repeat(300)}`; // 400 + 300 bytes
    const r = await create({ record_type: 'TXT', host: 'long', record: text });
    expect(r.status).toBe(201);
    expect(r.body.content).toBe(text);
    const snap = await dns().source.loadZone(Z);
    const served = snap!.records.find((x) => x.name === `long.${Z}`)!;
    expect(served.data.type).toBe('TXT');
    const strings = (served.data as { strings: string[] }).strings;
    expect(strings.join('')).toBe(text);
    expect(strings.every((s) => Buffer.byteLength(s) <= 255)).toBe(true);
    expect(strings.length).toBe(3);
  });
});

describe('record rules', () => {
  it('keeps a CNAME alone at its name', async () => {
    const cname = await create({ record_type: 'CNAME', host: 'solo', record: 'target.example.net' });
    expect(cname.status).toBe(201);
    const other = await create({ record_type: 'TXT', host: 'solo', record: 'hi' });
    expect(other.status).toBe(409);
    expect(other.body.detail.code).toBe('cname_conflict');
    const second = await create({ record_type: 'CNAME', host: 'solo', record: 'other.example.net' });
    expect(second.status).toBe(409);
    const onA = await create({ record_type: 'CNAME', host: 'www', record: 'target.example.net' });
    expect(onA.status).toBe(409);
    expect(onA.body.detail.code).toBe('cname_conflict');
    const self = await create({ record_type: 'CNAME', host: 'loop', record: `loop.${Z}` });
    expect(self.status).toBe(422);
  });

  it('refuses duplicates and gives an RRset one TTL', async () => {
    const first = await create({ record_type: 'A', host: 'pool', record: '192.0.2.1', ttl: 300 });
    expect((await create({ record_type: 'A', host: 'pool', record: '192.0.2.1' })).status).toBe(409);
    const second = await create({ record_type: 'A', host: 'pool', record: '192.0.2.2', ttl: 600 });
    expect(second.status).toBe(201);
    const list = (await t.request('GET', url, { key: a.pat })).body.records.filter(
      (r: { name: string }) => r.name === 'pool',
    );
    expect(list.map((r: { ttl: number }) => r.ttl)).toEqual([600, 600]);
    expect(list.map((r: { id: string }) => r.id)).toContain(first.body.id);
  });

  it('PUT changes only the fields sent, re-checks the result, and raises the serial', async () => {
    const r = await create({
      record_type: 'MX',
      host: 'mx',
      record: 'mail1.example.net',
      priority: 10,
      ttl: 900,
    });
    const id = r.body.id;
    const s0 = await serial();
    const p1 = await t.request('PUT', `${url}/${id}`, { key: a.pat, body: { priority: 20 } });
    expect(p1.status).toBe(200);
    expect(p1.body).toEqual({
      id,
      name: 'mx',
      type: 'MX',
      content: 'mail1.example.net',
      ttl: 900,
      priority: 20,
    });
    expect(await serial()).toBeGreaterThan(s0);
    const p2 = await t.request('PUT', `${url}/${id}`, {
      key: a.pat,
      body: { record: 'mail2.example.net.', host: 'mx2' },
    });
    expect(p2.body).toEqual({
      id,
      name: 'mx2',
      type: 'MX',
      content: 'mail2.example.net',
      ttl: 900,
      priority: 20,
    });
    const p3 = await t.request('PUT', `${url}/${id}`, { key: a.pat, body: { ttl: 120 } });
    expect(p3.body.ttl).toBe(120);
    expect(p3.body.priority).toBe(20);
    const bad = await t.request('PUT', `${url}/${id}`, { key: a.pat, body: { priority: null } });
    expect(bad.status).toBe(422);
    const moveOntoCname = await t.request('PUT', `${url}/${id}`, { key: a.pat, body: { host: 'solo' } });
    expect(moveOntoCname.status).toBe(409);
    const none = await t.request('PUT', `${url}/nope`, { key: a.pat, body: { ttl: 300 } });
    expect(none.status).toBe(404);
    const unchanged = (await t.request('GET', url, { key: a.pat })).body.records.find(
      (x: { id: string }) => x.id === id,
    );
    expect(unchanged).toEqual(p3.body);
  });

  it('deletes a record, then 404s for it', async () => {
    const r = await create({ record_type: 'A', host: 'temp', record: '192.0.2.99' });
    const del = await t.request('DELETE', `${url}/${r.body.id}`, { key: a.pat });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, message: expect.any(String) });
    expect((await t.request('DELETE', `${url}/${r.body.id}`, { key: a.pat })).status).toBe(404);
  });

  it('raises the SOA serial on every change, date-based', async () => {
    const s0 = await serial();
    await create({ record_type: 'A', host: 'serial', record: '192.0.2.50' });
    const s1 = await serial();
    expect(s1).toBe(s0 + 1);
    const today = new Date(t.kernel.clock.nowMs()).toISOString().slice(0, 10).replace(/-/g, '');
    expect(String(s1).slice(0, 8)).toBe(today);
    await t.advance(2 * 86400);
    await create({ record_type: 'A', host: 'serial', record: '192.0.2.51' });
    const dayAfter = new Date(t.kernel.clock.nowMs()).toISOString().slice(0, 10).replace(/-/g, '');
    expect(await serial()).toBe(Number(`${dayAfter}00`));
  });

  it('draws record writes from the record buckets (delete limit lowered to 40 here)', async () => {
    const z = 'rl.example';
    await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: z } });
    const { key } = await t.kernel.identity.createServiceKey(a.id, 'dns', null);
    let last = 0;
    for (let i = 0; i < 41; i++)
      last = (await t.request('DELETE', `/v1/dns/zones/${z}/records/x${i}`, { key })).status;
    expect(last).toBe(429);
    const put = await t.request('PUT', `/v1/dns/zones/${z}/records/x`, { key, body: { ttl: 300 } });
    expect(put.status).toBe(404);
    expect(put.headers['x-ratelimit-limit']).toBe('100');
  });
});

describe('concurrent writes', () => {
  it('serialise per zone: of racing CNAMEs at one name exactly one lands, and each change has its own serial', async () => {
    const s0 = await serial();
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        create({ record_type: 'CNAME', host: 'race', record: `t${i}.example.net` }),
      ),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const parallelA = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        create({ record_type: 'A', host: 'race-a', record: `192.0.2.${i + 1}` }),
      ),
    );
    expect(parallelA.every((r) => r.status === 201)).toBe(true);
    expect(await serial()).toBe(s0 + 9);
  });
});

describe('record quota', () => {
  it('stops at the plan’s records per zone (free: 100), counting a batch as a whole', async () => {
    const c = await t.customer();
    await t.request('POST', '/v1/dns/zones', { key: c.pat, body: { domain: 'small.example' } });
    const changes = Array.from({ length: 100 }, (_, i) => ({
      action: 'create',
      record_type: 'A',
      host: `h${i}`,
      record: '192.0.2.1',
    }));
    const ok = await t.request('POST', '/v1/dns/zones/small.example/records/batch', {
      key: c.pat,
      body: { changes },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.total).toBe(100);
    const more = await t.request('POST', '/v1/dns/zones/small.example/records', {
      key: c.pat,
      body: { record_type: 'A', host: 'h100', record: '192.0.2.1' },
    });
    expect(more.status).toBe(403);
    expect(more.body.detail.code).toBe('quota_exceeded');
    // Swapping one record for another in one batch stays within the quota.
    const swap = await t.request('POST', '/v1/dns/zones/small.example/records/batch', {
      key: c.pat,
      body: {
        changes: [
          { action: 'delete', id: ok.body.results[0].id },
          { action: 'create', record_type: 'A', host: 'h100', record: '192.0.2.1' },
        ],
      },
    });
    expect(swap.status).toBe(200);
  });
});
