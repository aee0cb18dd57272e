import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.mjs';
import { ConsoleBrowser, consoleBrowserFound } from '../helpers/console-browser.js';
import { OPERATOR_TOKEN, TestFjord } from '../helpers/fjord.js';

// fjord-test: one store (sqlite). One pass runs it: Chromium on the console is its subject; the API
// under the pages is tested on both stores in the integration tier.

/**
 * The operator's pages in Chromium, signed in with the operator token: customers (create, plan,
 * suspend), the plans' limits, the emulator's clock and inbox, and the reset, each change checked
 * through the admin API and each page checked by axe-core.
 */
const found = consoleBrowserFound('console-operator');
const PAGES = ['Customers', 'Plans and limits', 'Emulator clock', 'Emulator inbox', 'Reset'];

let t: TestFjord;
let b: ConsoleBrowser;
let origin: string;

beforeAll(async () => {
  if (!found) return;
  await buildConsole();
  t = await TestFjord.create({ FJORD_API_PORT: '0' });
  await t.fjord.start(['api']);
  origin = new URL(t.kernel.baseUrl()).origin;
  b = await ConsoleBrowser.open(() => [origin]);
}, 120_000);
afterAll(async () => {
  await b?.close();
  await t?.close();
});

const customers = async () =>
  (await t.operator('GET', '/admin/v1/customers')).body.customers as {
    email: string;
    plan: string;
    status: string;
  }[];

async function open(name: string) {
  await b.page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name, exact: true }).click();
  await expect.poll(() => b.heading()).toBe(name);
}

describe.skipIf(!found)('the operator’s console pages', () => {
  it('signs in with the operator token and lists the operator’s pages', async () => {
    const page = b.page;
    await b.signIn(origin, OPERATOR_TOKEN, 'Customers');
    const links = await page.getByRole('navigation', { name: 'Areas' }).getByRole('link').allTextContents();
    expect(links).toEqual(PAGES);
  });

  it('creates a customer (token shown once), changes its plan, suspends and reactivates it', async () => {
    const page = b.page;
    await page.getByText('Create a customer').click();
    await page.locator('#adminCreateCustomer-email').fill('ops-made@example.test');
    await page.getByRole('button', { name: 'Create customer' }).click();
    const pat = await page.locator('output[aria-label="Customer\'s token"]').textContent();
    expect((await t.request('GET', '/v1/dns/zones', { key: pat! })).status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row', { name: /ops-made@example\.test/ });
    await row.getByLabel('Plan of ops-made@example.test').selectOption('pro');
    await page.getByText('ops-made@example.test is now on the pro plan.').waitFor();
    expect((await customers()).find((c) => c.email === 'ops-made@example.test')?.plan).toBe('pro');
    await row.getByRole('button', { name: 'Suspend ops-made@example.test' }).click();
    await page.getByText('ops-made@example.test is suspended').waitFor();
    expect((await customers()).find((c) => c.email === 'ops-made@example.test')?.status).toBe('suspended');
    expect((await t.request('GET', '/v1/dns/zones', { key: pat! })).status).toBe(401);
    await b.shot('operator-0-customers');
    await b.accessible('customers');
    await row.getByRole('button', { name: 'Reactivate ops-made@example.test' }).click();
    await page.getByText('ops-made@example.test is active again.').waitFor();
    expect((await t.request('GET', '/v1/dns/zones', { key: pat! })).status).toBe(200);
  });

  it('shows each plan’s limits side by side', async () => {
    await open('Plans and limits');
    const table = b.page.getByRole('table', { name: 'Limits by plan' });
    await table.waitFor();
    const { plans, limits } = (await t.operator('GET', '/admin/v1/limits')).body;
    const headers = await table.getByRole('columnheader').allTextContents();
    for (const p of plans) expect(headers.join(' ')).toContain(p);
    // The table is paged: every limit named on this page is one the API lists, with a value per plan.
    const names = await table.locator('tbody tr td:first-child').allTextContents();
    expect(names.length).toBeGreaterThan(1);
    for (const n of names) expect(Object.keys(limits)).toContain(n);
    await b.shot('operator-1-plans');
    await b.accessible('plans');
  });

  it('moves the emulator clock forward, and shows the inbox', async () => {
    const page = b.page;
    await open('Emulator clock');
    await page.getByText(/s ahead of real time/).waitFor();
    await page.getByLabel(/Seconds to move forward/).fill('7200');
    await page.getByRole('button', { name: 'Move the clock' }).click();
    await page.getByText(/\(7200(\.\d+)? s ahead of real time\)/).waitFor();
    expect((await t.operator('GET', '/admin/v1/clock')).body.offset_seconds).toBeGreaterThanOrEqual(7200);
    await b.shot('operator-2-clock');
    await b.accessible('clock');
    await open('Emulator inbox');
    await page
      .getByText(/No messages|Messages/)
      .first()
      .waitFor();
    await b.accessible('inbox');
  });

  it('resets the emulator after the phrase is typed, and signs in again', async () => {
    const page = b.page;
    await open('Reset');
    const reset = page.getByRole('button', { name: 'Reset Fjord' });
    expect(await reset.isDisabled()).toBe(true);
    await page.getByLabel('Type erase everything to confirm').fill('erase everything');
    await b.shot('operator-3-reset');
    await b.accessible('reset');
    await reset.click();
    await page.getByText('Fjord was reset').waitFor();
    expect(await customers()).toEqual([]);
    expect((await t.operator('GET', '/admin/v1/clock')).body.offset_seconds).toBe(0);
    await page.getByRole('button', { name: 'Sign in again' }).click();
    await page.getByLabel(/token/i).waitFor();
  });

  it('saw no script error, CSP refusal or request to another origin', () => {
    expect(b.problems).toEqual([]);
  });
});
