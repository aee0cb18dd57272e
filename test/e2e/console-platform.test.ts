import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.mjs';
import { runReferenceWorker } from '../../src/areas/gpu/reference-worker.js';
import { ConsoleBrowser, consoleBrowserFound } from '../helpers/console-browser.js';
import { eventually } from '../helpers/eventually.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { clipDir, speak } from '../helpers/speech.js';

// fjord-test: one store (sqlite). One pass runs it: Chromium on the console is its subject; the
// API under the pages is tested on both stores in the integration tier.

/**
 * The platform areas' console pages in Chromium, each with a real flow checked through the API:
 * a flite-spoken file uploaded from the page (with progress) and its transcript following the
 * audio; a playground answer streamed token by token from a local OpenAI-compatible upstream; a
 * chatbot answer with its citation; a GPU image from the reference worker in the gallery; an SMS
 * reaching DELIVERED in the log; an IP lookup counted against the quota; verification and
 * contacts. axe-core on every page; any script error, CSP refusal or request to another origin
 * fails the file. Screenshots go to `$FJORD_TEST_ARTIFACTS/console-platform`.
 */
const found = consoleBrowserFound('console-platform');
const SENTENCE = 'the quick brown fox jumps over the lazy dog';
const ANSWER = ['Fjords', ' are', ' long', ',', ' narrow', ' inlets', ' of', ' the', ' sea', '.'];

/** An OpenAI-compatible upstream that writes its answer a piece at a time, with pauses between. */
async function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    const system = String(body.messages?.[0]?.content ?? '');
    const pieces = system.includes('help desk') ? ['Backups', ' run', ' nightly', ' [1].'] : ANSWER;
    const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    const base = { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm' };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [
            { index: 0, message: { role: 'assistant', content: pieces.join('') }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 20, completion_tokens: pieces.length, total_tokens: 20 + pieces.length },
        }),
      );
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const piece of pieces) {
      res.write(chunk({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] }));
      await new Promise((r) => setTimeout(r, 120));
    }
    res.write(
      chunk({
        ...base,
        choices: [],
        usage: { prompt_tokens: 20, completion_tokens: pieces.length, total_tokens: 20 + pieces.length },
      }),
    );
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let t: TestFjord;
let a: TestCustomer;
let up: { url: string; close(): Promise<void> };
let b: ConsoleBrowser;
let page: ConsoleBrowser['page'];
let origin: string;
let workerToken: string;

beforeAll(async () => {
  if (!found) return;
  up = await startUpstream();
  await buildConsole();
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_S3_PORT: '0',
    FJORD_SMS_SANDBOX_DELIVERY_SECONDS: '5',
    FJORD_LLM_UPSTREAMS: JSON.stringify([{ name: 'local', url: `${up.url}/v1` }]),
    FJORD_LLM_MODELS: JSON.stringify({
      'fjord-small': {
        category: 'chat',
        routes: [{ upstream: 'local', model: 'm' }],
      },
    }),
    FJORD_RATE_LIMITS: JSON.stringify({ gpu: { points: 10_000, duration: 60 } }),
  });
  a = await t.customer();
  await t.fjord.start(['api', 's3']);
  origin = new URL(t.kernel.baseUrl()).origin;
  workerToken = (
    await t.operator('POST', '/admin/v1/gpu/workers', { name: 'ref-1', engines: ['reference-image'] })
  ).body.token;
  b = await ConsoleBrowser.open(() => [origin], { artefacts: 'console-platform' });
  page = b.page;
  await b.signIn(origin, a.pat);
}, 120_000);
afterAll(async () => {
  await b?.close();
  await t?.close();
  await up?.close();
});

afterEach((ctx) => b?.reportFailure(ctx));

const shot = (name: string) => b.shot(name, { fullPage: true });
const accessible = (name: string) => b.accessible(name);
const api = (url: string) => t.request('GET', url, { key: a.pat });
const openArea = (name: string) => b.openArea(name);
/** Runs queued background jobs until `done` holds (the pages poll; nothing here waits on time). */
async function drainUntil(done: () => Promise<boolean>) {
  await eventually(async () => {
    await t.kernel.jobs.drain();
    if (!(await done())) throw new Error('not done yet');
  }, 60_000);
}

describe.skipIf(!found)('the platform areas in the console', () => {
  it('uploads a spoken file with progress, and its transcript follows the audio as it plays', async () => {
    const wav = speak(clipDir(), SENTENCE, 'wav', 'fox');
    await openArea('Speech');
    await page.getByLabel('Audio or video file').setInputFiles(wav);
    await page.getByRole('button', { name: 'Upload and transcribe' }).click();
    await page
      .getByRole('heading', { level: 1, name: 'Speech: fox-source.wav' })
      .waitFor({ timeout: 30_000 });
    expect(await page.locator('#speech-progress').count()).toBe(0); // the job page, past the upload
    const jobs = (await api('/v1/transcript/jobs')).body.jobs;
    expect(jobs).toHaveLength(1);
    const id = jobs[0].job_id;
    await drainUntil(async () => (await api(`/v1/transcript/jobs/${id}`)).body.status === 'ready');
    const words = page.locator('.transcript button.word');
    await words.first().waitFor();
    const texts = await words.allTextContents();
    expect(texts.join(' ')).toMatch(/fox|dog|lazy/);
    // A click on a word seeks there and highlights it; playing moves the highlight along. The first
    // word highlighted is taken in the page as it is drawn: playing moves the highlight on within
    // a word's length, sooner than a poll from here may look on a loaded machine.
    type Shown = { textContent: string | null; querySelector(selector: string): Shown | null };
    type Watch = {
      MutationObserver: new (
        seen: () => void,
      ) => { observe(node: Shown, options: object): void; disconnect(): void };
      firstHighlight?: Promise<string>;
    };
    await page.locator('.transcript').evaluate((section) => {
      const w = globalThis as unknown as Watch;
      w.firstHighlight = new Promise((resolve) => {
        const observer = new w.MutationObserver(() => {
          const now = (section as unknown as Shown).querySelector('.word.now');
          if (!now) return;
          observer.disconnect();
          resolve(now.textContent ?? '');
        });
        observer.observe(section as unknown as Shown, {
          subtree: true,
          childList: true,
          attributes: true,
          attributeFilter: ['class'],
        });
      });
    });
    await words.nth(1).click();
    expect(await page.evaluate(() => (globalThis as unknown as Watch).firstHighlight)).toBe(texts[1]);
    const seen = new Set<string>();
    await expect
      .poll(
        async () => {
          const now = await page.locator('.word[aria-current=true]').allTextContents();
          for (const w of now) seen.add(w);
          return seen.size;
        },
        { timeout: 15_000, interval: 50 },
      )
      .toBeGreaterThanOrEqual(3);
    const time = await page
      .locator('audio')
      .evaluate((el) => (el as unknown as { currentTime: number }).currentTime);
    expect(time).toBeGreaterThan(0);
    await page.locator('audio').evaluate((el) => (el as unknown as { pause(): void }).pause());
    await shot('speech-transcript');
    await accessible('speech');
    await page.getByRole('button', { name: 'Export SRT' }).click();
    const link = page.getByRole('link', { name: 'Download SRT' });
    const href = (await link.getAttribute('href'))!;
    expect(new URL(href).origin).toBe(origin);
    const srt = await fetch(href);
    expect(await srt.text()).toMatch(/-->/);
  });

  it('streams a playground answer token by token, with its tokens, and charts the usage', async () => {
    await openArea('Language models');
    await page.getByLabel('Model').selectOption('fjord-small');
    await page.getByLabel('Message').fill('What is a fjord?');
    await page.getByRole('button', { name: 'Send' }).click();
    // Partial answers are seen on the page before the whole one.
    const partials = new Set<string>();
    await expect
      .poll(
        async () => {
          const text = (await page.getByTestId('answer').last().textContent()) ?? '';
          if (text) partials.add(text);
          return text;
        },
        { timeout: 15_000, interval: 30 },
      )
      .toBe(ANSWER.join(''));
    expect(partials.size).toBeGreaterThanOrEqual(3);
    await page.getByText(`20 prompt + ${ANSWER.length} completion tokens`).waitFor();
    const usage = (await api('/v1/llm/usage')).body.data;
    expect(usage).toEqual([
      expect.objectContaining({ model: 'fjord-small', requests: 1, completion_tokens: ANSWER.length }),
    ]);
    await page.getByRole('img', { name: /Tokens this month: fjord-small 30 tokens/ }).waitFor();
    await shot('llm-playground');
    await accessible('language models');
  });

  it('creates a bot, indexes a text source, and shows the streamed answer with its citation', async () => {
    await openArea('Chatbots');
    await page.getByLabel('Name').fill('Help Desk');
    await page.getByLabel('System prompt').fill('You are the help desk.');
    await page.getByRole('button', { name: 'Create bot' }).click();
    await page.getByRole('heading', { level: 1, name: 'Chatbots: Help Desk' }).waitFor();
    await page.getByLabel('Title', { exact: true }).fill('Backups');
    await page
      .getByLabel('Text', { exact: true })
      .fill('Database backups run nightly at 02:00 UTC and are kept for 30 days.');
    await page.getByRole('button', { name: 'Add source' }).click();
    await page.getByRole('cell', { name: 'Backups', exact: true }).waitFor();
    await drainUntil(async () =>
      (await api('/v1/chatbot/bots/help-desk/sources')).body.sources.every(
        (s: { status: string }) => s.status === 'ready',
      ),
    );
    await page.getByRole('table', { name: 'Knowledge sources' }).getByText('ready').waitFor();
    await page.getByLabel('Message to the bot').fill('When do backups run?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await expect
      .poll(() => page.getByTestId('bot-answer').last().textContent())
      .toBe('Backups run nightly [1].');
    await page.getByRole('list', { name: 'Sources of this answer' }).getByText('Backups').waitFor();
    await page.getByText(/^Session /).waitFor();
    await shot('chatbot-chat');
    await accessible('chatbot');
  });

  it('shows the cost before submit, why a job waits, and the finished image in the gallery', async () => {
    await openArea('GPU jobs');
    await page.getByLabel('Engine', { exact: true }).selectOption('reference-image');
    await page.getByLabel('Prompt').fill('a fjord at dawn');
    await page.getByLabel('Aspect ratio').selectOption('16:9');
    await expect
      .poll(() => page.getByTestId('gpu-estimate').textContent())
      .toMatch(/Estimated cost: 0 NOK \(1 image/);
    await page.getByRole('button', { name: 'Submit job' }).click();
    // No worker has called yet: the queue says why the job waits.
    await page.getByRole('cell', { name: /No worker serves the engine reference-image/ }).waitFor();
    // The API's reason is a sentence with its own full stop: the notice ends in one, not two.
    const notice = await page
      .getByRole('status')
      .filter({ hasText: /^Job \S+ is queued/ })
      .textContent();
    expect(notice).toMatch(/No worker serves the engine reference-image.*[^.]\.$/);
    await shot('gpu-waiting');
    expect(
      await runReferenceWorker({
        baseUrl: t.kernel.baseUrl(),
        token: workerToken,
        maxJobs: 1,
        pollSeconds: 0.05,
      }),
    ).toBe(1);
    const image = page.getByRole('list', { name: 'Finished jobs' }).locator('img');
    await image.waitFor({ timeout: 15_000 });
    await expect
      .poll(() => image.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(512);
    const jobs = (await api('/v1/gpu/jobs')).body;
    expect(jobs.map((j: { status: string }) => j.status)).toEqual(['completed']);
    await shot('gpu-gallery');
    await accessible('gpu jobs');
  });

  it('counts segments and price as you type, sends, and shows the SMS reaching DELIVERED', async () => {
    await openArea('SMS');
    await page.getByText('Add a sender profile').click();
    await page.getByLabel('Profile name').fill('Main');
    await page.getByLabel('Sender (a number or up to 11 letters)').fill('+4791000001');
    await page.getByRole('button', { name: 'Add profile' }).click();
    await page.getByRole('cell', { name: '+4791000001' }).waitFor();
    await page.getByLabel('To (E.164 numbers, comma-separated)').fill('+4791234567');
    await page.getByLabel('Message', { exact: true }).fill('x'.repeat(161));
    await expect
      .poll(() => page.getByTestId('sms-meter').textContent())
      .toMatch(/161 characters · GSM-7 · 2 segments/);
    await page.getByLabel('Message', { exact: true }).fill('Hei Åse 😀');
    await expect
      .poll(() => page.getByTestId('sms-meter').textContent())
      .toMatch(/UCS-2 \(Unicode\) · 1 segment\b/);
    await page.getByLabel('Message', { exact: true }).fill('Hei Åse, møte kl 10');
    await page.getByRole('button', { name: 'Send message' }).click();
    await page.getByText('Sent to 1 recipient: 1 units.').waitFor();
    await t.advance(0);
    await t.advance(5);
    const messages = (await api('/v1/sms/messages')).body.messages;
    expect(messages.map((m: { status: string }) => m.status)).toEqual(['DELIVERED']);
    await page.getByRole('table', { name: 'Messages' }).getByText('DELIVERED').waitFor({ timeout: 15_000 });
    await shot('sms-log');
    await accessible('sms');
  });

  it('looks up an address, counted against today’s quota', async () => {
    await openArea('IP intelligence');
    await page.getByLabel('IP address').fill('192.0.2.1');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('heading', { name: /^192\.0\.2\.1/ }).waitFor();
    await page.getByText(/Threat: .* score \d+ of 100/).waitFor();
    expect((await api('/v1/ip/subscription')).body.requests_today).toBe(1);
    await page.getByText(/Today: 1 of/).waitFor();
    await shot('ip-lookup');
    await accessible('ip intelligence');
  });

  it('starts a verification and shows the session with its attempts', async () => {
    await openArea('Verification');
    await page.getByLabel('Phone number (E.164)').fill('+4791234567');
    await page.getByRole('button', { name: 'Send code' }).click();
    const row = page.getByRole('table', { name: 'Verification sessions' }).getByRole('row').nth(1);
    await row.waitFor();
    const id = (await row.getByRole('cell').first().textContent())!;
    await page.getByLabel('Session id').fill(id);
    await page.getByLabel('Code', { exact: true }).fill('000000');
    await page.getByRole('button', { name: 'Check code' }).click();
    await page.getByText(/Not verified .* attempts left/).waitFor();
    expect((await api(`/v1/verify/status/${id}`)).body.attempt_count).toBe(1);
    await expect
      .poll(() => row.getByRole('cell').nth(4).textContent(), { timeout: 10_000 })
      .toMatch(/^1 of \d+$/);
    await accessible('verification');
  });

  it('imports contacts from CSV, groups one, and exports them', async () => {
    await openArea('Contacts');
    await page.getByText('Import or export CSV').click();
    await page.getByLabel('Import a CSV file').setInputFiles({
      name: 'people.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(
        'name,phone_number,email,tags\r\n"Nordmann, Ola",+4791234567,ola@example.test,family;oslo\r\nKari,not a number,,\r\n',
      ),
    });
    await page.getByText('Imported 1 of 2 contacts.').waitFor();
    await page.getByText(/^Line 3: /).waitFor();
    const contacts = (await api('/v1/contacts')).body.contacts;
    expect(contacts.map((c: { name: string; tags: string[] }) => [c.name, c.tags])).toEqual([
      ['Nordmann, Ola', ['family', 'oslo']],
    ]);
    await page.getByText('Create a group').click();
    await page.getByLabel('Group name').fill('Family');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.getByRole('cell', { name: 'Family', exact: true }).waitFor();
    await page.getByText('Add a contact to a group').click();
    await page.getByRole('button', { name: 'Add to group' }).click();
    await expect.poll(async () => (await api('/v1/contacts/groups')).body.groups?.[0]?.member_count).toBe(1);
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const file = await (await download).path();
    expect(readFileSync(file, 'utf8')).toContain(
      '"Nordmann, Ola",person,,+4791234567,ola@example.test,family;oslo',
    );
    await shot('contacts');
    await accessible('contacts');
  });

  it('saw no script error, CSP refusal or request to another origin', () => {
    expect(b.problems).toEqual([]);
  });
});
