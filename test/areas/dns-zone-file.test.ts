import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsService } from '../../src/areas/dns/service.js';
import { parseZoneFile } from '../../src/areas/dns/zone-file.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
const Z = 'batch.example';
const base = `/v1/dns/zones/${Z}`;
const dns = () => t.fjord.areas.get('dns')!.service as DnsService;

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer();
  await t.kernel.store.db.updateTable('customers').set({ plan: 'pro' }).where('id', '=', a.id).execute();
  expect((await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: Z } })).status).toBe(201);
});
afterAll(() => t.close());

const records = async () => (await t.request('GET', `${base}/records`, { key: a.pat })).body.records;

describe('batch', () => {
  it('applies creates, updates and deletes in order with one serial increase', async () => {
    const seed = await t.request('POST', `${base}/records`, {
      key: a.pat,
      body: { record_type: 'A', host: 'old', record: '192.0.2.1' },
    });
    const s0 = (await dns().source.loadZone(Z))!.soa.serial;
    const r = await t.request('POST', `${base}/records/batch`, {
      key: a.pat,
      body: {
        changes: [
          { action: 'create', record_type: 'A', host: 'www', record: '192.0.2.10', ttl: 300 },
          { action: 'create', record_type: 'MX', host: '@', record: 'mx.example.net', priority: 5 },
          { action: 'update', id: seed.body.id, record: '192.0.2.2' },
          { action: 'delete', id: seed.body.id },
          { action: 'create', record_type: 'CNAME', host: 'old', record: 'www' },
        ],
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.results.map((x: { action: string }) => x.action)).toEqual([
      'create',
      'create',
      'update',
      'delete',
      'create',
    ]);
    expect(r.body.results[3]).toEqual({ action: 'delete', id: seed.body.id, record: null });
    expect(r.body.results[4].record).toMatchObject({ name: 'old', type: 'CNAME', content: `www.${Z}` });
    expect(r.body.total).toBe(3);
    expect((await dns().source.loadZone(Z))!.soa.serial).toBe(s0 + 1);
  });

  it('applies nothing when one change fails, and names the failing change', async () => {
    const before = await records();
    const s0 = (await dns().source.loadZone(Z))!.soa.serial;
    const r = await t.request('POST', `${base}/records/batch`, {
      key: a.pat,
      body: {
        changes: [
          { action: 'create', record_type: 'A', host: 'new1', record: '192.0.2.11' },
          { action: 'delete', id: before[0].id },
          { action: 'create', record_type: 'A', host: 'new2', record: '999.0.2.11' },
        ],
      },
    });
    expect(r.status).toBe(422);
    expect(r.body.detail.errors[0].path).toBe('/body/changes/2/record');
    expect(await records()).toEqual(before);
    expect((await dns().source.loadZone(Z))!.soa.serial).toBe(s0);

    const conflict = await t.request('POST', `${base}/records/batch`, {
      key: a.pat,
      body: {
        changes: [
          { action: 'create', record_type: 'TXT', host: 'c', record: 'x' },
          { action: 'create', record_type: 'CNAME', host: 'c', record: 'elsewhere.example.net' },
        ],
      },
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body.detail.errors[0].path).toBe('/body/changes/1/host');
    const unknown = await t.request('POST', `${base}/records/batch`, {
      key: a.pat,
      body: {
        changes: [
          { action: 'create', record_type: 'TXT', host: 'u', record: 'x' },
          { action: 'delete', id: 'nope' },
        ],
      },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail.code).toBe('record_not_found');
    expect(unknown.body.detail.errors[0].path).toBe('/body/changes/1/id');
    expect(await records()).toEqual(before);
  });

  it('takes up to 1000 changes per request', async () => {
    const mk = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        action: 'create',
        record_type: 'TXT',
        host: `bulk${i}`,
        record: `v${i}`,
      }));
    expect(
      (await t.request('POST', `${base}/records/batch`, { key: a.pat, body: { changes: mk(1001) } })).status,
    ).toBe(422);
    expect(
      (await t.request('POST', `${base}/records/batch`, { key: a.pat, body: { changes: [] } })).status,
    ).toBe(422);
    const ok = await t.request('POST', `${base}/records/batch`, { key: a.pat, body: { changes: mk(1000) } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.results).toHaveLength(1000);
    const del = ok.body.results.map((x: { id: string }) => ({ action: 'delete', id: x.id }));
    expect(
      (await t.request('POST', `${base}/records/batch`, { key: a.pat, body: { changes: del } })).status,
    ).toBe(200);
  });
});

const hasLdns = (() => {
  try {
    execFileSync('which', ['ldns-read-zone']);
    return true;
  } catch {
    return false;
  }
})();

describe('zone files', () => {
  const zoneFile = `; a hand-written zone
$ORIGIN ${Z}.
$TTL 1h
@        IN SOA ns.old-provider.example. admin.${Z}. ( 2024010101 7200 3600
                 1209600 300 )
         IN NS  ns.old-provider.example.
         IN MX  10 mail
         IN TXT "v=spf1 mx -all"
         IN CAA 0 issue "letsencrypt.org"
mail  300 IN A  192.0.2.25
         IN AAAA 2001:db8::25
www      CNAME  mail
*.dev 600 IN A 192.0.2.26
_sip._tcp IN SRV 10 5 5060 sip.example.net.
long  IN TXT "first string" "second; not a comment"
spf      IN TXT "v=spf1 -all"
sub      IN NS  ns1.sub-provider.example.
1.2      IN PTR host.example.net.
@        IN DNSKEY 257 3 13 AAAA
`;

  it('reads BIND syntax: directives, omitted owners, relative names, parentheses, units', () => {
    const { records, skipped } = parseZoneFile(zoneFile, Z);
    expect(skipped.map((s) => s.type)).toEqual(['SOA', 'NS', 'DNSKEY']);
    expect(records.map((r) => [r.host, r.type, r.record, r.ttl, r.priority])).toEqual([
      ['@', 'MX', `mail.${Z}.`, 3600, 10],
      ['@', 'TXT', '"v=spf1 mx -all"', 3600, null],
      ['@', 'CAA', '0 issue "letsencrypt.org"', 3600, null],
      ['mail', 'A', '192.0.2.25', 300, null],
      ['mail', 'AAAA', '2001:db8::25', 3600, null],
      ['www', 'CNAME', `mail.${Z}.`, 3600, null],
      ['*.dev', 'A', '192.0.2.26', 600, null],
      ['_sip._tcp', 'SRV', '5 5060 sip.example.net.', 3600, 10],
      ['long', 'TXT', '"first string" "second; not a comment"', 3600, null],
      ['spf', 'TXT', '"v=spf1 -all"', 3600, null],
      ['sub', 'NS', 'ns1.sub-provider.example.', 3600, null],
      ['1.2', 'PTR', 'host.example.net.', 3600, null],
    ]);
  });

  it('imports a zone file atomically and reports what it skipped', async () => {
    const r = await t.request('POST', `${base}/import`, {
      key: a.pat,
      body: { zone_file: zoneFile, replace: true },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.imported).toBe(12);
    expect(r.body.skipped.map((s: { line: number; type: string }) => `${s.line}:${s.type}`)).toEqual([
      '4:SOA',
      '6:NS',
      '19:DNSKEY',
    ]);
    const list = await records();
    expect(list).toHaveLength(12);
    // A single quoted string is stored as its plain text.
    expect(list.find((x: { name: string }) => x.name === 'spf').content).toBe('v=spf1 -all');
    expect(list.find((x: { type: string }) => x.type === 'MX')).toMatchObject({
      name: '@',
      content: `mail.${Z}`,
      priority: 10,
    });
  });

  it('refuses a file with one bad record, naming its line, and changes nothing', async () => {
    const before = await records();
    for (const [text, words] of [
      [`ok IN A 192.0.2.1\nbad IN A 300.1.1.1\n`, 'line 2'],
      [`ok IN A 192.0.2.1\nx IN HINFO "a" "b"\n`, 'line 2'],
      [`$INCLUDE other.zone\n`, 'line 1'],
      [`foo.other.example. IN A 192.0.2.1\n`, 'not inside'],
      [`x IN A ( 192.0.2.1\n`, 'unbalanced'],
      [`x IN TXT "open\n`, 'unterminated'],
    ]) {
      const r = await t.request('POST', `${base}/import`, {
        key: a.pat,
        body: { zone_file: text, replace: true },
      });
      expect(r.status, text).toBe(422);
      expect(r.body.detail.message).toContain(words);
    }
    expect(await records()).toEqual(before);
  });

  it('exports a zone file that ldns reads and that imports back to the same records', async () => {
    // A plain TXT value longer than 255 bytes leaves as several strings and comes back as the same text.
    const long = `${'é'.repeat(140)}${'y'.repeat(200)}`;
    await t.request('POST', `${base}/records`, {
      key: a.pat,
      body: { record_type: 'TXT', host: 'plain-long', record: long },
    });
    const r = await t.request('GET', `${base}/export`, { key: a.pat });
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type'])).toContain('text/dns');
    const text = r.text;
    expect(text).toContain(`$ORIGIN ${Z}.`);
    expect(text).toMatch(/IN\tSOA\tns1\.fjord\.test\. hostmaster\.batch\.example\. \d{10} /);
    expect(text).toContain('IN\tNS\tns1.fjord.test.');
    if (hasLdns) {
      const dir = mkdtempSync(join(tmpdir(), 'fjord-zone-'));
      writeFileSync(join(dir, 'zone'), text);
      const canonical = execFileSync('ldns-read-zone', ['-z', join(dir, 'zone')], { encoding: 'utf8' });
      expect(canonical).toContain(`_sip._tcp.${Z}.\t3600\tIN\tSRV\t10 5 5060 sip.example.net.`);
      expect(canonical).toContain(`long.${Z}.\t3600\tIN\tTXT\t"first string" "second; not a comment"`);
      expect(canonical).toContain(`*.dev.${Z}.\t600\tIN\tA\t192.0.2.26`);
    }
    const before = (await records()).map(({ id: _id, ...rest }: { id: string }) => rest);
    const again = await t.request('POST', `${base}/import`, {
      key: a.pat,
      body: { zone_file: text, replace: true },
    });
    expect(again.status, again.text).toBe(200);
    const after = (await records()).map(({ id: _id, ...rest }: { id: string }) => rest);
    expect(after.map((x: { name: string }) => x.name)).toEqual(before.map((x: { name: string }) => x.name));
    expect(after).toEqual(before);
    expect(after.find((x: { name: string }) => x.name === 'plain-long').content).toBe(long);
  });

  it('adds to the zone without replace, refusing duplicates', async () => {
    const dup = await t.request('POST', `${base}/import`, {
      key: a.pat,
      body: { zone_file: 'mail 300 IN A 192.0.2.25\n' },
    });
    expect(dup.status).toBe(409);
    const add = await t.request('POST', `${base}/import`, {
      key: a.pat,
      body: { zone_file: 'extra 300 IN A 192.0.2.77\n' },
    });
    expect(add.status).toBe(200);
    expect(add.body).toEqual({ imported: 1, deleted: 0, skipped: [] });
  });
});
