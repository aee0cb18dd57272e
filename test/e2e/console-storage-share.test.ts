import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.mjs';
import { CHROMIUM } from '../helpers/chromium.js';
import { ConsoleBrowser } from '../helpers/console-browser.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * The object browser's shared links in Chromium: a presigned download link with the expiry chosen
 * on the page, fetched from the S3 endpoint by a plain HTTP client, and refused once it expired.
 */
const found = existsSync(CHROMIUM);

let t: TestFjord;
let a: TestCustomer;
let b: ConsoleBrowser;
let origin: string;

beforeAll(async () => {
  if (!found) return;
  await buildConsole();
  t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_S3_PORT: '0' });
  a = await t.customer();
  await t.fjord.start(['api', 's3']);
  origin = new URL(t.kernel.baseUrl()).origin;
  b = await ConsoleBrowser.open(() => [origin]);
}, 120_000);
afterAll(async () => {
  await b?.close();
  await t?.close();
});

describe.skipIf(!found)('shared links in the object browser', () => {
  it('makes a presigned link with the chosen expiry; it downloads the object, then expires', async () => {
    const page = b.page;
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
    await page.goto(`${origin}/console/`);
    await page.getByLabel(/token/i).fill(a.pat);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => b.heading()).toBe('Overview');
    await page.goto(`${origin}/console/storage/shared-docs?prefix=reports%2F`);
    await page.getByRole('button', { name: 'Share q3.txt' }).click();
    await page.getByLabel('Link works for').selectOption({ label: '1 day' });
    await page.getByRole('button', { name: 'Create link' }).click();
    const link = (await page.locator('output[aria-label="Presigned link"]').textContent())!;
    const url = new URL(link);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('86400');
    expect(url.pathname).toBe('/shared-docs/reports/q3.txt');
    await page.getByText('Anyone with this link can download the object until').waitFor();
    await b.shot('storage-share-link');
    await b.accessible('share link');

    const fetched = await fetch(link);
    expect(fetched.status).toBe(200);
    expect(await fetched.text()).toBe('the third quarter');
    // A day and a bit later on the emulator's clock, the same link is refused.
    await t.advance(86400 + 60);
    const late = await fetch(link);
    expect(late.status).toBe(403);
    expect(await late.text()).toContain('expired');
  });

  it('saw no script error, CSP refusal or request to another origin', () => {
    expect(b.problems).toEqual([]);
  });
});
