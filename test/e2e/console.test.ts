import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.mjs';
import { CHROMIUM, launchChromium } from '../helpers/chromium.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * The web console in a real browser (Debian's Chromium, driven by playwright-core): sign-in,
 * the navigation, and a resource created and deleted through the pages of each infrastructure
 * area, each change checked through the API. Every page is checked by axe-core; any script error,
 * Content-Security-Policy refusal or request to another origin than Fjord's fails the test.
 * Screenshots are kept (`$FJORD_TEST_ARTIFACTS/console`, by default under the temp directory).
 */
const found = existsSync(CHROMIUM);
if (!found) console.warn(`console: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium)`);
const ARTEFACTS = join(
  process.env['FJORD_TEST_ARTIFACTS'] ?? join(tmpdir(), 'fjord-test-artifacts'),
  'console',
);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const NAV = [
  'Storage',
  'DNS',
  'Databases',
  'Virtual servers',
  'Clusters',
  'Container apps',
  'IoT',
  'Live events',
  'Speech',
  'Language models',
  'Chatbots',
  'GPU jobs',
  'IP intelligence',
  'SMS',
  'Verification',
  'Contacts',
  'Dynamic DNS',
  'API keys',
  'Usage and costs',
];

let t: TestFjord;
let a: TestCustomer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let origin: string;
const problems: string[] = [];

beforeAll(async () => {
  if (!found) return;
  await buildConsole();
  t = await TestFjord.create({ FJORD_API_PORT: '0' });
  a = await t.customer();
  await t.fjord.start(['api']);
  origin = new URL(t.kernel.baseUrl()).origin;
  browser = await launchChromium();
  // playwright-core's launch gives each browser a fresh profile directory of its own.
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  context.setDefaultTimeout(10_000); // a step that cannot happen fails with its own message
  page = await context.newPage();
  page.on('pageerror', (err) => problems.push(`script error: ${err.message}`));
  page.on('console', (m) => {
    // A 4xx the page expects (no session yet, a validation error it shows) is logged by Chromium as a failed load: not a fault.
    if (
      (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) ||
      m.text().includes('Content Security Policy')
    )
      problems.push(`console: ${m.text()}`);
  });
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (!['blob:', 'data:'].includes(url.protocol) && url.origin !== origin)
      problems.push(`request left Fjord: ${r.url()}`);
  });
  mkdirSync(ARTEFACTS, { recursive: true });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** The little of the DOM these page functions read (the test is compiled without the DOM's types). */
declare const axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Violation[] }> };
interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core on the page as it is: no serious or critical violation. */
async function accessible(name: string) {
  if (!(await page.evaluate(() => typeof (globalThis as { axe?: unknown }).axe !== 'undefined')))
    await page.evaluate(AXE); // evaluated by the test harness, not the page: the page's CSP stays strict
  const violations = await page.evaluate(
    async () => (await axe.run(document, { resultTypes: ['violations'] })).violations,
  );
  const serious = violations.filter((v: Violation) => v.impact === 'serious' || v.impact === 'critical');
  expect(
    serious.map(
      (v: Violation) =>
        `${name}: ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    ),
  ).toEqual([]);
}
declare const document: unknown;

const shot = (name: string) => page.screenshot({ path: join(ARTEFACTS, `${name}.png`) });

async function openArea(name: string) {
  await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name, exact: true }).click();
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(name);
}

/** Deletes the resource on the page open now: its name typed into the confirmation. */
async function deleteHere(what: string, name: string) {
  await page.getByRole('button', { name: `Delete ${what}`, exact: true }).click();
  await page.getByLabel(`Type ${name} to confirm`).fill(name);
  await page.getByRole('button', { name: `Delete ${what} ${name}` }).click();
}

const api = (url: string) => t.request('GET', url, { key: a.pat });

/**
 * The object browser on the bucket page open now: a folder made through the API is opened by its
 * link, a file is uploaded into it through the page, downloaded through the page and deleted.
 */
async function browseObjects() {
  const object = (key: string) =>
    t.request('GET', '/v1/storage/buckets/console-photos/object', { key: a.pat, query: { key } });
  const put = await t.request('PUT', '/v1/storage/buckets/console-photos/object', {
    key: a.pat,
    query: { key: 'trips/fjord.txt' },
    rawBody: 'made through the API',
  });
  expect(put.status).toBe(200);
  await page.reload();
  await page.getByRole('link', { name: 'trips/' }).click();
  await page.getByRole('cell', { name: 'fjord.txt', exact: true }).waitFor();
  await page.getByLabel(/^Upload files to/).setInputFiles({
    name: 'notes.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from('uploaded through the console'),
  });
  await page.getByText('1 of 1 file uploaded.').waitFor();
  expect((await object('trips/notes.txt')).text).toBe('uploaded through the console');
  await page.getByRole('cell', { name: 'notes.txt', exact: true }).waitFor();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download fjord.txt' }).click(),
  ]);
  expect(download.suggestedFilename()).toBe('fjord.txt');
  expect(readFileSync((await download.path())!, 'utf8')).toBe('made through the API');
  await shot('3-storage-objects');
  await accessible('objects');
  for (const name of ['notes.txt', 'fjord.txt']) {
    await page
      .getByRole('row', { name: new RegExp(name) })
      .getByRole('button', { name: 'Delete object' })
      .click();
    await page.getByLabel(`Type ${name} to confirm`).fill(name);
    await page.getByRole('button', { name: `Delete object ${name}` }).click();
    await page.getByText(`${name} was deleted.`).waitFor();
    expect((await object(`trips/${name}`)).status).toBe(404);
  }
  await page
    .getByRole('navigation', { name: 'Folder' })
    .getByRole('link', { name: 'console-photos' })
    .click();
  await page.getByText('No objects yet.').waitFor();
}

describe.skipIf(!found)('the web console in Chromium', () => {
  it('signs in with a PAT into an HttpOnly session, and shows the areas in order', async () => {
    await page.goto(`${origin}/console/`);
    await page.getByLabel(/token/i).fill(a.pat);
    await shot('0-sign-in');
    await accessible('sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    const links = await page.getByRole('navigation', { name: 'Areas' }).getByRole('link').allTextContents();
    expect(links).toEqual(['Overview', ...NAV]);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'fjord_console', httpOnly: true, sameSite: 'Strict' });
    expect(cookie!.expires).toBeGreaterThan(0); // expiring, not a browser-session cookie
    const stored = await page.evaluate(() =>
      JSON.stringify({ ...(globalThis as unknown as { localStorage: object }).localStorage }),
    );
    expect(stored).not.toContain(a.pat);
    await page.getByRole('heading', { name: 'This month’s usage' }).waitFor();
    await shot('1-overview');
    await accessible('overview');
  });

  it('creates and revokes a token, and adds and deletes an SSH key', async () => {
    await openArea('API keys');
    await page.getByText('Create a personal access token').click();
    await page.locator('#createPat-description').fill('console token');
    await page.locator('#createPat-scopes').fill('dns:read, dns:write');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = await page.locator('output[aria-label=Token]').textContent();
    expect(secret).toMatch(/^fj/);
    expect((await t.request('GET', '/v1/dns/zones', { key: secret! })).status).toBe(200);
    await shot('2-api-keys-secret');
    await accessible('api keys');
    await page.getByRole('button', { name: 'Done' }).click();
    await page
      .getByRole('row', { name: /console token/ })
      .getByRole('button', { name: 'Revoke key' })
      .click();
    await page.getByLabel('Type console token to confirm').fill('console token');
    await page.getByRole('button', { name: 'Revoke key console token' }).click();
    await page.getByText('The key console token was revoked.').waitFor();
    expect((await t.request('GET', '/v1/dns/zones', { key: secret! })).status).toBe(401);

    const { publicKey } = generateKeyPairSync('ed25519');
    const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
    const blob = Buffer.concat([sshString(Buffer.from('ssh-ed25519')), sshString(raw)]);
    await page.getByText('Add an SSH key').click();
    await page.locator('#addSshKey-name').fill('laptop');
    await page.getByLabel(/Public key/).fill(`ssh-ed25519 ${blob.toString('base64')} me@laptop`);
    await page.getByRole('button', { name: 'Add SSH key' }).click();
    await page.getByRole('cell', { name: /^SHA256:/ }).waitFor();
    expect((await api('/v1/account/ssh-keys')).body.map((k: { name: string }) => k.name)).toEqual(['laptop']);
    await page.getByRole('button', { name: 'Delete SSH key' }).click();
    await page.getByLabel('Type laptop to confirm').fill('laptop');
    await page.getByRole('button', { name: 'Delete SSH key laptop' }).click();
    await page.getByText('The SSH key laptop was deleted.').waitFor();
    expect((await api('/v1/account/ssh-keys')).body).toEqual([]);
  });

  it('creates a bucket with the Name field, shows its page, deletes it by name', async () => {
    await openArea('Storage');
    await page.getByLabel('Name').fill('console-photos');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    await page.getByRole('link', { name: 'console-photos' }).click();
    await expect
      .poll(() => page.getByRole('heading', { level: 1 }).textContent())
      .toBe('Storage: console-photos');
    expect((await api('/v1/storage/buckets/console-photos')).status).toBe(200);
    await browseObjects();
    await shot('3-storage-bucket');
    await accessible('bucket');
    await deleteHere('bucket', 'console-photos');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Storage');
    expect((await api('/v1/storage/buckets/console-photos')).status).toBe(404);
  });

  it('creates a zone, adds and edits a record with the API’s validation at the field, deletes the zone', async () => {
    await openArea('DNS');
    await page.getByLabel('Domain').fill('console-e2e.example');
    await page.getByRole('button', { name: 'Create zone' }).click();
    await page.getByRole('link', { name: 'console-e2e.example' }).click();
    await page.getByText('Add a record').click();
    await page.getByLabel('Type').selectOption('A');
    await page.getByLabel('Host').fill('www');
    await page.getByLabel('Value').fill('not an address');
    await page.getByRole('button', { name: 'Add record' }).click();
    await page.getByRole('alert').first().waitFor();
    await page.getByLabel('Value').fill('192.0.2.10');
    await page.getByRole('button', { name: 'Add record' }).click();
    await page.getByRole('cell', { name: '192.0.2.10' }).waitFor();
    await page.getByRole('button', { name: /^Edit A record www/ }).click();
    await page.locator('[id^=edit-][id$=-record]').fill('192.0.2.20');
    await page.getByRole('button', { name: 'Save record' }).click();
    // The editing row's input holds the new value too: wait for the saved row, not the input.
    await page.getByRole('button', { name: 'Save record' }).waitFor({ state: 'detached' });
    await page.getByRole('cell', { name: '192.0.2.20' }).waitFor();
    const records = (await api('/v1/dns/zones/console-e2e.example/records')).body.records;
    expect(
      records.filter((r: { type: string }) => r.type === 'A').map((r: { content: string }) => r.content),
    ).toEqual(['192.0.2.20']);
    await shot('4-dns-records');
    await accessible('zone');
    await deleteHere('zone', 'console-e2e.example');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('DNS');
    expect((await api('/v1/dns/zones/console-e2e.example')).status).toBe(404);
  });

  it('creates a database with its password shown once, deletes it', async () => {
    await openArea('Databases');
    await page.getByLabel('Engine').selectOption('postgresql');
    await page.getByLabel('Name').fill('consoledb');
    await page.getByRole('button', { name: 'Create database' }).click();
    await page.getByText('shown only this once').waitFor();
    const dbs = (await api('/v1/databases')).body.databases;
    expect(dbs.map((d: { name: string }) => d.name)).toEqual(['consoledb']);
    await shot('5-databases');
    await accessible('databases');
    await page.getByRole('link', { name: 'consoledb' }).click();
    await deleteHere('database', 'consoledb');
    await expect
      .poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 })
      .toBe('Databases');
    expect((await api('/v1/databases')).body.databases).toEqual([]);
  });

  it('creates a cluster, watches its provisioning timeline move on its own, deletes it by name', async () => {
    await openArea('Clusters');
    const region = (await api('/v1/kubernetes/regions')).body.regions[0].code;
    await page.locator('#k8sCreateCluster-name').fill('console-k8s');
    await page.locator('#k8sCreateCluster-region').selectOption(region);
    await page.locator('#k8sCreateCluster-plan_code').selectOption('k8s-cluster-dev');
    await page
      .locator('#k8sCreateCluster-node_pools')
      .fill('[{"name": "pool-1", "plan_code": "k8s-node-s", "count": 1}]');
    await page.getByRole('button', { name: 'Create cluster' }).click();
    await page.getByRole('link', { name: 'console-k8s' }).click();
    const cluster = (await api('/v1/kubernetes/clusters')).body.clusters[0];
    expect(cluster).toMatchObject({ name: 'console-k8s', status: 'provisioning' });
    const steps = page.getByRole('list', { name: 'Provisioning steps' });
    await steps.waitFor();
    // The first step takes five seconds on the clock: the page looks again when Fjord says it ends.
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Provisioning:' }).textContent(), {
        timeout: 20_000,
      })
      .toMatch(/^Provisioning: [1-9]\d* of 10 steps done/);
    const timeline = (await api(`/v1/kubernetes/clusters/${cluster.id}/timeline`)).body;
    expect(timeline.steps[0]).toMatchObject({ name: 'validate', state: 'done' });
    await shot('6-cluster-timeline');
    await accessible('cluster');
    await deleteHere('cluster', 'console-k8s');
    await expect
      .poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 })
      .toBe('Clusters');
    expect((await api(`/v1/kubernetes/clusters/${cluster.id}`)).body.status).toBe('deleting');
  });

  it('creates a virtual server from the API’s plans, regions and images, deletes it by name', async () => {
    await openArea('Virtual servers');
    const first = async (url: string, key: string) => {
      const body = (await api(url)).body;
      const list = (Array.isArray(body) ? body : Object.values(body).find(Array.isArray)) as Record<
        string,
        unknown
      >[];
      return String(list[0]![key]);
    };
    await page.locator('#vpsCreate-hostname').fill('console-vm');
    await page.locator('#vpsCreate-plan_code').selectOption(await first('/v1/vps/plans/', 'plan_code'));
    await page.locator('#vpsCreate-region').selectOption(await first('/v1/vps/regions', 'id'));
    await page.locator('#vpsCreate-os_template').selectOption(await first('/v1/vps/os-templates', 'id'));
    await page.getByRole('button', { name: 'Create server' }).click();
    await page.getByRole('link', { name: 'console-vm' }).click();
    const servers = (await api('/v1/vps')).body.instances;
    expect(servers.map((v: { hostname: string }) => v.hostname)).toEqual(['console-vm']);
    await page.getByRole('heading', { name: 'Power' }).waitFor();
    await shot('7-server');
    await accessible('server');
    await deleteHere('server', 'console-vm');
    await expect
      .poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 })
      .toBe('Virtual servers');
    expect((await api(`/v1/vps/${servers[0].id}`)).status).toBe(404);
  });

  it('deploys a container app from an image, shows its logs panel, deletes it by name', async () => {
    await openArea('Container apps');
    await page.locator('#appsCreate-name').fill('console-app');
    await page.locator('#appsCreate-image').fill('docker.io/library/nginx:1.27');
    await page.getByRole('button', { name: 'Create app' }).click();
    await page.getByRole('link', { name: 'console-app' }).click();
    const apps = (await api('/v1/apps')).body.apps;
    expect(apps.map((x: { name: string }) => x.name)).toEqual(['console-app']);
    await page.getByRole('log', { name: /^Logs of/ }).waitFor();
    await shot('8-app');
    await accessible('app');
    await deleteHere('app', 'console-app');
    await expect
      .poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 })
      .toBe('Container apps');
    expect((await api('/v1/apps')).body.apps).toEqual([]);
  });

  it('shows every area page with its heading, accessible', async () => {
    for (const [i, name] of NAV.entries()) {
      await openArea(name);
      await page.waitForFunction(
        () =>
          !(
            globalThis as unknown as { document: { body: { textContent: string } } }
          ).document.body.textContent.includes('Loading'),
      );
      await accessible(name);
      await shot(`area-${String(i).padStart(2, '0')}-${name.toLowerCase().replace(/\W+/g, '-')}`);
    }
  });

  it('signs out: the session ends', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel(/token/i).waitFor();
    expect(await context.cookies()).toEqual([]);
  });

  it('saw no script error, CSP refusal or request to another origin', () => {
    expect(problems).toEqual([]);
  });
});

function sshString(b: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
}
