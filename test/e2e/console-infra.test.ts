import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.mjs';
import type { DnsServer } from '../../src/areas/dns/server/index.js';
import { ConsoleBrowser, consoleBrowserFound } from '../helpers/console-browser.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { dig } from './dns-fixtures.js';

// fjord-test: one store (sqlite). One pass runs it: Chromium on the console is its subject; the API
// under the pages is tested on both stores in the integration tier.

/**
 * The infrastructure areas' detail pages in Chromium, each capability checked through the API:
 * a zone file imported and exported, DNSSEC turned on (with its DS record) and off, query
 * statistics counted by the `dns` role and charted; a database's size against the plan,
 * connection strings, firewall rules, snapshots and a restore into a new database; a virtual
 * server whose power buttons follow its state as the clock moves it, with metrics charted and
 * snapshots and backups taken and restored. axe-core on every page; any script error, CSP
 * refusal or request to another origin fails the file. Screenshots go to
 * `$FJORD_TEST_ARTIFACTS/console-infra`.
 */
const found = consoleBrowserFound('console-infra');
const ZONE = 'console-infra.example';

let t: TestFjord;
let a: TestCustomer;
let b: ConsoleBrowser;
let page: ConsoleBrowser['page'];
let origin: string;
let dns: DnsServer;

beforeAll(async () => {
  if (!found) return;
  await buildConsole();
  t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_DNS_PORT: '0', FJORD_DNS_RRL_RATE: '0' });
  a = await t.customer();
  await t.fjord.start(['api', 'dns']);
  dns = t.fjord.areas.get('dns')!.servers!.find((s) => s.role === 'dns') as DnsServer;
  origin = new URL(t.kernel.baseUrl()).origin;
  b = await ConsoleBrowser.open(() => [origin], { artefacts: 'console-infra' });
  page = b.page;
}, 120_000);
afterAll(async () => {
  await b?.close();
  await t?.fjord.stop();
  await t?.close();
});

const shot = (name: string) => b.shot(name, { fullPage: true });
const accessible = (name: string) => b.accessible(name);
const api = (url: string) => t.request('GET', url, { key: a.pat });
const call = async (method: string, url: string, body?: unknown) => {
  const r = await t.request(method, url, { key: a.pat, body });
  expect(r.status, r.text).toBeLessThan(300);
  return r.body;
};

describe.skipIf(!found)('the infrastructure areas’ pages in Chromium', () => {
  it('signs in', async () => {
    await b.signIn(origin, a.pat);
  });

  it('imports and exports a zone file, turns DNSSEC on with its DS record and off, charts queries', async () => {
    await call('POST', '/v1/dns/zones', { domain: ZONE });
    await page.goto(`${origin}/console/dns/${ZONE}`);
    await page.getByRole('heading', { name: 'Zone file' }).waitFor();
    await page
      .getByLabel('Zone file (BIND format)')
      .fill('www 300 IN A 192.0.2.10\nmail 300 IN A 192.0.2.25\n');
    await page.getByRole('button', { name: 'Import zone file' }).click();
    await page.getByText('2 records imported, 0 replaced records deleted, 0 lines skipped.').waitFor();
    const records = (await api(`/v1/dns/zones/${ZONE}/records`)).body.records;
    expect(
      records
        .filter((r: { type: string }) => r.type === 'A')
        .map((r: { content: string }) => r.content)
        .sort(),
    ).toEqual(['192.0.2.10', '192.0.2.25']);
    await page.getByRole('cell', { name: '192.0.2.25' }).waitFor(); // the record editor shows them

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export zone file' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${ZONE}.zone`);
    const exported = readFileSync((await download.path())!, 'utf8');
    expect(exported).toBe((await api(`/v1/dns/zones/${ZONE}/export`)).text);
    expect(exported).toMatch(/192\.0\.2\.25/);

    await page.getByRole('button', { name: 'Turn DNSSEC on' }).click();
    await page.getByText('DNSSEC is on: answers are signed.').waitFor();
    const shown = (await page.locator('pre.ds-record').textContent())!.trim();
    // Activation again returns the same DS: what the page shows is what the registrar must get.
    const again = await call('POST', `/v1/dns/zones/${ZONE}/dnssec/activate`);
    expect(shown.split('\n')).toEqual(again.ds_records);
    expect((await api(`/v1/dns/zones/${ZONE}`)).body.dnssec_enabled).toBe(true);

    for (let i = 0; i < 5; i++) await dig(dns.port()!, `www.${ZONE}`, 'A');
    await dig(dns.port()!, `${ZONE}`, 'MX');
    await dns.flushStats();
    const stats = (await api(`/v1/dns/zones/${ZONE}/statistics`)).body;
    expect(stats.top_record_types).toMatchObject({ A: 5, MX: 1 });
    await page.reload();
    const bars = page.getByRole('table', { name: 'Queries this month by record type' });
    await expect
      .poll(() => bars.getByRole('row').allTextContents(), { timeout: 15_000 })
      .toEqual(['A5', 'MX1']);
    await page.getByText(`${stats.queries_today} queries today`).waitFor();
    await shot('dns-zone');
    await accessible('zone');

    await page.getByRole('button', { name: 'Turn DNSSEC off' }).click();
    await page.getByRole('button', { name: 'Turn DNSSEC off now' }).click();
    await page.getByText('DNSSEC is off: answers are not signed.').waitFor();
    expect((await api(`/v1/dns/zones/${ZONE}`)).body.dnssec_enabled).toBe(false);
  });

  it('shows a database’s size against the plan, connecting, firewall rules, snapshots and a restore', async () => {
    await call('POST', '/v1/databases', { db_type: 'postgresql', db_name: 'shop' });
    const base = '/v1/databases/postgresql/shop';
    await page.goto(`${origin}/console/databases/postgresql%2Fshop`);
    const quota = (await api('/v1/quota')).body;
    await page.getByText(`of the ${quota.database_size_mb.toLocaleString('en')} MB plan`).waitFor();
    await page.getByRole('meter', { name: 'Size against the plan' }).waitFor();
    const creds = (await api(`${base}/credentials`)).body;
    await page.getByText(creds.connection_string, { exact: true }).waitFor();

    await page.getByRole('button', { name: 'Rotate credentials' }).click();
    const secret = await page.locator('output[aria-label="Connection string with password"]').textContent();
    expect(secret).toContain(creds.username);

    await page.getByText('Allow an address').click();
    await page.getByLabel(/IP address or network/).fill('not an address');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('alert').first().waitFor();
    await page.getByLabel(/IP address or network/).fill('198.51.100.0/24');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('cell', { name: '198.51.100.0/24', exact: true }).waitFor();
    expect(
      (await api(`${base}/firewall`)).body.rules.map((r: { ip_address: string }) => r.ip_address),
    ).toEqual(['198.51.100.0/24']);

    await page.getByLabel('Snapshot name (optional)').fill('before-upgrade');
    await page.getByRole('button', { name: 'Take snapshot' }).click();
    await page.getByText('Snapshot before-upgrade is available.').waitFor();
    const [snap] = (await api(`${base}/snapshots`)).body.snapshots;
    expect(snap).toMatchObject({ name: 'before-upgrade', status: 'available' });
    await page.getByRole('button', { name: 'Restore before-upgrade' }).click();
    await page.getByLabel('New database name').fill('shop_copy');
    await page.getByRole('button', { name: 'Restore now' }).click();
    await page.getByText(/restored into/).waitFor();
    await page.locator('output[aria-label="New database connection string"]').waitFor();
    expect((await api('/v1/databases')).body.databases.map((d: { name: string }) => d.name).sort()).toEqual([
      'shop',
      'shop_copy',
    ]);
    await shot('database');
    await accessible('database');

    await page.getByRole('button', { name: 'Remove rule 198.51.100.0/24' }).click();
    await page.getByText('No rules: no address may connect.').waitFor();
    expect((await api(`${base}/firewall`)).body.rules).toEqual([]);
  });

  it('follows a server’s state: power buttons, metrics, snapshots and backups', async () => {
    const first = async (url: string, key: string) => {
      const body = (await api(url)).body;
      const list = (Array.isArray(body) ? body : Object.values(body).find(Array.isArray)) as Record<
        string,
        unknown
      >[];
      return String(list[0]![key]);
    };
    const server = await call('POST', '/v1/vps', {
      hostname: 'console-vm',
      plan_code: await first('/v1/vps/plans/', 'plan_code'),
      region: await first('/v1/vps/regions', 'id'),
      os_template: await first('/v1/vps/os-templates', 'id'),
    });
    const id = server.id;
    await page.goto(`${origin}/console/servers/${id}`);
    const button = (name: string) => page.getByRole('button', { name, exact: true });
    const state = () => page.locator('.server-state .state').textContent();
    // Provisioning: the API refuses every power action, and the page offers none.
    await expect.poll(state, { timeout: 10_000 }).toBe('provisioning');
    for (const b of ['Start', 'Stop', 'Reboot']) expect(await button(b).isDisabled()).toBe(true);
    expect((await t.request('POST', `/v1/vps/${id}/start`, { key: a.pat })).status).toBe(409);

    await t.advance(200);
    await expect.poll(state, { timeout: 10_000 }).toBe('running');
    expect(await button('Start').isDisabled()).toBe(true);
    expect(await button('Stop').isEnabled()).toBe(true);
    expect(await button('Reboot').isEnabled()).toBe(true);
    // Two reads make the first network rate; the charts draw the samples read so far.
    await expect
      .poll(
        async () => Number(await page.getByRole('img', { name: /^CPU, memory/ }).getAttribute('data-points')),
        { timeout: 10_000 },
      )
      .toBeGreaterThanOrEqual(2);
    await page.getByText(/^Up \d+ (s|min)/).waitFor();
    await page.getByLabel('Backup name (optional)').fill('nightly-1');
    await page.getByRole('button', { name: 'Back up now' }).click();
    await page.getByText(/^Backup nightly-1 is available\.$/).waitFor();
    expect((await api(`/v1/vps/${id}/backups`)).body.backups).toMatchObject([
      { name: 'nightly-1', status: 'available' },
    ]);
    await shot('server-running');
    await accessible('server running');
    // A snapshot needs the server stopped: the button says so by being disabled.
    await page.getByLabel('Snapshot name').fill('clean');
    expect(await button('Take snapshot').isDisabled()).toBe(true);

    await button('Stop').click();
    await expect.poll(state, { timeout: 10_000 }).toBe('stopping');
    expect(await button('Stop').isDisabled()).toBe(true);
    await t.advance(60);
    await expect.poll(state, { timeout: 10_000 }).toBe('stopped');
    expect(await button('Start').isEnabled()).toBe(true);
    expect(await button('Stop').isDisabled()).toBe(true);
    expect((await api(`/v1/vps/${id}`)).body.status).toBe('stopped');

    await button('Take snapshot').click();
    await page.getByText('Snapshot clean was taken.').waitFor();
    expect(
      (await api(`/v1/vps/${id}/snapshots`)).body.snapshots.map((s: { name: string }) => s.name),
    ).toEqual(['clean']);
    await button('Roll back to snapshot').click();
    await page.getByLabel('Type clean to confirm').fill('clean');
    await button('Roll back to snapshot clean').click();
    await page.getByText(/as it was at snapshot clean/).waitFor();

    await button('Restore backup').click();
    await page.getByLabel('Type nightly-1 to confirm').fill('nightly-1');
    await button('Restore backup nightly-1').click();
    await page.getByText(/as it was at backup/).waitFor();
    await shot('server-stopped');
    await accessible('server stopped');

    await button('Start').click();
    await expect.poll(state, { timeout: 10_000 }).toBe('starting');
    expect((await api(`/v1/vps/${id}/status`)).body.status).toBe('starting');
    for (const b of ['Start', 'Stop', 'Reboot']) expect(await button(b).isDisabled()).toBe(true);
  });

  it('saw no script error, CSP refusal or request to another origin', () => {
    expect(b.problems).toEqual([]);
  });
});
