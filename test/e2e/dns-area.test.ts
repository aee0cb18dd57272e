// The whole path: zones and records made through the HTTP API, served by the `dns` role of a real
// Fjord (on SQLite or PostgreSQL), seen by dig and validated by delv; statistics come back
// through the API.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsServer } from '../../src/areas/dns/server/index.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { dig, run } from './dns-fixtures.js';

const Z = 'e2e-zone.example';
let t: TestFjord;
let a: TestCustomer;
let server: DnsServer;
let port: number;
const records = `/v1/dns/zones/${Z}/records`;

const answers = async (name: string, type: string, ...extra: string[]) =>
  (await dig(port, name, type, '+short', ...extra)).trim();

/** Polls dig until `check` passes: changes reach the server through the store's change feed. */
async function eventually(name: string, type: string, check: (out: string) => boolean): Promise<string> {
  let out = '';
  for (let i = 0; i < 60; i++) {
    out = await dig(port, name, type);
    if (check(out)) return out;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no matching answer for ${name} ${type}:\n${out}`);
}

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_DNS_PORT: '0',
    FJORD_DNS_RRL_RATE: '0',
    FJORD_DNS_AXFR_ALLOW: '127.0.0.1/32',
    FJORD_DNS_NAMESERVERS: 'ns1.fjord.test,ns2.fjord.test',
  });
  await t.fjord.start(['dns']);
  server = t.fjord.areas.get('dns')!.servers!.find((s) => s.role === 'dns') as DnsServer;
  port = server.port()!;
  a = await t.customer();
  const zone = await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: Z } });
  expect(zone.status, zone.text).toBe(201);
  for (const [record_type, host, record, priority] of [
    ['A', '@', '192.0.2.1'],
    ['A', 'www', '192.0.2.10'],
    ['AAAA', 'www', '2001:db8::10'],
    ['MX', '@', 'mail', 10],
    ['A', 'mail', '192.0.2.25'],
    ['TXT', '@', 'v=spf1 -all'],
    ['CNAME', 'alias', 'www'],
    ['SRV', '_sip._tcp', '5 5060 www', 10],
    ['CAA', '@', '0 issue "letsencrypt.org"'],
    ['PTR', '10', 'host.example.net'],
    ['NS', 'sub', 'ns1.other.example'],
    ['A', '*.dev', '192.0.2.21'],
  ] as const) {
    const r = await t.request('POST', records, {
      key: a.pat,
      body: { record_type, host, record, ttl: 300, ...(priority === undefined ? {} : { priority }) },
    });
    expect(r.status, r.text).toBe(201);
  }
  await eventually(`dev.${Z}`, 'A', () => true);
  await eventually(`x.dev.${Z}`, 'A', (out) => /192\.0\.2\.21/.test(out));
});

afterAll(async () => {
  await t?.fjord.stop();
  await t?.close();
});

describe('records made through the API, answered by the dns role', () => {
  it('answers every record type', async () => {
    expect(await answers(Z, 'A')).toBe('192.0.2.1');
    expect(await answers(`www.${Z}`, 'AAAA')).toBe('2001:db8::10');
    expect(await answers(Z, 'MX')).toBe(`10 mail.${Z}.`);
    expect(await answers(Z, 'TXT')).toBe('"v=spf1 -all"');
    expect(await answers(`alias.${Z}`, 'A')).toBe(`www.${Z}.\n192.0.2.10`);
    expect(await answers(`_sip._tcp.${Z}`, 'SRV')).toBe(`10 5 5060 www.${Z}.`);
    expect(await answers(Z, 'CAA')).toBe('0 issue "letsencrypt.org"');
    expect(await answers(`10.${Z}`, 'PTR')).toBe('host.example.net.');
    expect((await answers(Z, 'NS')).split('\n').sort()).toEqual(['ns1.fjord.test.', 'ns2.fjord.test.']);
    expect(await answers(`abc.dev.${Z}`, 'A')).toBe('192.0.2.21');
    const referral = await dig(port, `host.sub.${Z}`, 'A', '+norec');
    expect(referral).toMatch(/flags: qr;/);
    expect(referral).toMatch(/sub\.e2e-zone\.example\.\s+300\s+IN\s+NS\s+ns1\.other\.example\./);
  });

  it('answers NXDOMAIN and NODATA with the zone SOA kept by Fjord', async () => {
    const nx = await dig(port, `nope.${Z}`, 'A');
    expect(nx).toMatch(/status: NXDOMAIN/);
    expect(nx).toMatch(new RegExp(`${Z}\\.\\s+\\d+\\s+IN\\s+SOA\\s+ns1\\.fjord\\.test\\.`));
    const nodata = await dig(port, `www.${Z}`, 'MX');
    expect(nodata).toMatch(/status: NOERROR/);
    expect(nodata).toMatch(/ANSWER: 0, AUTHORITY: 1/);
    expect(await dig(port, 'not-hosted.example', 'A')).toMatch(/status: REFUSED/);
  });

  it('follows changes and deletions within a second, with a new serial each time', async () => {
    const serial = async () => Number((await answers(Z, 'SOA')).split(' ')[2]);
    const before = await serial();
    const list = (await t.request('GET', records, { key: a.pat })).body.records as {
      id: string;
      name: string;
      type: string;
    }[];
    const www = list.find((r) => r.name === 'www' && r.type === 'A')!;
    const put = await t.request('PUT', `${records}/${www.id}`, {
      key: a.pat,
      body: { record: '192.0.2.99' },
    });
    expect(put.status, put.text).toBe(200);
    await eventually(`www.${Z}`, 'A', (out) => /192\.0\.2\.99/.test(out));
    expect(await serial()).toBeGreaterThan(before);
    expect((await t.request('DELETE', `${records}/${www.id}`, { key: a.pat })).status).toBe(200);
    await eventually(`www.${Z}`, 'A', (out) => /ANSWER: 0/.test(out) && /status: NOERROR/.test(out)); // AAAA remains
  });

  it('transfers the zone to an allowed address', async () => {
    const out = await dig(port, Z, 'AXFR');
    expect(out.match(/\sIN\s+SOA\s/g)).toHaveLength(2);
    expect(out).toMatch(/_sip\._tcp\.e2e-zone\.example\.\s+300\s+IN\s+SRV/);
  });

  it('signs online once DNSSEC is activated: delv validates from the API’s DS', async () => {
    const r = await t.request('POST', `/v1/dns/zones/${Z}/dnssec/activate`, { key: a.pat });
    expect(r.status, r.text).toBe(200);
    const [owner, , , tag, alg, digestType, digest] = (r.body.ds_records[0] as string).split(' ');
    expect(owner).toBe(`${Z}.`);
    await eventually(Z, 'DNSKEY', (out) => /DNSKEY\s+257 3 13/.test(out));
    const dir = scratchDir('fjord-dns-area-');
    const anchor = (d: string) => {
      const path = join(dir, `${d.slice(0, 8)}.conf`);
      writeFileSync(path, `trust-anchors { ${Z}. static-ds ${tag} ${alg} ${digestType} "${d}"; };\n`);
      return path;
    };
    const delv = async (file: string, name: string, type: string) => {
      const { stdout, stderr } = await run('delv', [
        '@127.0.0.1',
        '-p',
        String(port),
        '-a',
        file,
        `+root=${Z}`,
        name,
        type,
      ]);
      return stdout + stderr;
    };
    const good = anchor(digest!);
    for (const [name, type] of [
      [Z, 'A'],
      [Z, 'MX'],
      [Z, 'TXT'],
      [Z, 'CAA'],
      [`www.${Z}`, 'AAAA'],
      [`alias.${Z}`, 'A'],
      [`_sip._tcp.${Z}`, 'SRV'],
      [`10.${Z}`, 'PTR'],
      [`abc.dev.${Z}`, 'A'],
    ]) {
      expect(await delv(good, name!, type!), `${name} ${type}`).toMatch(/^; fully validated$/m);
    }
    expect(await delv(good, `nope.${Z}`, 'A')).toMatch(/^; negative response, fully validated$/m);
    expect(await delv(good, `www.${Z}`, 'MX')).toMatch(/^; negative response, fully validated$/m);
    const tampered = anchor(`${digest!.slice(0, -2)}${digest!.endsWith('00') ? '11' : '00'}`);
    expect(await delv(tampered, Z, 'A')).not.toMatch(/fully validated/);
  });

  it('reports the queries it answered through the statistics endpoint', async () => {
    await server.flushStats();
    const r = await t.request('GET', `/v1/dns/zones/${Z}/statistics`, { key: a.pat });
    expect(r.status).toBe(200);
    expect(r.body.queries_today).toBeGreaterThan(20);
    expect(r.body.queries_this_month).toBeGreaterThanOrEqual(r.body.queries_today);
    expect(Object.keys(r.body.top_record_types)).toContain('A');
    expect(r.body.response_time_ms_avg).toBeGreaterThanOrEqual(0);
  });

  it('verifies and signs with TSIG keys the operator makes through the API', async () => {
    const made = await t.operator('POST', '/admin/v1/dns/tsig-keys', {
      name: 'Secondary.Fjord.',
      algorithm: 'hmac-sha256',
      zones: [Z],
      notify: ['127.0.0.1:5399'],
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ name: 'secondary.fjord', algorithm: 'hmac-sha256', zones: [Z] });
    expect(Buffer.from(made.body.key, 'base64')).toHaveLength(32);
    const y = `hmac-sha256:secondary.fjord:${made.body.key}`;
    // Shown once: neither the list nor the key itself gives the secret back.
    const list = await t.operator('GET', '/admin/v1/dns/tsig-keys');
    expect(list.body.keys).toEqual([{ ...made.body, key: undefined }].map(({ key: _, ...k }) => k));
    expect((await t.operator('GET', '/admin/v1/dns/tsig-keys/secondary.fjord')).body.key).toBeUndefined();
    expect((await t.operator('POST', '/admin/v1/dns/tsig-keys', { name: 'secondary.fjord' })).status).toBe(
      409,
    );
    const bad = await t.operator('POST', '/admin/v1/dns/tsig-keys', {
      name: 'x.fjord',
      algorithm: 'hmac-md5',
    });
    expect([bad.status, bad.body.detail.code]).toEqual([422, 'invalid_tsig_key']);
    // Keys reach the server through the change feed.
    let axfr = '';
    for (let i = 0; i < 60 && !/XFR size/.test(axfr); i++) {
      axfr = await dig(port, '-y', y, Z, 'AXFR');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(axfr).toMatch(/XFR size: \d+ records/);
    expect(axfr).toMatch(new RegExp(`^${Z}\\.\\s+\\d+\\s+IN\\s+SOA`, 'm'));
    expect(axfr).not.toMatch(/failure|failed/i);
    expect((await t.operator('DELETE', '/admin/v1/dns/tsig-keys/secondary.fjord')).status).toBe(200);
    expect((await t.operator('DELETE', '/admin/v1/dns/tsig-keys/secondary.fjord')).status).toBe(404);
    await eventually(Z, 'SOA', () => true);
    let after = '';
    for (let i = 0; i < 60 && !/BADKEY/.test(after); i++) after = await dig(port, '-y', y, Z, 'SOA');
    expect(after).toMatch(/status: NOTAUTH/);
  });
});
