import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.mjs';
import type { VpsService } from '../../src/areas/vps/service.js';
import { serviceOf } from '../../src/areas/wiring.js';
import { CHROMIUM, hasChromium } from '../helpers/chromium.js';
import { ConsoleBrowser } from '../helpers/console-browser.js';
import { eventually } from '../helpers/eventually.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

// fjord-test: one store (postgres). One pass runs it: Chromium, xterm.js and a namespace server
// are its subject; the sessions and grants under it are tested on both stores by
// test/kernel/console-terminal.test.ts.

/**
 * The server's web terminal in Chromium: a real Debian server of the namespace driver, the
 * terminal opened on its console page, a command typed into xterm.js and its output read back
 * from the screen; the key Fjord logged in with is gone from the server afterwards. The Debian
 * root is the one the vps namespace tier builds (shared directory). Skipped, with the reason,
 * where Chromium is missing or the namespace driver cannot run.
 */
const TEMPLATES = join(tmpdir(), 'fjord-vps-templates');

function skipReason(): string | null {
  if (!hasChromium()) return `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
  if (process.getuid?.() !== 0) return 'not root: namespace servers need root';
  try {
    execFileSync('sh', ['-c', 'command -v debootstrap && command -v nsenter'], { stdio: 'pipe' });
    execFileSync('unshare', ['--mount', '--uts', '--pid', '--net', '--fork', 'true'], { stdio: 'pipe' });
  } catch (err) {
    return `the namespace driver cannot run here: ${(err as Error).message}`;
  }
  return null;
}
const skip = skipReason();
if (skip) console.warn(`console-terminal: skipped, ${skip}`);

let t: TestFjord;
let a: TestCustomer;
let b: ConsoleBrowser;
let origin: string;

beforeAll(async () => {
  if (skip) return;
  await buildConsole();
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_VPS_DRIVER: 'namespace',
    FJORD_VPS_TEMPLATE_DIR: TEMPLATES,
  });
  a = await t.customer();
  await t.fjord.start(['api']);
  origin = new URL(t.kernel.baseUrl()).origin;
  // The terminal's WebSocket goes to Fjord's own origin: a socket elsewhere is a problem too.
  b = await ConsoleBrowser.open(() => [origin]);
}, 120_000);
afterAll(async () => {
  await b?.close();
  await (serviceOf(t?.fjord.areas ?? new Map(), 'vps') as VpsService | undefined)?.driver.destroyAll?.();
  await t?.close();
});

describe.skipIf(skip !== null)('the virtual server terminal in Chromium', () => {
  it('opens a shell on a namespace server, runs a command, and leaves no login key behind', async () => {
    const created = await t.request('POST', '/v1/vps', {
      key: a.pat,
      body: { hostname: 'term.example.test', plan_code: 'vps-1-2', region: 'oslo', os_template: 'debian-12' },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    // The first run on a machine builds the Debian root (debootstrap, about a minute).
    await eventually(async () => {
      const r = await t.request('GET', `/v1/vps/${id}`, { key: a.pat });
      if (r.body.status !== 'running') throw new Error(`server is ${r.body.status}`);
    }, 600_000);
    const page = b.page;
    await b.signIn(origin, a.pat);
    await page.goto(`${origin}/console/servers/${id}`);
    await page.getByRole('button', { name: 'Open terminal' }).click();
    await expect
      .poll(() =>
        page
          .getByRole('status')
          .filter({ hasText: /Connected|Disconnected/ })
          .textContent(),
      )
      .toBe('Connected.');
    // xterm.js draws each row as a div: the screen's text, a line per row.
    // xterm.js draws nothing while it is off screen, so the screen is looked at as a user would:
    // scrolled into view first (the charts above it may still grow and push it down).
    const screen = async () => {
      await page.getByRole('application', { name: 'Server terminal' }).scrollIntoViewIfNeeded();
      return (await page.locator('.xterm-rows > div').allTextContents()).map((r) => r.trimEnd()).join('\n');
    };
    // The prompt first (sshd's shell is up), then the command. The login goes through the relay's
    // ssh handshake, which on two busy cores has taken more than 20 s.
    // A failure shows the page's status too: a refused or failed login says why there.
    const statusAndScreen = async () =>
      `${await page.getByRole('status').allTextContents()}\n${await screen()}`;
    await expect.poll(statusAndScreen, { timeout: 60_000 }).toMatch(/#\s*$/m);
    await page.locator('.xterm-helper-textarea').focus();
    await page.keyboard.type('echo fjord-$((6*7)) on $(hostname)');
    await page.keyboard.press('Enter');
    await expect.poll(() => screen(), { timeout: 20_000 }).toMatch(/^fjord-42 on term\.example\.test$/m);

    // The one-connection key was taken out of the server once the login succeeded.
    await page.keyboard.type(
      'for i in $(seq 100); do grep -q fjord-terminal- /root/.ssh/authorized_keys || break; sleep 0.1; done; echo keys-left=$(grep -c fjord-terminal- /root/.ssh/authorized_keys)',
    );
    await page.keyboard.press('Enter');
    await expect.poll(() => screen(), { timeout: 20_000 }).toMatch(/^keys-left=0$/m);
    await b.shot('vps-terminal', { fullPage: true });

    // Exiting the shell closes the socket and the page says so; Reconnect opens a new session.
    await page.keyboard.type('exit');
    await page.keyboard.press('Enter');
    await expect
      .poll(() =>
        page
          .getByRole('status')
          .filter({ hasText: /Connected|Disconnected/ })
          .textContent(),
      )
      .toMatch(/^Disconnected\. The session ended\.$/);
    await page.getByRole('button', { name: 'Reconnect' }).click();
    await expect
      .poll(() =>
        page
          .getByRole('status')
          .filter({ hasText: /Connected|Disconnected/ })
          .textContent(),
      )
      .toBe('Connected.');
    expect(b.problems).toEqual([]);
  }, 700_000);
});
