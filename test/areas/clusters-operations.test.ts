import { execFile, execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { clusterErrors } from '../../src/areas/clusters/errors.js';
import type { ClusterService } from '../../src/areas/clusters/index.js';
import { PROVISIONING_SECONDS } from '../../src/areas/clusters/lifecycle.js';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { dnsServerOf } from '../helpers/dns-records.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';
import { FakeResolver } from './ip-fixtures.js';

/** Kubeconfig, floating addresses and reverse DNS, backup policy, backups and restores. */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
const resolver = new FakeResolver();
const execFileAsync = promisify(execFile);

beforeAll(async () => {
  const address = await resolver.start();
  t = await TestFjord.create({
    FJORD_LIMITS: JSON.stringify({ 'kubernetes.clusters': 20 }),
    FJORD_RATE_LIMITS: JSON.stringify({ kubernetes: { points: 10_000, duration: 60 } }),
    FJORD_RESOLVER: address,
    // Fjord's DNS server on a port of its own, to query the reverse zone it serves.
    FJORD_DNS_PORT: '0',
  });
  await t.fjord.start(['dns']);
  a = await t.customer();
  b = await t.customer();
});
afterAll(async () => {
  await t.close();
  resolver.stop();
});

const code = (r: { body: { detail?: { code: string } } }) => r.body.detail?.code;
const pools = [{ name: 'default', plan_code: 'k8s-node-s', count: 2 }];
async function cluster(name: string, opts: { key?: string; running?: boolean; region?: string } = {}) {
  const r = await t.request('POST', '/v1/kubernetes/clusters', {
    key: opts.key ?? a.pat,
    body: { name, node_pools: pools, ...(opts.region ? { region: opts.region } : {}) },
  });
  expect(r.status).toBe(202);
  if (opts.running !== false) await t.advance(PROVISIONING_SECONDS);
  return { id: r.body.id as string, url: `/v1/kubernetes/clusters/${r.body.id}` };
}
const history = async (url: string, key = a.pat) =>
  (await t.request('GET', `${url}/history`, { key })).body.history as {
    action: string;
    actor: string;
    at: string;
    details: Record<string, unknown>;
  }[];
const nowMs = async () => Date.parse((await t.advance(0)).now);

/** Waits until Fjord's DNS server answers the reverse lookup of `address` as `ok` wants (notices may lag). */
async function servedPtr(address: string, ok: (names: string[]) => boolean): Promise<string[]> {
  const lookup = new Resolver({ timeout: 500, tries: 1 });
  lookup.setServers([`127.0.0.1:${dnsServerOf(t).port()}`]);
  const deadline = Date.now() + 10_000;
  for (;;) {
    await dnsServerOf(t).settled();
    const names = await lookup.reverse(address).catch(() => [] as string[]);
    if (ok(names)) return names;
    if (Date.now() > deadline)
      throw new Error(`PTR of ${address} not served (last: ${JSON.stringify(names)})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('kubeconfig', () => {
  it('is refused until the cluster runs, then a real kubeconfig with a per-download certificate', async () => {
    const c = await cluster('kube', { running: false });
    expect(code(await t.request('GET', `${c.url}/kubeconfig`, { key: a.pat }))).toBe('not_ready');
    await t.advance(PROVISIONING_SECONDS);
    const view = (await t.request('GET', c.url, { key: a.pat })).body;

    const before = await nowMs();
    const r = await t.request('GET', `${c.url}/kubeconfig`, { key: a.pat });
    const after = await nowMs();
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/x-yaml/);
    const doc = parseYaml(r.text);
    expect(doc).toMatchObject({ apiVersion: 'v1', kind: 'Config', 'current-context': 'kube' });
    expect(doc.clusters[0].cluster.server).toBe(`https://${view.api_endpoint}`);
    expect(view.api_endpoint).toMatch(/:7443$/);
    const pem = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
    const ca = new X509Certificate(pem(doc.clusters[0].cluster['certificate-authority-data']));
    const cert = new X509Certificate(pem(doc.users[0].user['client-certificate-data']));
    expect(ca.ca).toBe(true);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.subject).toContain('O=system:masters');
    expect(pem(doc.users[0].user['client-key-data'])).toMatch(/BEGIN PRIVATE KEY/);

    // The expiry is stated, and is the certificate's own: a week by default.
    const ext = doc.users[0].user.extensions[0];
    expect(ext.name).toBe('fjord.credential');
    const expiresAt = Date.parse(ext.extension.expires_at);
    expect(expiresAt - 7 * 86_400_000).toBeGreaterThanOrEqual(before);
    expect(expiresAt - 7 * 86_400_000).toBeLessThanOrEqual(after);
    expect(Date.parse(cert.validTo)).toBe(Math.floor(expiresAt / 1000) * 1000);
    expect(r.text).toContain(`expires at ${ext.extension.expires_at}`);

    // kubectl itself reads it (it is in the image; skip the check where it is not).
    let kubectl = true;
    try {
      execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    } catch {
      kubectl = false;
    }
    if (kubectl) {
      const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
      try {
        writeFileSync(join(dir, 'config'), r.text);
        const out = JSON.parse(
          execFileSync(
            'kubectl',
            ['config', 'view', '--kubeconfig', join(dir, 'config'), '--raw', '-o', 'json'],
            {
              encoding: 'utf8',
            },
          ),
        );
        expect(out['current-context']).toBe('kube');
        expect(out.clusters[0].cluster.server).toBe(`https://${view.api_endpoint}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }

    // A second download: the same CA, a new credential with the expiry asked for.
    const before2 = await nowMs();
    const again = await t.request('GET', `${c.url}/kubeconfig?expiry_seconds=3600`, { key: a.pat });
    const after2 = await nowMs();
    const doc2 = parseYaml(again.text);
    expect(doc2.clusters[0].cluster['certificate-authority-data']).toBe(
      doc.clusters[0].cluster['certificate-authority-data'],
    );
    const cert2 = new X509Certificate(pem(doc2.users[0].user['client-certificate-data']));
    expect(cert2.serialNumber).not.toBe(cert.serialNumber);
    const expires2 = Date.parse(doc2.users[0].user.extensions[0].extension.expires_at) - 3_600_000;
    expect(expires2).toBeGreaterThanOrEqual(before2);
    expect(expires2).toBeLessThanOrEqual(after2);

    const expiry = (v: string) => t.request('GET', `${c.url}/kubeconfig?expiry_seconds=${v}`, { key: a.pat });
    expect(code(await expiry('10'))).toBe('invalid_request');
    expect(code(await expiry('2592001'))).toBe('invalid_request');
    expect((await expiry('soon')).status).toBe(422);

    const downloads = (await history(c.url)).filter((h) => h.action === 'cluster.kubeconfig');
    expect(downloads).toHaveLength(2);
    expect(downloads[0]!.actor).toMatch(/^pat:/);
    expect(downloads[0]!.details.expires_at).toBe(ext.extension.expires_at);
    expect(downloads[0]!.details.credential_id).toBe(ext.extension.credential_id);
    expect(downloads[1]!.details.credential_id).not.toBe(downloads[0]!.details.credential_id);
  });

  it('keeps names that look like other YAML values strings', async () => {
    for (const name of ['null', '1234']) {
      const c = await cluster(name);
      const doc = parseYaml((await t.request('GET', `${c.url}/kubeconfig`, { key: a.pat })).text);
      expect(doc['current-context']).toBe(name);
      expect(doc.contexts[0].name).toBe(name);
    }
  });

  it('needs kubernetes:write: a read-only token may read the cluster but not download its kubeconfig', async () => {
    const c = await cluster('kube-scope');
    const ro = await t.kernel.identity.createPat(a.id, ['kubernetes:read'], 'read only');
    expect((await t.request('GET', c.url, { key: ro.key })).status).toBe(200);
    expect((await t.request('GET', `${c.url}/backup-policy`, { key: ro.key })).status).toBe(200);
    expect((await t.request('GET', `${c.url}/backups`, { key: ro.key })).status).toBe(200);
    for (const [method, path, body] of [
      ['GET', '/kubeconfig', undefined],
      ['POST', '/ips', {}],
      ['PUT', '/backup-policy', { enabled: true }],
      ['POST', '/backups', {}],
    ] as const) {
      const r = await t.request(method, `${c.url}${path}`, { key: ro.key, body });
      expect(r.status, `${method} ${path}`).toBe(403);
    }
    expect((await history(c.url)).map((h) => h.action)).toEqual(['cluster.create']);
  });
});

describe('floating addresses and reverse DNS', () => {
  it('allocates floating IPv4 addresses billed per day, at most 8, and releases only those', async () => {
    const pending = await cluster('ips-pending', { running: false });
    expect(code(await t.request('POST', `${pending.url}/ips`, { key: a.pat }))).toBe('not_ready');
    const c = await cluster('ips');
    const r = await t.request('POST', `${c.url}/ips`, { key: a.pat, body: { family: 'IPv4' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      family: 'IPv4',
      kind: 'floating',
      included: false,
      ptr_record: null,
      daily_price: { NOK: 0.99, SEK: 0.99, EUR: 0.09 },
    });
    expect(r.body.address).toMatch(/^(198\.51\.100|192\.0\.2)\.\d+$/);
    const view = (await t.request('GET', c.url, { key: a.pat })).body;
    expect(view.public_ips.map((ip: { kind: string }) => ip.kind)).toEqual(['gateway', 'floating']);
    expect(view.public_ips[0]).toMatchObject({ included: true, daily_price: null });

    // Another account's cluster never gets the same address.
    const other = await cluster('ips-other', { key: b.pat });
    const theirs = await t.request('POST', `${other.url}/ips`, { key: b.pat });
    expect(theirs.status).toBe(201);
    expect(theirs.body.address).not.toBe(r.body.address);

    const more: string[] = [];
    for (let i = 0; i < 7; i++)
      more.push((await t.request('POST', `${c.url}/ips`, { key: a.pat })).body.address);
    expect(new Set([r.body.address, ...more]).size).toBe(8);
    const ninth = await t.request('POST', `${c.url}/ips`, { key: a.pat });
    expect(ninth.status).toBe(403);
    expect(code(ninth)).toBe('quota_exceeded');

    const gateway = view.public_ips[0].address;
    const release = (ip: string) => t.request('DELETE', `${c.url}/ips/${ip}`, { key: a.pat });
    expect(code(await release(gateway))).toBe('invalid_request');
    expect((await release(gateway)).status).toBe(422);
    expect(code(await release('198.51.100.254'))).toBe('not_found');
    expect(code(await release(theirs.body.address))).toBe('not_found');
    expect((await release(more[6]!)).status).toBe(204);
    const after = (await t.request('GET', c.url, { key: a.pat })).body.public_ips;
    expect(after.map((ip: { address: string }) => ip.address)).not.toContain(more[6]);
    expect(after).toHaveLength(8);
    // A released address goes back to the pool.
    expect((await t.request('POST', `${c.url}/ips`, { key: a.pat })).body.address).toBe(more[6]);

    const actions = (await history(c.url)).map((h) => h.action);
    expect(actions.filter((x) => x === 'cluster.ip.allocate')).toHaveLength(9);
    expect(actions.filter((x) => x === 'cluster.ip.release')).toHaveLength(1);
  });

  it('sets a PTR only when the name already resolves to the address, in a Fjord zone at once', async () => {
    const c = await cluster('ptr');
    const ip = (await t.request('POST', `${c.url}/ips`, { key: a.pat })).body.address as string;
    const gateway = (await t.request('GET', c.url, { key: a.pat })).body.public_ips[0].address as string;
    const ptr = (address: string, ptr_record: string | null) =>
      t.request('PUT', `${c.url}/ips/${address}/ptr`, { key: a.pat, body: { ptr_record } });

    expect(code(await ptr(gateway, 'gw.example.net'))).toBe('invalid_request');
    expect(code(await ptr('198.51.100.253', 'x.example.net'))).toBe('not_found');
    expect(code(await ptr(ip, 'not a name'))).toBe('invalid_request');
    const none = await ptr(ip, 'mail.ptr-zone.example');
    expect(none.status).toBe(422);
    expect(code(none)).toBe('ptr_not_forward_confirmed');

    // A zone just created in Fjord's DNS (not yet delegated) counts at once.
    expect(
      (await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: 'ptr-zone.example' } })).status,
    ).toBe(201);
    const record = (host: string, record_type: string, value: string) =>
      t.request('POST', '/v1/dns/zones/ptr-zone.example/records', {
        key: a.pat,
        body: { record_type, host, record: value },
      });
    expect((await record('wrong', 'A', '192.0.2.200')).status).toBe(201);
    const wrong = await ptr(ip, 'wrong.ptr-zone.example');
    expect(code(wrong)).toBe('ptr_not_forward_confirmed');
    expect(wrong.body.detail.message).toContain('192.0.2.200');
    expect((await record('mail', 'A', ip)).status).toBe(201);
    const ok = await ptr(ip, 'Mail.PTR-zone.example.');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ address: ip, kind: 'floating', ptr_record: 'mail.ptr-zone.example' });
    expect((await record('smtp', 'CNAME', 'mail.ptr-zone.example.')).status).toBe(201);
    expect((await ptr(ip, 'smtp.ptr-zone.example')).body.ptr_record).toBe('smtp.ptr-zone.example');
    // A wildcard answers for names that do not exist below it.
    expect((await record('*.pool', 'A', ip)).status).toBe(201);
    expect((await ptr(ip, 'node-7.pool.ptr-zone.example')).body.ptr_record).toBe(
      'node-7.pool.ptr-zone.example',
    );

    // A name outside Fjord's zones goes through the resolver.
    resolver.set('out.elsewhere.example', 'A', ip);
    resolver.set('away.elsewhere.example', 'A', '203.0.113.250');
    expect(code(await ptr(ip, 'away.elsewhere.example'))).toBe('ptr_not_forward_confirmed');
    expect((await ptr(ip, 'out.elsewhere.example')).body.ptr_record).toBe('out.elsewhere.example');
    const view = (await t.request('GET', c.url, { key: a.pat })).body;
    expect(view.public_ips[1].ptr_record).toBe('out.elsewhere.example');

    // Fjord's DNS serves the PTR in the pool's reverse zone; dig -x finds it.
    expect(await servedPtr(ip, (names) => names.includes('out.elsewhere.example'))).toEqual([
      'out.elsewhere.example',
    ]);
    const port = String(dnsServerOf(t).port());
    // Asynchronously: the DNS server answering dig runs in this process.
    const dig = await execFileAsync('dig', ['-x', ip, '@127.0.0.1', '-p', port, '+short']);
    expect(dig.stdout.trim()).toBe('out.elsewhere.example.');

    expect((await ptr(ip, null)).body.ptr_record).toBeNull();
    expect(await servedPtr(ip, (names) => names.length === 0)).toEqual([]);
    const ptrs = (await history(c.url)).filter((h) => h.action === 'cluster.ip.ptr');
    expect(ptrs.map((h) => h.details.ptr_record)).toEqual([
      'mail.ptr-zone.example',
      'smtp.ptr-zone.example',
      'node-7.pool.ptr-zone.example',
      'out.elsewhere.example',
      null,
    ]);
    expect(ptrs[1]!.details.previous).toBe('mail.ptr-zone.example');
  });
});

describe('floating addresses when requests arrive together', () => {
  it('holds 8 per cluster and never hands one address to two clusters', async () => {
    const mine = await cluster('race-ips');
    const theirs = await cluster('race-ips-b', { key: b.pat });
    const [x, y] = await Promise.all([
      expectLimitHolds({
        room: 8,
        attempts: 12,
        send: () => t.request('POST', `${mine.url}/ips`, { key: a.pat }),
        refusal: { status: 403, code: 'quota_exceeded' },
      }),
      expectLimitHolds({
        room: 8,
        attempts: 12,
        send: () => t.request('POST', `${theirs.url}/ips`, { key: b.pat }),
        refusal: { status: 403, code: 'quota_exceeded' },
      }),
    ]);
    const addresses = [...x.succeeded, ...y.succeeded].map((r) => r.body.address);
    expect(new Set(addresses).size).toBe(16);
  });
});

describe('backups', () => {
  it('has a policy, validated, that runs on a cron in the cluster’s local time and expires by retention', async () => {
    const c = await cluster('policy', { running: false });
    const get = async () => (await t.request('GET', `${c.url}/backup-policy`, { key: a.pat })).body;
    expect(await get()).toMatchObject({
      enabled: false,
      schedule_cron: '0 3 * * *',
      retention_days: 7,
      include_volumes: true,
      namespaces: null,
      active: false,
      time_zone: 'Europe/Oslo',
      next_run_at: null,
    });
    const put = (body: object) => t.request('PUT', `${c.url}/backup-policy`, { key: a.pat, body });
    for (const bad of [
      { schedule_cron: '0 3 * *' },
      { schedule_cron: '61 3 * * *' },
      { schedule_cron: '*/5 * * * *' },
      { schedule_cron: '0 0 31 2 *' },
      { retention_days: 0 },
      { retention_days: 366 },
      { namespaces: ['Shop'] },
      { namespaces: [] },
    ])
      expect(code(await put(bad)), JSON.stringify(bad)).toBe('invalid_request');

    // Two hours ahead in Oslo: the first run is 1½-2½ hours away, after provisioning ends.
    const oslo = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Oslo',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    const hour = (Number(oslo.format(new Date(await nowMs())).slice(0, 2)) + 2) % 24;
    const at = `${String(hour).padStart(2, '0')}:30`;
    const set = await put({
      enabled: true,
      schedule_cron: `30 ${hour} * * *`,
      retention_days: 2,
      namespaces: ['shop'],
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ enabled: true, retention_days: 2, namespaces: ['shop'], active: false });
    const next = Date.parse(set.body.next_run_at);
    expect(oslo.format(new Date(next))).toBe(at);
    expect(next).toBeGreaterThan(await nowMs());
    // Only the fields given change.
    expect((await put({ include_volumes: false })).body).toMatchObject({
      schedule_cron: `30 ${hour} * * *`,
      retention_days: 2,
    });
    await t.advance(PROVISIONING_SECONDS);
    expect((await get()).active).toBe(true);
    const list = async () => (await t.request('GET', `${c.url}/backups`, { key: a.pat })).body.backups;
    expect(await list()).toEqual([]);

    // The job takes the backup when its time comes; it completes on the clock.
    await t.advance((next - (await nowMs())) / 1000 + 1);
    const [first] = await list();
    expect(first).toMatchObject({
      kind: 'scheduled',
      status: 'InProgress',
      started_at: new Date(next).toISOString(),
      completed_at: null,
      items_count: 0,
      error: null,
      namespaces: ['shop'],
      include_volumes: false,
    });
    expect(first.name).toMatch(/^policy-scheduled-\d{14}$/);
    await t.advance(30);
    const [done] = await list();
    expect(done).toMatchObject({ status: 'Completed', items_count: 12 });
    expect(Date.parse(done.expires_at) - Date.parse(done.completed_at)).toBe(2 * 86_400_000);

    // Two days on: two more runs, and the first backup has expired.
    await t.advance(2 * 86_400);
    const later = await list();
    expect(later).toHaveLength(2);
    expect(later.map((x: { id: string }) => x.id)).not.toContain(first.id);
    expect(later.map((x: { started_at: string }) => oslo.format(new Date(x.started_at)))).toEqual([at, at]);
    expect(Date.parse(later[0].started_at)).toBeGreaterThan(Date.parse(later[1].started_at));
    expect(Date.parse(later[1].started_at)).toBeGreaterThan(next);
    const h = await history(c.url);
    expect(h.filter((e) => e.action === 'cluster.backup.create')).toHaveLength(3);
    expect(h.find((e) => e.action === 'cluster.backup.create')!.actor).toBe('system:backup-policy');
    const expired = h.filter((e) => e.action === 'cluster.backup.expire');
    expect(expired.map((e) => e.details.backup)).toEqual([first.id]);
    expect(h.filter((e) => e.action === 'cluster.backup-policy')).toHaveLength(2);

    // Disabled: no more runs.
    expect((await put({ enabled: false })).body).toMatchObject({ active: false, next_run_at: null });
    await t.advance(86_400);
    expect(await list()).toHaveLength(1);
  });

  it('takes manual backups and restores only Completed ones, one restore at a time', async () => {
    const pending = await cluster('manual-pending', { running: false });
    expect(code(await t.request('POST', `${pending.url}/backups`, { key: a.pat, body: {} }))).toBe(
      'not_ready',
    );
    const c = await cluster('manual');
    const backup = (body?: object) => t.request('POST', `${c.url}/backups`, { key: a.pat, body });
    const all = await backup({});
    expect(all.status).toBe(202);
    expect(all.body).toMatchObject({ status: 'InProgress' });
    expect(all.body.name).toMatch(/^manual-manual-\d{14}$/);
    const some = await backup({ namespaces: ['shop', 'blog'] });
    expect(some.status).toBe(202);
    expect(some.body.name).not.toBe(all.body.name);
    expect(code(await backup({ namespaces: ['Not_A_Namespace'] }))).toBe('invalid_request');
    expect((await backup()).status).toBe(202);

    const restore = (id: string, body?: object) =>
      t.request('POST', `${c.url}/backups/${id}/restore`, { key: a.pat, body });
    const early = await restore(all.body.id);
    expect(early.status).toBe(409);
    expect(code(early)).toBe('not_ready');
    expect(code(await restore('no-such-backup'))).toBe('not_found');
    await t.advance(90);
    const backups = (await t.request('GET', `${c.url}/backups`, { key: a.pat })).body.backups;
    expect(backups.map((x: { status: string }) => x.status)).toEqual(['Completed', 'Completed', 'Completed']);
    expect(backups.find((x: { id: string }) => x.id === some.body.id)).toMatchObject({
      kind: 'manual',
      items_count: 24,
      namespaces: ['shop', 'blog'],
      include_volumes: true,
    });
    expect(code(await restore(some.body.id, { namespaces: ['other'] }))).toBe('invalid_request');
    const r = await restore(some.body.id, { namespaces: ['shop'] });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({
      restore: expect.stringMatching(/^manual-manual-\d{14}(-2)?-restore-\d{14}$/),
      status: 'InProgress',
    });
    expect(code(await restore(all.body.id))).toBe('not_ready');
    await t.advance(120);
    expect((await restore(all.body.id, {})).status).toBe(202);

    const h = await history(c.url);
    expect(h.filter((e) => e.action === 'cluster.backup.create')).toHaveLength(3);
    const restores = h.filter((e) => e.action === 'cluster.backup.restore');
    expect(restores).toHaveLength(2);
    expect(restores[0]!.details).toMatchObject({
      backup: some.body.id,
      namespaces: ['shop'],
      restore: r.body.restore,
    });
  });
});

describe('state rules', () => {
  it('refuses address and backup changes while a cluster provisions or is being deleted', async () => {
    const p = await cluster('rules-pending', { running: false });
    expect(code(await t.request('DELETE', `${p.url}/ips/198.51.100.1`, { key: a.pat }))).toBe('not_ready');
    const ptr = await t.request('PUT', `${p.url}/ips/198.51.100.1/ptr`, {
      key: a.pat,
      body: { ptr_record: 'x.example.net' },
    });
    expect(ptr.status).toBe(409);
    expect(code(ptr)).toBe('not_ready');
    // A policy may be set while it provisions; it starts once the cluster runs.
    expect(
      (await t.request('PUT', `${p.url}/backup-policy`, { key: a.pat, body: { enabled: true } })).body,
    ).toMatchObject({
      enabled: true,
      active: false,
    });

    const c = await cluster('rules-deleting');
    const bk = (await t.request('POST', `${c.url}/backups`, { key: a.pat, body: {} })).body.id as string;
    await t.advance(90);
    expect(
      (await t.request('DELETE', c.url, { key: a.pat, body: { confirm_name: 'rules-deleting' } })).status,
    ).toBe(202);
    for (const [method, path, body] of [
      ['PUT', '/backup-policy', { enabled: true }],
      ['POST', '/backups', {}],
      ['POST', `/backups/${bk}/restore`, {}],
      ['POST', '/ips', {}],
      ['GET', '/kubeconfig', undefined],
    ] as const) {
      const r = await t.request(method, `${c.url}${path}`, { key: a.pat, body });
      expect(r.status, `${method} ${path}`).toBe(409);
      expect(code(r)).toBe('not_ready');
    }
    // Reads go on until removal is confirmed.
    expect((await t.request('GET', `${c.url}/backups`, { key: a.pat })).body.backups).toHaveLength(1);
    expect((await t.request('GET', `${c.url}/backup-policy`, { key: a.pat })).status).toBe(200);
  });

  it('answers capacity (503) when the driver has no address left', async () => {
    const c = await cluster('rules-capacity');
    const k8s = t.fjord.areas.get('clusters')!.service as ClusterService;
    const spy = vi
      .spyOn(k8s.driver, 'allocateAddress')
      .mockRejectedValueOnce(clusterErrors.capacity('No floating IPv4 address is free in this region.'));
    try {
      const r = await t.request('POST', `${c.url}/ips`, { key: a.pat });
      expect(r.status).toBe(503);
      expect(code(r)).toBe('capacity');
    } finally {
      spy.mockRestore();
    }
    expect((await history(c.url)).map((h) => h.action)).toEqual(['cluster.create']);
  });
});

describe('isolation and credentials', () => {
  it('answers 404 for another account’s cluster on every new route', async () => {
    const c = await cluster('private-ops');
    const ip = (await t.request('POST', `${c.url}/ips`, { key: a.pat })).body.address as string;
    const bk = (await t.request('POST', `${c.url}/backups`, { key: a.pat, body: {} })).body.id as string;
    await expectTenantIsolation(t, { key: a.pat }, { key: b.pat }, [
      { method: 'GET', url: `${c.url}/kubeconfig` },
      { method: 'POST', url: `${c.url}/ips`, body: {} },
      { method: 'DELETE', url: `${c.url}/ips/${ip}` },
      { method: 'PUT', url: `${c.url}/ips/${ip}/ptr`, body: { ptr_record: null } },
      { method: 'GET', url: `${c.url}/backup-policy` },
      { method: 'PUT', url: `${c.url}/backup-policy`, body: { enabled: true } },
      { method: 'GET', url: `${c.url}/backups` },
      { method: 'POST', url: `${c.url}/backups`, body: {} },
      { method: 'POST', url: `${c.url}/backups/${bk}/restore`, body: {} },
    ]);
    // B's attempts left nothing behind (the kubeconfig entry is A's own check that it still works).
    expect((await history(c.url)).map((h) => h.action)).toEqual([
      'cluster.create',
      'cluster.ip.allocate',
      'cluster.backup.create',
      'cluster.kubeconfig',
    ]);
  });

  it('refuses every cluster route without a credential, with a stale one, or without the scope', async () => {
    await expectAuthMatrix(t, 'Managed clusters');
  });
});
