import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * Chatbots over a knowledge base: retrieval picks the right passage, the answer cites it, the
 * stream's events come in the stated order, a session carries history to the model, and bots
 * are the customer's own. A small OpenAI-compatible upstream stands in for the model; a second
 * bot with no real model answers with extracts.
 */

interface Upstream {
  url: string;
  requests: { messages: { role: string; content: string }[] }[];
  failNext: boolean;
  close(): Promise<void>;
}

async function startUpstream(): Promise<Upstream> {
  const up: Upstream = { url: '', requests: [], failNext: false, close: async () => {} };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const body = raw ? JSON.parse(raw) : {};
    if (req.url === '/pages/fjords.html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(
        '<html><head><title>Fjords of Norway</title><script>var x=1</script></head><body><p>The Sognefjord is the longest fjord in Norway, 205 kilometres.</p></body></html>',
      );
    }
    up.requests.push(body);
    const answer = 'Backups run nightly at 02:00 [1].';
    if (up.failNext) {
      up.failNext = false;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'Back' } }] })}\n\n`,
      );
      // After the first bytes: the answer has started, so nothing may be retried.
      setTimeout(() => res.destroy(), 30);
      return;
    }
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of answer.match(/\S+\s*/g)!)
        res.write(
          `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`,
        );
      res.write(
        `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 50, completion_tokens: 9, total_tokens: 59 } })}\n\n`,
      );
      return res.end('data: [DONE]\n\n');
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 50, completion_tokens: 9, total_tokens: 59 },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  up.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return up;
}

let t: TestFjord;
let up: Upstream;
let a: TestCustomer;
let b: TestCustomer;
let key: string;

const DOCS = [
  {
    title: 'Backups',
    text: 'Database backups run nightly at 02:00 UTC and are kept for 30 days.\n\nRestores take about ten minutes.',
  },
  {
    title: 'Billing',
    text: 'Invoices are sent on the first day of each month. Payment is due within 14 days.',
  },
  {
    title: 'Support',
    text: 'Support answers e-mail within one business day. Enterprise plans have phone support.',
  },
];

async function sse(body: unknown): Promise<{ status: number; events: Record<string, unknown>[] }> {
  const res = await fetch(`${t.kernel.baseUrl()}/v1/chatbot/api/chat/stream`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.headers.get('content-type')?.includes('text/event-stream'))
    return { status: res.status, events: [JSON.parse(text)] };
  const events = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);
  return { status: res.status, events };
}

beforeAll(async () => {
  up = await startUpstream();
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_S3_PORT: '0',
    FJORD_WEBHOOK_ALLOW_PRIVATE: 'true',
    FJORD_LLM_UPSTREAMS: JSON.stringify([{ name: 'local', url: `${up.url}/v1` }]),
    FJORD_LLM_MODELS: JSON.stringify({
      helper: { category: 'chat', routes: [{ upstream: 'local', model: 'm' }] },
    }),
  });
  await t.fjord.start(['api', 's3']);
  a = await t.customer();
  b = await t.customer();
  key = (await t.kernel.identity.createServiceKey(a.id, 'chatbot', 'site widget')).key;
  const bot = await t.request('POST', '/v1/chatbot/bots', {
    key: a.pat,
    body: { name: 'Help Desk', system_prompt: 'You are Fjord’s help desk.' },
  });
  expect(bot.status).toBe(201);
  expect(bot.body).toMatchObject({ slug: 'help-desk', model: 'helper', simulated: false, status: 'active' });
  for (const doc of DOCS) {
    const s = await t.request('POST', '/v1/chatbot/bots/help-desk/sources', {
      key: a.pat,
      body: { kind: 'text', ...doc },
    });
    expect(s.status).toBe(201);
    expect(s.body.status).toBe('pending');
  }
  await t.kernel.jobs.drain();
});

afterAll(async () => {
  await t?.close();
  await up?.close();
});

describe('chatbots', () => {
  it('indexes the sources and lists only active bots through the API', async () => {
    const sources = await t.request('GET', '/v1/chatbot/bots/help-desk/sources', { key: a.pat });
    expect(sources.body.sources.map((s: { status: string }) => s.status)).toEqual([
      'ready',
      'ready',
      'ready',
    ]);
    await t.request('POST', '/v1/chatbot/bots', { key: a.pat, body: { name: 'Draft', status: 'draft' } });
    const listed = await t.request('GET', '/v1/chatbot/api/bots', { key });
    expect(listed.body.bots).toEqual([
      { id: expect.any(String), slug: 'help-desk', name: 'Help Desk', status: 'active', language: 'en' },
    ]);
  });

  it('answers through the model, citing the passage it retrieved, and keeps the session', async () => {
    const r = await t.request('POST', '/v1/chatbot/api/chat', {
      key,
      body: { bot_id: 'help-desk', message: 'When do backups run?' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      session_id: expect.any(String),
      message_id: expect.any(String),
      response: 'Backups run nightly at 02:00 [1].',
      tokens_input: 50,
      tokens_output: 9,
      response_time_ms: expect.any(Number),
    });
    expect(r.body.citations[0]).toMatchObject({ title: 'Backups', url: null });
    expect(r.body.citations[0].snippet).toContain('nightly at 02:00');
    const system = up.requests.at(-1)!.messages[0]!;
    expect(system.role).toBe('system');
    expect(system.content).toContain('nightly at 02:00');

    const next = await t.request('POST', '/v1/chatbot/api/chat', {
      key,
      body: {
        bot_id: r.body.session_id ? 'help-desk' : '',
        message: 'And restores?',
        session_id: r.body.session_id,
      },
    });
    expect(next.body.session_id).toBe(r.body.session_id);
    const sent = up.requests.at(-1)!.messages.map((m) => m.content);
    expect(sent).toContain('When do backups run?');
    expect(sent).toContain('Backups run nightly at 02:00 [1].');
  });

  it('streams meta, tokens and done in that order; an upstream failure mid-answer ends with error', async () => {
    const { events } = await sse({ bot_id: 'help-desk', message: 'When do backups run?' });
    expect(events[0]).toMatchObject({ type: 'meta', data: { session_id: expect.any(String) } });
    expect((events[0]!['data'] as { citations: { title: string }[] }).citations[0]).toEqual({
      title: 'Backups',
      url: null,
    });
    expect(events.at(-1)).toEqual({ type: 'done' });
    const tokens = events.slice(1, -1);
    expect(tokens.every((e) => e['type'] === 'token')).toBe(true);
    expect(tokens.map((e) => e['content']).join('')).toBe('Backups run nightly at 02:00 [1].');

    up.failNext = true;
    const failed = await sse({ bot_id: 'help-desk', message: 'When do backups run?' });
    expect(failed.events[0]!['type']).toBe('meta');
    expect(failed.events.at(-1)).toMatchObject({ type: 'error', content: expect.any(String) });
    expect(failed.events.some((e) => e['type'] === 'done')).toBe(false);
  });

  it('answers with extracts, saying so, when no real model is behind the bot', async () => {
    await t.request('POST', '/v1/chatbot/bots', {
      key: a.pat,
      body: { name: 'Offline', model: 'fjord-echo' },
    });
    await t.request('POST', '/v1/chatbot/bots/offline/sources', {
      key: a.pat,
      body: { kind: 'text', ...DOCS[1]! },
    });
    await t.kernel.jobs.drain();
    const r = await t.request('POST', '/v1/chatbot/api/chat', {
      key,
      body: { bot_id: 'offline', message: 'When is payment due?' },
    });
    expect(r.body.response).toMatch(/^Simulated answer/);
    expect(r.body.response).toContain('within 14 days');
    expect(r.body.citations[0].title).toBe('Billing');
  });

  it('indexes a web page, text only', async () => {
    const s = await t.request('POST', '/v1/chatbot/bots/help-desk/sources', {
      key: a.pat,
      body: { kind: 'url', url: `${up.url}/pages/fjords.html` },
    });
    await t.kernel.jobs.drain();
    const ready = await t.request('GET', `/v1/chatbot/bots/help-desk/sources/${s.body.id}`, { key: a.pat });
    expect(ready.body).toMatchObject({ status: 'ready', title: 'Fjords of Norway', chunks: 1 });
    const r = await t.request('POST', '/v1/chatbot/api/chat', {
      key,
      body: { bot_id: 'help-desk', message: 'longest fjord Sognefjord' },
    });
    expect(r.body.citations[0]).toMatchObject({
      title: 'Fjords of Norway',
      url: `${up.url}/pages/fjords.html`,
    });
    expect(r.body.citations[0].snippet).not.toContain('var x');
  });

  it('indexes a Markdown file from the customer’s own bucket, and only from its own', async () => {
    const bucket = `kb-${Date.now().toString(36)}`;
    const made = await t.request('POST', '/v1/storage/buckets', {
      key: a.pat,
      body: { bucket_name: bucket },
    });
    const s3 = new S3Client({
      endpoint: made.body.endpoint,
      region: 'eu-north-1',
      forcePathStyle: true,
      credentials: { accessKeyId: made.body.access_key, secretAccessKey: made.body.secret_key },
      maxAttempts: 1,
    });
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'docs/vacation.md',
        Body: '# Vacation\n\nEmployees get 25 vacation days a year.',
        ContentType: 'text/markdown',
      }),
    );
    const s = await t.request('POST', '/v1/chatbot/bots/help-desk/sources', {
      key: a.pat,
      body: { kind: 'object', bucket, key: 'docs/vacation.md', title: 'Vacation policy' },
    });
    expect(s.status, s.text).toBe(201);
    const other = await t.request('POST', '/v1/chatbot/bots/help-desk/sources', {
      key: a.pat,
      body: { kind: 'object', bucket: 'someone-elses-bucket', key: 'x.md' },
    });
    await t.kernel.jobs.drain();
    expect(
      (await t.request('GET', `/v1/chatbot/bots/help-desk/sources/${s.body.id}`, { key: a.pat })).body,
    ).toMatchObject({
      status: 'ready',
      url: `s3://${bucket}/docs/vacation.md`,
    });
    expect(
      (await t.request('GET', `/v1/chatbot/bots/help-desk/sources/${other.body.id}`, { key: a.pat })).body
        .status,
    ).toBe('failed');
    const r = await t.request('POST', '/v1/chatbot/api/chat', {
      key,
      body: { bot_id: 'help-desk', message: 'How many vacation days?' },
    });
    expect(r.body.citations[0]).toMatchObject({ title: 'Vacation policy' });
  });

  it('keeps bots to their customer', async () => {
    const bKey = (await t.kernel.identity.createServiceKey(b.id, 'chatbot', null)).key;
    expect((await t.request('GET', '/v1/chatbot/api/bots', { key: bKey })).body.bots).toEqual([]);
    const r = await t.request('POST', '/v1/chatbot/api/chat', {
      key: bKey,
      body: { bot_id: 'help-desk', message: 'hi' },
    });
    expect(r.status).toBe(404);
    expect(r.body.detail.code).toBe('bot_not_found');
    expect((await t.request('GET', '/v1/chatbot/bots/help-desk', { key: b.pat })).status).toBe(404);
  });
});
