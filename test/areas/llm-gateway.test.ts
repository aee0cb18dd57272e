import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * The language-model gateway with the official `openai` SDK, against two small OpenAI-compatible
 * upstreams written here: `flaky` always fails with 503, `good` answers (streams chunk by chunk,
 * reports usage, can hold answers open to test concurrency and client aborts).
 */

interface Upstream {
  url: string;
  hits: Record<string, number>;
  /** Requests whose connection closed before the answer ended. */
  aborted: number;
  /** While set, chat answers wait for it. */
  gate: Promise<void> | null;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function startUpstream(mode: 'good' | 'flaky'): Promise<Upstream> {
  const up: Upstream = { url: '', hits: {}, aborted: 0, gate: null, close: async () => {} };
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '';
    up.hits[path] = (up.hits[path] ?? 0) + 1;
    const body = await readJson(req);
    if (mode === 'flaky') {
      res.writeHead(503, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { message: 'overloaded' } }));
    }
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (path === '/v1/embeddings') {
      const vector = Array.from({ length: 1024 }, (_, i) => i / 1024);
      // The SDK asks for base64 (packed float32) unless told otherwise, as OpenAI serves it.
      const embedding =
        body['encoding_format'] === 'base64'
          ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
          : vector;
      return json(200, {
        object: 'list',
        model: body['model'],
        data: [{ object: 'embedding', index: 0, embedding }],
        usage: { prompt_tokens: 3, total_tokens: 3 },
      });
    }
    if (path === '/v1/moderations')
      return json(200, {
        id: 'modr-1',
        model: body['model'],
        results: [{ flagged: false, categories: {}, category_scores: {} }],
      });
    if (path !== '/v1/chat/completions') return json(404, { error: { message: 'no such path' } });
    let closed = false;
    res.on('close', () => {
      if (!res.writableEnded) {
        closed = true;
        up.aborted++;
      }
    });
    if (up.gate !== null) await up.gate;
    const words = ['Hello', ' from', ' the', ' upstream', '.'];
    const reasoning = body['model'] === 'upstream-reasoner';
    if (!body['stream'])
      return json(200, {
        id: 'chatcmpl-up',
        object: 'chat.completion',
        created: 1700000000,
        model: body['model'],
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: words.join(''),
              ...(reasoning ? { reasoning_content: 'Thinking it over.' } : {}),
            },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 },
      });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (v: unknown) => res.write(`data: ${JSON.stringify(v)}\n\n`);
    const base = {
      id: 'chatcmpl-up',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: body['model'],
    };
    for (const w of words) {
      if (closed) return;
      send({ ...base, choices: [{ index: 0, delta: { content: w }, finish_reason: null }] });
      await new Promise((r) => setTimeout(r, 15));
    }
    send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  up.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return up;
}

let t: TestFjord;
let good: Upstream;
let flaky: Upstream;
let a: TestCustomer;
let b: TestCustomer;
let client: OpenAI;
let llmKey: { id: string; key: string };

beforeAll(async () => {
  good = await startUpstream('good');
  flaky = await startUpstream('flaky');
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_LIMITS: JSON.stringify({ 'llm.concurrent_requests_per_key': 4 }),
    FJORD_LLM_UPSTREAMS: JSON.stringify([
      { name: 'flaky', url: flaky.url },
      { name: 'good', url: good.url, api_key: 'upstream-secret' },
    ]),
    FJORD_LLM_MODELS: JSON.stringify({
      'tiny-chat': {
        category: 'chat',
        context_tokens: 1024,
        max_output_tokens: 256,
        routes: [
          { upstream: 'flaky', model: 'upstream-tiny' },
          { upstream: 'good', model: 'upstream-tiny' },
        ],
        price_per_1k_input: { NOK: 1 },
        price_per_1k_output: { NOK: 2 },
      },
      reasoner: { category: 'reasoning', routes: [{ upstream: 'good', model: 'upstream-reasoner' }] },
      'tiny-embed': { category: 'embeddings', routes: [{ upstream: 'good', model: 'upstream-embed' }] },
      'tiny-mod': { category: 'moderation', routes: [{ upstream: 'good', model: 'upstream-mod' }] },
    }),
  });
  await t.fjord.start(['api']);
  a = await t.customer();
  b = await t.customer();
  const made = await t.kernel.identity.createServiceKey(a.id, 'llm-api', 'sdk');
  llmKey = { id: made.view.id, key: made.key };
  client = new OpenAI({ apiKey: llmKey.key, baseURL: `${t.kernel.baseUrl()}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await t?.close();
  await good?.close();
  await flaky?.close();
});

describe('LLM gateway with the openai SDK', () => {
  it('lists the aliases and the simulated model, labelled as such', async () => {
    const list = await client.models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toEqual(['fjord-echo', 'reasoner', 'tiny-chat', 'tiny-embed', 'tiny-mod']);
    expect(list.data.find((m) => m.id === 'fjord-echo')).toMatchObject({
      object: 'model',
      owned_by: 'fjord-simulated',
    });
    const same = await t.request('GET', '/v1/llm/models', { key: llmKey.key });
    expect(same.body.data.map((m: { id: string }) => m.id)).toEqual(ids);
  });

  it('answers a completion through the second upstream when the first fails, under the alias', async () => {
    const before = flaky.hits['/v1/chat/completions'] ?? 0;
    const r = await client.chat.completions.create({
      model: 'tiny-chat',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(r.choices[0]!.message.content).toBe('Hello from the upstream.');
    expect(r.model).toBe('tiny-chat');
    expect(r.usage).toEqual({ prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 });
    expect((flaky.hits['/v1/chat/completions'] ?? 0) - before).toBe(2); // first try and one retry
  });

  it('streams chunk by chunk, with usage last when asked for', async () => {
    const stream = await client.chat.completions.create({
      model: 'tiny-chat',
      messages: [{ role: 'user', content: 'Stream please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let usage: unknown = null;
    for await (const chunk of stream) {
      expect(chunk.model).toBe('tiny-chat');
      if (chunk.usage) usage = chunk.usage;
      const c = chunk.choices[0]?.delta?.content;
      if (c) pieces.push(c);
    }
    expect(pieces).toEqual(['Hello', ' from', ' the', ' upstream', '.']);
    expect(usage).toMatchObject({ completion_tokens: expect.any(Number), prompt_tokens: expect.any(Number) });
  });

  it('passes reasoning on as model_output_metadata.reasoning', async () => {
    const r = (await client.chat.completions.create({
      model: 'reasoner',
      messages: [{ role: 'user', content: 'Why?' }],
    })) as unknown as {
      model_output_metadata?: { reasoning: string };
      choices: { message: Record<string, unknown> }[];
    };
    expect(r.model_output_metadata).toEqual({ reasoning: 'Thinking it over.' });
    expect(r.choices[0]!.message).not.toHaveProperty('reasoning_content');
  });

  it('serves embeddings and moderations from models of those categories', async () => {
    const e = await client.embeddings.create({ model: 'tiny-embed', input: 'fjord' });
    expect(e.data[0]!.embedding).toHaveLength(1024);
    expect(e.model).toBe('tiny-embed');
    const m = await client.moderations.create({ model: 'tiny-mod', input: 'hello' });
    expect(m.results[0]!.flagged).toBe(false);
    await expect(client.embeddings.create({ model: 'tiny-chat', input: 'x' })).rejects.toMatchObject({
      status: 400,
      code: 'model_not_supported',
    });
  });

  it('echoes with the simulated model, and says so', async () => {
    const r = await client.chat.completions.create({
      model: 'fjord-echo',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Repeat after me' },
      ],
    });
    expect(r.choices[0]!.message.content).toBe('Repeat after me');
    expect(r.system_fingerprint).toBe('fjord-simulated-echo');
  });

  it('refuses in OpenAI’s error shape, so the SDK raises the right error', async () => {
    await expect(
      client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
      type: 'not_found_error',
    });
    await expect(
      client.chat.completions.create({
        model: 'tiny-chat',
        max_tokens: 10_000,
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 400, code: 'max_tokens_exceeded' });
    await expect(
      client.chat.completions.create({
        model: 'tiny-chat',
        messages: [{ role: 'user', content: 'word '.repeat(2000) }],
      }),
    ).rejects.toMatchObject({ status: 400, code: 'context_length_exceeded' });
    const region = await t.request('POST', '/v1/llm/chat', {
      key: llmKey.key,
      body: { model: 'tiny-chat', region: 'bergen', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(region.status).toBe(422);
    expect(region.body.error).toMatchObject({ code: 'region_unavailable', type: 'invalid_request_error' });
    const noKey = await new OpenAI({ apiKey: 'fjk_wrong', baseURL: client.baseURL, maxRetries: 0 }).models
      .list()
      .catch((e) => e);
    expect(noKey).toMatchObject({ status: 401, type: 'authentication_error' });
  });

  it('admits at most the limit of concurrent requests per key; the next gets 429', async () => {
    let open!: () => void;
    good.gate = new Promise<void>((r) => {
      open = r;
    });
    const ask = () =>
      client.chat.completions
        .create({ model: 'tiny-chat', messages: [{ role: 'user', content: 'wait' }] })
        .then(
          () => 'ok',
          (e: { status?: number; code?: string }) => `${e.status}:${e.code}`,
        );
    const held = good.hits['/v1/chat/completions'] ?? 0;
    const first = Array.from({ length: 4 }, ask);
    // Once all four are held by the upstream, one more must be refused.
    await waitFor(() => (good.hits['/v1/chat/completions'] ?? 0) >= held + 4);
    expect(await ask()).toBe('429:RATE_LIMIT_EXCEEDED');
    good.gate = null;
    open();
    expect(await Promise.all(first)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(await ask()).toBe('ok');
  });

  it('closes the upstream request when the client goes away mid-stream', async () => {
    const before = good.aborted;
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'tiny-chat', messages: [{ role: 'user', content: 'long' }], stream: true },
      { signal: controller.signal },
    );
    for await (const _ of stream) {
      controller.abort();
      break;
    }
    await waitFor(async () => good.aborted > before);
  });

  it('reports usage per model, for the customer only, and enforces a key’s monthly budget', async () => {
    const usage = await t.request('GET', '/v1/llm/usage', { key: llmKey.key });
    expect(usage.status).toBe(200);
    const tiny = usage.body.data.find((d: { model: string }) => d.model === 'tiny-chat');
    expect(tiny.requests).toBeGreaterThanOrEqual(3);
    expect(tiny.cost.NOK).toBeGreaterThan(0);
    expect((await t.request('GET', '/v1/llm/usage', { key: b.pat })).body.data).toEqual([]);

    const set = await t.request('PUT', `/v1/llm/budgets/${llmKey.id}`, {
      key: a.pat,
      body: { monthly_limit: 0.001, currency: 'NOK' },
    });
    expect(set.status).toBe(200);
    expect(set.body.spent_this_month).toBeGreaterThan(0.001);
    await expect(
      client.chat.completions.create({ model: 'tiny-chat', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({
      status: 429,
      code: 'budget_exceeded',
    });
    expect(
      (
        await t.request('PUT', `/v1/llm/budgets/${llmKey.id}`, {
          key: b.pat,
          body: { monthly_limit: 5, currency: 'NOK' },
        })
      ).status,
    ).toBe(404);
    expect((await t.request('DELETE', `/v1/llm/budgets/${llmKey.id}`, { key: a.pat })).status).toBe(204);
    expect(
      (
        await client.chat.completions.create({
          model: 'fjord-echo',
          messages: [{ role: 'user', content: 'back' }],
        })
      ).choices[0]!.message.content,
    ).toBe('back');
  });
});

async function waitFor(check: () => unknown | Promise<unknown>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('timed out waiting');
}
