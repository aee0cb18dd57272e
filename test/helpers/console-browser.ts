import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { CHROMIUM, hasChromium, launchChromium } from './chromium.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const ARTEFACTS_ROOT = process.env['FJORD_TEST_ARTIFACTS'] ?? join(tmpdir(), 'fjord-test-artifacts');
export const CONSOLE_ARTEFACTS = join(ARTEFACTS_ROOT, 'console');

/** The little of the DOM these page functions read (the tests are compiled without the DOM's types). */
declare const axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Violation[] }> };
declare const document: unknown;
interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Whether a console test file can run; says why not once, when it cannot. */
export function consoleBrowserFound(file: string): boolean {
  const found = hasChromium();
  if (!found) console.warn(`${file}: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  return found;
}

export interface ConsoleBrowserOptions {
  /** How long a step may take before it fails with its own message (the machine is shared). */
  timeout?: number;
  /** The folder under `$FJORD_TEST_ARTIFACTS` the screenshots go to (default `console`). */
  artefacts?: string;
}

/**
 * A Chromium page for a console test file, one browser per file: any script error, Content-
 * Security-Policy refusal or request to an origin not in `origins` (WebSockets compared as the
 * HTTP origin they upgrade) is collected in `problems`, which the file asserts empty at its end.
 */
export class ConsoleBrowser {
  readonly problems: string[] = [];
  private constructor(
    readonly browser: Browser,
    readonly context: BrowserContext,
    readonly page: Page,
    private readonly artefacts: string,
  ) {}

  static async open(origins: () => string[], options: ConsoleBrowserOptions = {}): Promise<ConsoleBrowser> {
    const browser = await launchChromium();
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    // Generous: a step that cannot happen still fails with its own message, and CI shares two cores.
    context.setDefaultTimeout(options.timeout ?? 20_000);
    const page = await context.newPage();
    const artefacts = join(ARTEFACTS_ROOT, options.artefacts ?? 'console');
    const b = new ConsoleBrowser(browser, context, page, artefacts);
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
      if (['blob:', 'data:'].includes(url.protocol)) return;
      const http = url.protocol === 'ws:' ? 'http:' : url.protocol === 'wss:' ? 'https:' : url.protocol;
      if (!origins().includes(`${http}//${url.host}`)) b.problems.push(`request left Fjord: ${r.url()}`);
    });
    mkdirSync(artefacts, { recursive: true });
    return b;
  }

  /** Signs in on the console's sign-in page with a token, and waits for the page it lands on. */
  async signIn(origin: string, token: string, landing = 'Overview') {
    await this.page.goto(`${origin}/console/`);
    await this.page.getByLabel(/token/i).fill(token);
    await this.page.getByRole('button', { name: 'Sign in' }).click();
    await this.page.getByRole('heading', { level: 1, name: landing, exact: true }).waitFor();
  }

  /** Follows an area's link in the navigation and waits for the page's heading. */
  async openArea(name: string) {
    await this.page
      .getByRole('navigation', { name: 'Areas' })
      .getByRole('link', { name, exact: true })
      .click();
    await this.page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
  }

  /** axe-core on the page as it is: no serious or critical violation. */
  /** Deletes the resource on the page open now: its name typed into the confirmation, as the API's `confirm_name`. */
  async deleteHere(what: string, name: string) {
    await this.page.getByRole('button', { name: `Delete ${what}`, exact: true }).click();
    await this.page.getByLabel(`Type ${name} to confirm`).fill(name);
    await this.page.getByRole('button', { name: `Delete ${what} ${name}` }).click();
  }

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

  shot(name: string, options: { fullPage?: boolean } = {}) {
    return this.page.screenshot({ path: join(this.artefacts, `${name}.png`), fullPage: options.fullPage });
  }

  heading() {
    return this.page.getByRole('heading', { level: 1 }).textContent();
  }

  /** For an afterEach: a failed step says what the page showed (its error messages), not only what was missing. */
  async reportFailure(ctx: { task: { result?: { state?: string } } }) {
    if (ctx.task.result?.state !== 'fail') return;
    const text = await this.page
      .locator('main')
      .textContent({ timeout: 1000 })
      .catch(() => '?');
    console.log(`page at failure: ${text}`);
  }

  close() {
    return this.browser.close();
  }
}
