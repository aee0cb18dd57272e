import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.mjs';
import { ConsoleBrowser, consoleBrowserFound } from '../helpers/console-browser.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

// fjord-test: one store (postgres). One pass runs it: Chromium on the console is its subject; the
// API under the pages is tested on both stores in the integration tier.

/**
 * The web console in a real browser (Debian's Chromium, driven by playwright-core): sign-in,
 * the navigation, and a resource created and deleted through the pages of each infrastructure
 * area, each change checked through the API, and an object's shared link with the expiry chosen on
 * the page, fetched from the S3 endpoint and refused once expired. Every page is checked by axe-core; any script error,
 * Content-Security-Policy refusal or request to another origin than Fjord's fails the test.
 * Screenshots are kept (`$FJORD_TEST_ARTIFACTS/console`, by default under the temp directory).
 */
const found = consoleBrowserFound('console');

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
let b: ConsoleBrowser;
let page: ConsoleBrowser['page'];
let origin: string;

beforeAll(async () => {
  if (!found) return;
  await buildConsole();
  t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_S3_PORT: '0' });
  a = await t.customer();
  await t.fjord.start(['api', 's3']); // s3: a shared link is fetched from the S3 endpoint
  origin = new URL(t.kernel.baseUrl()).origin;
  b = await ConsoleBrowser.open(() => [origin]);
  page = b.page;
}, 120_000);
afterAll(async () => {
  await b?.close();
  await t?.close();
});

afterEach((ctx) => b?.reportFailure(ctx));

const accessible = (name: string) => b.accessible(name);
const shot = (name: string) => b.shot(name);
const openArea = (name: string) => b.openArea(name);

const deleteHere = (what: string, name: string) => b.deleteHere(what, name);
const api = (url: string) => t.request('GET', url, { key: a.pat });

/**
 * The object browser on the bucket page open now: the folder made through the API is opened by its
 * link, a file is uploaded into it through the page, downloaded through the page and deleted.
 */
async function browseObjects() {
  const object = (key: string) =>
    t.request('GET', '/v1/storage/buckets/console-photos/object', { key: a.pat, query: { key } });
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
    const [cookie] = await b.context.cookies();
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
    const bucketLink = page.getByRole('link', { name: 'console-photos' });
    await bucketLink.waitFor();
    // A folder made through the API before the bucket's page opens (the object browser lists it).
    const put = await t.request('PUT', '/v1/storage/buckets/console-photos/object', {
      key: a.pat,
      query: { key: 'trips/fjord.txt' },
      rawBody: 'made through the API',
    });
    expect(put.status).toBe(200);
    await bucketLink.click();
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
    // Node pools are rows of a form: the first is there; a second is added, then removed again.
    expect(await page.getByLabel('Name of node pool 1').inputValue()).toBe('pool-1');
    await page.getByLabel('Plan of node pool 1').selectOption('k8s-node-s');
    await page.getByLabel('Nodes of node pool 1').fill('2');
    await page.getByRole('button', { name: 'Add another node pool' }).click();
    expect(await page.getByLabel('Name of node pool 2').inputValue()).toBe('pool-2');
    await page.getByRole('button', { name: 'Remove node pool 2' }).click();
    expect(await page.getByLabel('Name of node pool 2').count()).toBe(0);
    await accessible('clusters create form');
    await page.getByRole('button', { name: 'Create cluster' }).click();
    await page.getByRole('link', { name: 'console-k8s' }).click();
    const cluster = (await api('/v1/kubernetes/clusters')).body.clusters[0];
    expect(cluster).toMatchObject({ name: 'console-k8s', status: 'provisioning' });
    expect(
      cluster.node_pools.map((p: { name: string; plan_code: string; count: number }) => [
        p.name,
        p.plan_code,
        p.count,
      ]),
    ).toEqual([['pool-1', 'k8s-node-s', 2]]);
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

  it('makes a presigned link with the chosen expiry; it downloads the object, then expires', async () => {
    expect(
      (await t.request('POST', '/v1/storage/buckets', { key: a.pat, body: { bucket_name: 'shared-docs' } }))
        .status,
    ).toBe(201);
    const put = await t.request('PUT', '/v1/storage/buckets/shared-docs/object', {
      key: a.pat,
      query: { key: 'reports/q3.txt' },
      rawBody: 'the third quarter',
    });
    expect(put.status).toBe(200);
    await page.goto(`${origin}/console/storage/shared-docs?prefix=reports%2F`);
    await page.getByRole('button', { name: 'Share q3.txt' }).click();
    await page.getByLabel('Link works for').selectOption({ label: '1 day' });
    await page.getByRole('button', { name: 'Create link' }).click();
    const link = (await page.locator('output[aria-label="Presigned link"]').textContent())!;
    const url = new URL(link);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('86400');
    expect(url.pathname).toBe('/shared-docs/reports/q3.txt');
    await page.getByText('Anyone with this link can download the object until').waitFor();
    await shot('storage-share-link');
    await accessible('share link');

    const fetched = await fetch(link);
    expect(fetched.status).toBe(200);
    expect(await fetched.text()).toBe('the third quarter');
    // A day and a bit later on the emulator's clock (nothing after this test waits on it), the
    // same link is refused.
    await t.advance(86400 + 60);
    const late = await fetch(link);
    expect(late.status).toBe(403);
    expect(await late.text()).toContain('expired');
  });

  it('signs out: the session ends', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel(/token/i).waitFor();
    expect(await b.context.cookies()).toEqual([]);
  });

  it('saw no script error, CSP refusal or request to another origin', () => {
    expect(b.problems).toEqual([]);
  });
});

function sshString(b: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
}
