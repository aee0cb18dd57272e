// The console's cold load in Chromium, signed in, against a static page served by the same Fjord.
//
//   npm run bench:console [-- --rounds 7]
//
// One Fjord (api role, emulator, SQLite in a temp dir) and one Chromium. Each round opens a fresh
// browser context (empty cache, no service worker) holding a console session cookie, and loads,
// in turn: `/console/` until its first contentful paint and until the overview's heading is shown
// (the app booted, the session read, the first API answers drawn); and the live events' static
// "Event not found" page (`/live/watch/…`: HTML and a style sheet, no script) until its first
// contentful paint. The table shows min, median and max of each, and the medians' ratios to the
// static page. The figures are the browser's own (`performance` entries), not the harness's.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildConsole } from '../console/build.mjs';
import { CHROMIUM, launchChromium } from '../test/helpers/chromium.js';
import { TestFjord } from '../test/helpers/fjord.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '7' } } });
const ROUNDS = Number(args.rounds);
if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium)`);

await buildConsole();
const t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_LOG_LEVEL: 'warn' });
const customer = await t.customer();
await t.fjord.start(['api']);
const origin = new URL(t.kernel.baseUrl()).origin;
const browser = await launchChromium();

interface Perf {
  getEntriesByName(n: string): { startTime: number }[];
  now(): number;
}
const fcp = () =>
  (globalThis as unknown as { performance: Perf }).performance.getEntriesByName('first-contentful-paint')[0]
    ?.startTime ?? Number.NaN;

const series: Record<string, number[]> = {
  'console: first paint': [],
  'console: overview shown': [],
  'static page: first paint': [],
};
try {
  for (let round = 0; round < ROUNDS; round++) {
    const session = await t.request('POST', '/console/session', { body: { token: customer.pat } });
    const cookie = String(session.headers['set-cookie']).split(';')[0]!.split('=');
    const context = await browser.newContext();
    await context.addCookies([
      { name: cookie[0]!, value: cookie[1]!, url: origin, httpOnly: true, sameSite: 'Strict' },
    ]);
    const page = await context.newPage();
    await page.goto(`${origin}/console/`);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    const shown = await page.evaluate(() =>
      (globalThis as unknown as { performance: Perf }).performance.now(),
    );
    await page.waitForFunction(
      () =>
        !Number.isNaN(
          (globalThis as unknown as { performance: Perf }).performance.getEntriesByName(
            'first-contentful-paint',
          )[0]?.startTime ?? Number.NaN,
        ),
    );
    series['console: first paint']!.push(await page.evaluate(fcp));
    series['console: overview shown']!.push(shown);
    await context.close();

    const plain = await browser.newContext();
    const p2 = await plain.newPage();
    await p2.goto(`${origin}/live/watch/no-such-event`);
    await p2.waitForFunction(
      () =>
        (globalThis as unknown as { performance: Perf }).performance.getEntriesByName(
          'first-contentful-paint',
        ).length > 0,
    );
    series['static page: first paint']!.push(await p2.evaluate(fcp));
    await plain.close();
  }
} finally {
  await browser.close();
  await t.close();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const reference = median(series['static page: first paint']!);
console.log(`\n${ROUNDS} rounds, cold cache each; ms from navigation start\n`);
console.log('target                      min     median  max     ratio to static page');
for (const [name, xs] of Object.entries(series)) {
  const m = median(xs);
  console.log(
    `${name.padEnd(26)}  ${Math.min(...xs)
      .toFixed(0)
      .padStart(5)}  ${m.toFixed(0).padStart(6)}  ${Math.max(...xs)
      .toFixed(0)
      .padStart(5)}   ${(m / reference).toFixed(2)}x`,
  );
}
