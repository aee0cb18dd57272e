import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { launchChromium } from './chromium.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const CONSOLE_ARTEFACTS = join(
  process.env['FJORD_TEST_ARTIFACTS'] ?? join(tmpdir(), 'fjord-test-artifacts'),
  'console',
);

/** The little of the DOM these page functions read (the tests are compiled without the DOM's types). */
declare const axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Violation[] }> };
declare const document: unknown;
interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * A Chromium page for a console test, watched as console.test.ts watches its own: any script
 * error, Content-Security-Policy refusal or request to an origin not in `origins` is collected in
 * `problems`, which the test asserts empty at the end.
 */
export class ConsoleBrowser {
  readonly problems: string[] = [];
  private constructor(
    readonly browser: Browser,
    readonly context: BrowserContext,
    readonly page: Page,
  ) {}

  static async open(origins: () => string[]): Promise<ConsoleBrowser> {
    const browser = await launchChromium();
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    context.setDefaultTimeout(20_000); // generous: the machine is shared, and a step that cannot happen still fails with its own message
    const page = await context.newPage();
    const b = new ConsoleBrowser(browser, context, page);
    page.on('pageerror', (err) => b.problems.push(`script error: ${err.message}`));
    page.on('console', (m) => {
      // A 4xx the page expects is logged by Chromium as a failed load: not a fault.
      if (
        (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) ||
        m.text().includes('Content Security Policy')
      )
        b.problems.push(`console: ${m.text()}`);
    });
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (!['blob:', 'data:'].includes(url.protocol) && !origins().includes(url.origin))
        b.problems.push(`request left Fjord: ${r.url()}`);
    });
    mkdirSync(CONSOLE_ARTEFACTS, { recursive: true });
    return b;
  }

  /** axe-core on the page as it is: no serious or critical violation. */
  async accessible(name: string) {
    const page = this.page;
    if (!(await page.evaluate(() => typeof (globalThis as { axe?: unknown }).axe !== 'undefined')))
      await page.evaluate(AXE); // evaluated by the harness, not the page: the page's CSP stays strict
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

  shot(name: string) {
    return this.page.screenshot({ path: join(CONSOLE_ARTEFACTS, `${name}.png`) });
  }

  heading() {
    return this.page.getByRole('heading', { level: 1 }).textContent();
  }

  close() {
    return this.browser.close();
  }
}
