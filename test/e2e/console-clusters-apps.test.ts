import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.mjs';
import { SIMULATED_DEPLOY_SECONDS } from '../../src/areas/apps/drivers/simulated.js';
import { PROVISIONING_SECONDS } from '../../src/areas/clusters/lifecycle.js';
import { ConsoleBrowser, consoleBrowserFound } from '../helpers/console-browser.js';
import { dnsServerOf, untilServed } from '../helpers/dns-records.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { scratchDir } from '../helpers/scratch-dir.js';

// fjord-test: one store (sqlite). One pass runs it: Chromium on the console is its subject; the API
// under the pages is tested on both stores in the integration tier.

/**
 * The infrastructure areas' deeper pages in Chromium, each change checked through the API: a
 * cluster's node pools (add, resize, remove), kubeconfig download, a backup restored with its
 * progress, an upgrade started into the timeline; an app deployed from an image archive uploaded
 * from the page, a second revision and a rollback, a custom domain, the metrics chart; a domain
 * verified against Fjord's own DNS; a DynDNS token shown once, used by a router and revoked. A
 * finished upload does not pull a reader who moved on back to its app. axe-core on every page;
 * any script error, CSP refusal or request to another origin fails the file. Screenshots go to
 * `$FJORD_TEST_ARTIFACTS/console-clusters-apps`.
 */
const found = consoleBrowserFound('console-clusters-apps');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let t: TestFjord;
let a: TestCustomer;
let b: ConsoleBrowser;
let page: ConsoleBrowser['page'];
let origin: string;
let archive: string;

beforeAll(async () => {
  if (!found) return;
  await buildConsole();
  const dnsPort = await freePort();
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_S3_PORT: '0',
    FJORD_DNS_PORT: String(dnsPort),
    FJORD_RESOLVER: `127.0.0.1:${dnsPort}`,
  });
  a = await t.customer();
  await t.fjord.start(['api', 's3', 'dns']);
  origin = new URL(t.kernel.baseUrl()).origin;
  // An image archive as `docker save` writes one: a tar (its content is not run by the simulated driver).
  const dir = scratchDir('console-clusters-apps-');
  writeFileSync(join(dir, 'manifest.json'), '[]');
  archive = join(dir, 'image.tar');
  execFileSync('tar', ['-cf', archive, '-C', dir, 'manifest.json']);
  b = await ConsoleBrowser.open(() => [origin], { artefacts: 'console-clusters-apps' });
  page = b.page;
  await b.signIn(origin, a.pat);
}, 120_000);
afterAll(async () => {
  await b?.close();
  await t?.close();
});

afterEach((ctx) => b?.reportFailure(ctx));

const shot = (name: string) => b.shot(name, { fullPage: true });
const accessible = (name: string) => b.accessible(name);
const deleteHere = (what: string, name: string) => b.deleteHere(what, name);
const api = (url: string) => t.request('GET', url, { key: a.pat });
/** The machine may be busy: a page's answer gets ten seconds, not vitest's default second. */
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 10_000 });
const h1 = () => page.getByRole('heading', { level: 1 }).textContent();
const statusText = (text: string | RegExp) =>
  page.getByRole('status').filter({ hasText: text }).textContent();

const openArea = (name: string) => b.openArea(name);

describe.skipIf(!found)('the infrastructure areas’ pages in Chromium', () => {
  it('scales a cluster’s pools, downloads its kubeconfig, restores a backup with progress, starts an upgrade', async () => {
    const region = (await api('/v1/kubernetes/regions')).body.regions[0].code;
    const versions = ((await api('/v1/kubernetes/versions')).body.versions as { version: string }[])
      .map((v) => v.version)
      .sort((x, y) => x.localeCompare(y, undefined, { numeric: true }));
    const created = await t.request('POST', '/v1/kubernetes/clusters', {
      key: a.pat,
      body: {
        name: 'infra-k8s',
        region,
        plan_code: 'k8s-cluster-dev',
        version: versions[0],
        node_pools: [{ name: 'pool-1', plan_code: 'k8s-node-s', count: 1 }],
      },
    });
    expect(created.status, created.text).toBe(202);
    const id = created.body.id as string;
    await t.advance(PROVISIONING_SECONDS + 1);
    expect((await api(`/v1/kubernetes/clusters/${id}`)).body.status).toBe('running');
    await page.goto(`${origin}/console/clusters/${id}`);
    await poll(h1).toBe('Clusters: infra-k8s');

    // kubeconfig: the file the browser saves is the API's.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download kubeconfig' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('infra-k8s.kubeconfig.yaml');
    expect(readFileSync((await download.path())!, 'utf8')).toContain('kind: Config');

    // Pools: add one, resize it, remove it.
    await page.getByText('Add a node pool').click();
    await page.locator('#k8sAddNodePool-name').fill('pool-2');
    await page.locator('#k8sAddNodePool-plan_code').selectOption('k8s-node-s');
    await page.locator('#k8sAddNodePool-count').fill('2');
    await page.getByRole('button', { name: 'Add node pool' }).click();
    await page.getByLabel('Nodes in pool-2').waitFor();
    const pools = async () =>
      ((await api(`/v1/kubernetes/clusters/${id}`)).body.node_pools as { name: string; count: number }[]).map(
        (p) => `${p.name}:${p.count}`,
      );
    expect(await pools()).toEqual(['pool-1:1', 'pool-2:2']);
    // A pool changes one at a time, on the clock: Resize is offered again once the pool is ready,
    // which the page sees by reading the cluster again while a pool scales (no reload).
    const resize = page.getByRole('button', { name: 'Resize pool-2' });
    const poolStatus = () =>
      page
        .getByRole('row', { name: /pool-2/ })
        .getByRole('cell')
        .nth(4)
        .textContent();
    await poll(poolStatus).toBe('scaling');
    expect(await resize.isDisabled()).toBe(true);
    await t.advance(600);
    await poll(poolStatus).toBe('ready');
    expect(await resize.isEnabled()).toBe(true);
    await page.getByLabel('Nodes in pool-2').fill('3');
    await resize.click();
    await poll(pools).toEqual(['pool-1:1', 'pool-2:3']);
    await poll(poolStatus).toBe('scaling');
    await t.advance(600);
    await poll(poolStatus).toBe('ready');
    await page
      .getByRole('row', { name: /pool-2/ })
      .getByRole('button', { name: 'Remove node pool', exact: true })
      .click();
    await page.getByLabel('Type pool-2 to confirm').fill('pool-2');
    await page.getByRole('button', { name: 'Remove node pool pool-2' }).click();
    await poll(pools).toEqual(['pool-1:1']);
    await t.advance(600);

    // Backups: one taken from the page, completed on the clock, restored with its progress.
    await page.getByRole('button', { name: 'Back up now' }).click();
    await poll(() => statusText('A backup was started.')).toBe('A backup was started.');
    const backups = (await api(`/v1/kubernetes/clusters/${id}/backups`)).body.backups;
    expect(backups).toMatchObject([{ kind: 'manual', status: 'InProgress' }]);
    await t.advance(3600);
    // The page reads a backup in progress again until it completes: no reload.
    const restore = page.getByRole('button', { name: `Restore ${backups[0].name}` });
    await poll(() => restore.isEnabled()).toBe(true);
    await restore.click();
    await poll(() => statusText(/^Restore /)).toMatch(/^Restore .+: \d+% done\.$/);
    await page.getByRole('progressbar', { name: /^Restore .+ progress$/ }).waitFor();
    const restores = (await api(`/v1/kubernetes/clusters/${id}/restores`)).body.restores;
    expect(restores).toMatchObject([{ backup_id: backups[0].id, status: 'InProgress' }]);
    await shot('cluster-backups');
    await accessible('cluster');
    await t.advance(300);
    await page.reload();
    await poll(() => statusText(/^Restore /)).toMatch(/: completed\.$/);
    expect((await api(`/v1/kubernetes/clusters/${id}/restores`)).body.restores[0]).toMatchObject({
      status: 'Completed',
      progress_percent: 100,
    });

    // Upgrade: the versions offered are the API's; the upgrade's steps show in the timeline.
    const targets = (await api(`/v1/kubernetes/clusters/${id}/upgrade`)).body.versions as string[];
    expect(targets.length).toBeGreaterThan(0);
    await page.getByLabel('Version', { exact: true }).selectOption(targets[0]!);
    await page.getByRole('button', { name: 'Start upgrade' }).click();
    await page.getByRole('list', { name: 'Upgrade steps' }).waitFor();
    await poll(() => statusText(/^Upgrade:/)).toMatch(/^Upgrade: \d+ of \d+ steps done/);
    expect((await api(`/v1/kubernetes/clusters/${id}/timeline`)).body).toMatchObject({
      operation: 'upgrade',
      status: 'upgrading',
    });
    await shot('cluster-upgrade');
    await accessible('cluster upgrading');
  }, 180_000); // many page steps: on two busy cores, more than vitest's default minute

  it('deploys an app from an uploaded archive, deploys again, rolls back, adds a domain, charts metrics', async () => {
    await openArea('Container apps');
    await page.getByText('Deploy an app from an uploaded image').click();
    await page.locator('#app-upload-name').fill('upload-app');
    await page.locator('#app-upload-file').setInputFiles(archive);
    await page.getByRole('button', { name: 'Upload and deploy' }).click();
    // The page opens the new app: the reader stayed on the list.
    await poll(h1).toBe('Container apps: upload-app');
    const app = (await api('/v1/apps')).body.apps[0];
    const first = (await api(`/v1/apps/${app.id}/revisions`)).body.revisions[0];
    expect(first).toMatchObject({ number: 1, image_upload_id: expect.any(String) });

    await t.advance(SIMULATED_DEPLOY_SECONDS + 1);
    await page.reload();
    await page.getByText('Deploy a new revision').click();
    await page.getByLabel('From a registry').check();
    await page.locator('#deploy-image').fill('docker.io/library/nginx:1.27');
    await page.getByRole('button', { name: 'Deploy revision' }).click();
    await poll(() => statusText('Deployed: the new revision starts.')).toBe(
      'Deployed: the new revision starts.',
    );
    // The log stream opens again for the new revision's instance, and its lines come in as the
    // deploy moves on: no reload.
    const logs = () => page.getByRole('log', { name: /^Logs of/ }).innerText();
    await poll(logs).toContain('pulling docker.io/library/nginx:1.27');
    const healthLines = async () => (await logs()).split('health check GET').length - 1;
    const before = await healthLines();
    await t.advance(SIMULATED_DEPLOY_SECONDS + 1);
    await poll(healthLines).toBe(before + 1);
    await page.reload();
    const current = async () => (await api(`/v1/apps/${app.id}`)).body.current_revision?.number;
    expect(await current()).toBe(2);
    await page.getByRole('button', { name: 'Roll back to revision 1' }).click();
    await poll(current).toBe(1);

    await page.getByLabel('Host name').fill('www.upload-app.example');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('button', { name: 'Check www.upload-app.example' }).waitFor();
    const domains = (await api(`/v1/apps/${app.id}/domains`)).body.domains;
    expect(domains).toMatchObject([{ host_name: 'www.upload-app.example' }]);
    await poll(() => page.getByRole('table', { name: 'Custom domains' }).textContent()).toContain(
      domains[0].certificate_status,
    );
    await page.getByRole('img', { name: /^Requests and errors per minute/ }).waitFor();
    await page.getByRole('log', { name: /^Logs of/ }).waitFor();
    await shot('app');
    await accessible('app');
  });

  it('does not open an uploaded app for a reader who has moved on', async () => {
    await openArea('Container apps');
    // The create call is held until the reader has left for another page.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    await page.route(`${origin}/v1/apps`, async (route) => {
      if (route.request().method() === 'POST') await held;
      await route.continue();
    });
    await page.getByText('Deploy an app from an uploaded image').click();
    await page.locator('#app-upload-name').fill('left-app');
    await page.locator('#app-upload-file').setInputFiles(archive);
    await page.getByRole('button', { name: 'Upload and deploy' }).click();
    await poll(() => statusText('Deploying…')).toBe('Deploying…');
    await openArea('Clusters');
    const created = page.waitForResponse(
      (r) => r.url() === `${origin}/v1/apps` && r.request().method() === 'POST',
    );
    const finished = page.waitForEvent(
      'requestfinished',
      (r) => r.url() === `${origin}/v1/apps` && r.method() === 'POST',
    );
    release();
    expect((await created).status()).toBe(201);
    await finished;
    await poll(async () =>
      ((await api('/v1/apps')).body.apps as { name: string }[]).map((x) => x.name).sort(),
    ).toEqual(['left-app', 'upload-app']);
    // Whatever the page does with the answer has had its turn once its main thread is idle: the
    // reader is still on Clusters.
    await page.evaluate(
      () =>
        new Promise((r) =>
          (globalThis as unknown as { requestIdleCallback(f: () => void): void }).requestIdleCallback(() =>
            r(null),
          ),
        ),
    );
    expect(await h1()).toBe('Clusters');
    await page.unroute(`${origin}/v1/apps`);
  });

  it('verifies a domain with the record the page shows, after a re-check', async () => {
    const owner = await t.customer();
    expect(
      (await t.request('POST', '/v1/dns/zones', { key: owner.pat, body: { domain: 'console-verify.com' } }))
        .status,
    ).toBe(201);
    await page.goto(`${origin}/console/domain-verification`);
    await poll(h1).toBe('Domain verification');
    await page.locator('#createDomainVerification-domain').fill('console-verify.com');
    await page.locator('#createDomainVerification-purpose').selectOption('email');
    await page.getByRole('button', { name: 'Create domain' }).click();
    await page.getByRole('link', { name: 'console-verify.com' }).click();
    const d = (await api('/v1/domain-verification/domains')).body.domains[0];
    const records = page.getByRole('table', { name: 'Records to create' });
    await poll(() => records.textContent()).toContain(d.instructions.record_value);
    expect(await records.textContent()).toContain(d.instructions.record_name);

    await dnsServerOf(t).settled();
    await page.getByRole('button', { name: 'Check again' }).click();
    await poll(() => page.getByRole('table', { name: 'Checks' }).textContent()).toContain('pending');
    const record = await t.request('POST', '/v1/dns/zones/console-verify.com/records', {
      key: owner.pat,
      body: { record_type: 'TXT', host: '_fjord', record: d.instructions.record_value, ttl: 300 },
    });
    expect(record.status).toBe(201);
    await untilServed(t, '_fjord.console-verify.com', 'TXT', (v) => v.includes(d.instructions.record_value));
    await page.getByRole('button', { name: 'Check again' }).click();
    await poll(async () => (await api(`/v1/domain-verification/domains/${d.id}`)).body.status).toBe(
      'verified',
    );
    await poll(() => statusText(/Found:/)).toContain(d.instructions.record_value);
    await shot('domain-verification');
    await accessible('domain verification');

    await deleteHere('domain', 'console-verify.com');
    await poll(h1).toBe('Domain verification');
    await poll(async () => (await api('/v1/domain-verification/domains')).body.domains).toEqual([]);
  });

  it('adds a DynDNS hostname, shows its token once, lists the router’s update, revokes the token', async () => {
    await openArea('Dynamic DNS');
    await page.locator('#createDynHostname-hostname').fill('home.dyn.fjord.test');
    await page.getByRole('button', { name: 'Create hostname' }).click();
    await page.getByRole('link', { name: 'home.dyn.fjord.test' }).click();
    await page.getByRole('button', { name: 'Create a router token' }).click();
    const secret = await page.locator('output.secret-value').textContent();
    const [username, password] = String(secret).split(':') as [string, string];
    const host = (await api('/v1/dyn/hostnames')).body[0];
    const tokens = (await api(`/v1/dyn/hostnames/${host.id}/router-tokens`)).body;
    expect(tokens.map((x: { username: string }) => x.username)).toEqual([username]);
    expect(JSON.stringify(tokens)).not.toContain(password);

    // A router's update with the token, as ddclient sends it.
    const nic = await fetch(`${origin}/nic/update?hostname=home.dyn.fjord.test&myip=192.0.2.10`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
        'user-agent': 'ddclient/3.10.0',
      },
    });
    expect(await nic.text()).toMatch(/^good 192\.0\.2\.10/);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    await poll(() => page.getByRole('table', { name: 'Updates' }).textContent()).toContain('192.0.2.10');
    await shot('dyn-hostname');
    await accessible('dyn hostname');

    await page.getByRole('button', { name: 'Revoke token', exact: true }).click();
    await page.getByLabel(`Type ${username} to confirm`).fill(username);
    await page.getByRole('button', { name: `Revoke token ${username}` }).click();
    await poll(async () => (await api(`/v1/dyn/hostnames/${host.id}/router-tokens`)).body).toEqual([]);

    await deleteHere('hostname', 'home.dyn.fjord.test');
    await poll(h1).toBe('Dynamic DNS');
    await poll(async () => (await api('/v1/dyn/hostnames')).body).toEqual([]);
  });

  it('saw no script error, CSP refusal or request to another origin', () => {
    expect(b.problems).toEqual([]);
  });
});
