import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestFjord } from '../helpers/fjord.js';

/**
 * The gateway in front of an upstream that misbehaves on purpose, driven with the official
 * `openai` SDK: refusals keep their status, Retry-After, code and param; HTML and truncated
 * answers are 502s that do not echo the upstream; a stream that breaks ends with an error event
 * the SDK raises. The upstream's behaviour is chosen by the model name each alias routes to.
 */

let upstreamUrl = '';
let server: Server;
/** Every request body the upstream received, by upstream model name. */
const seen: Record<string, Record<string, unknown>[]> = {};

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const chunk = (content: string) => ({
  id: 'chatcmpl-x',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: 'up',
  choices: [{ index: 0, delta: { content }, finish_reason: null }],
});

async function misbehave(req: IncomingMessage, res: ServerResponse) {
  const body = await readJson(req);
  const model = String(body['model']);
  seen[model] = [...(seen[model] ?? []), body];
  const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(value));
  };
  switch (model) {
    case 'refuse-429':
      return json(
        429,
        {
          error: {
            message: `Too many requests to ${upstreamUrl}, key upstream-secret`,
            type: 'rate_limit_error',
            code: 'rate_limit_exceeded',
            param: null,
          },
        },
        { 'retry-after': '7' },
      );
    case 'refuse-409':
      return json(409, {
        error: { message: 'Busy with another one', type: 'conflict', code: 'in_progress', param: 'messages' },
      });
    case 'refuse-413':
      return json(413, {
        error: { message: 'Too big', type: 'invalid_request_error', code: null, param: null },
      });
    case 'html-400':
      res.writeHead(400, { 'content-type': 'text/html' });
      return res.end('<html><body>proxy-secret-page</body></html>');
    case 'html-200':
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<html><body>proxy-secret-page</body></html>');
    case 'no-choices':
      return json(200, { id: 'x', object: 'chat.completion' });
    case 'moderate':
      return json(200, {
        id: 'modr-1',
        model,
        results: [{ flagged: false, categories: {}, category_scores: {} }],
      });
  }
  if (body['stream']) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(chunk('Hello'))}\n\n`);
    res.write(`data: ${JSON.stringify(chunk(' there'))}\n\n`);
    if (model === 'break') {
      // The connection dies mid-answer, without [DONE].
      await new Promise((r) => setTimeout(r, 20));
      return res.socket?.destroy();
    }
    if (model === 'no-done') return res.end(); // a clean close, but no [DONE]
    return res.end('data: [DONE]\n\n');
  }
  return json(200, {
    id: 'chatcmpl-x',
    object: 'chat.completion',
    created: 1700000000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: 9,
      completion_tokens: 2,
      total_tokens: 11,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 1 },
    },
  });
}

const alias = (model: string, more: Record<string, unknown> = {}) => ({
  category: 'chat',
  max_output_tokens: 512,
  routes: [{ upstream: 'odd', model }],
  ...more,
});

let t: TestFjord;
let client: OpenAI;
let key: string;

beforeAll(async () => {
  server = createServer((req, res) => void misbehave(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_LLM_UPSTREAMS: JSON.stringify([{ name: 'odd', url: upstreamUrl, api_key: 'upstream-secret' }]),
    FJORD_LLM_MODELS: JSON.stringify({
      r429: alias('refuse-429'),
      r409: alias('refuse-409'),
      r413: alias('refuse-413'),
      'html-400': alias('html-400'),
      'html-200': alias('html-200'),
      'no-choices': alias('no-choices'),
      broken: alias('break'),
      'no-done': alias('no-done'),
      fine: alias('fine'),
      'fine-tools': alias('fine-tools', { tools: true }),
      'mod-b': { category: 'moderation', routes: [{ upstream: 'odd', model: 'moderate' }], default: true },
      'mod-a': { category: 'moderation', routes: [{ upstream: 'odd', model: 'moderate-other' }] },
    }),
  });
  await t.fjord.start(['api']);
  const customer = await t.customer();
  key = (await t.kernel.identity.createServiceKey(customer.id, 'llm-api', 'sdk')).key;
  client = new OpenAI({ apiKey: key, baseURL: `${t.kernel.baseUrl()}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await t?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

const ask = (model: string, more: Record<string, unknown> = {}) =>
  client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], ...more } as never);

async function streamed(model: string): Promise<{ text: string; error: unknown }> {
  let text = '';
  try {
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    return { text, error: null };
  } catch (error) {
    return { text, error };
  }
}

async function outcomes(model: string): Promise<string[]> {
  const rows = await t.kernel.store.db
    .selectFrom('llm_usage' as never)
    .select('outcome' as never)
    .where('model' as never, '=', model as never)
    .execute();
  return (rows as { outcome: string }[]).map((r) => r.outcome);
}

describe('LLM gateway against a misbehaving upstream', () => {
  it('passes a 429 on with its Retry-After, code and param, without the upstream’s address or key', async () => {
    for (const stream of [false, true]) {
      const err = (await ask('r429', { stream }).catch((e) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect(err.status).toBe(429);
      expect(err.headers?.get('retry-after')).toBe('7');
      expect(err.code).toBe('rate_limit_exceeded');
      expect(err.type).toBe('rate_limit_error');
      expect(err.message).toContain('Too many requests');
      expect(err.message).not.toContain('127.0.0.1');
      expect(err.message).not.toContain('upstream-secret');
    }
  });

  it('keeps 409 and 413 with their code and param', async () => {
    const conflict = (await ask('r409').catch((e) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(conflict).toBeInstanceOf(OpenAI.ConflictError);
    expect(conflict).toMatchObject({ status: 409, code: 'in_progress', param: 'messages', type: 'conflict' });
    const tooBig = (await ask('r413', { stream: true }).catch((e) => e)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(tooBig).toMatchObject({ status: 413, code: 'upstream_refused' });
  });

  it('answers 502 upstream_error for HTML or malformed answers, never echoing them', async () => {
    for (const model of ['html-400', 'html-200', 'no-choices']) {
      const err = (await ask(model).catch((e) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      expect(err).toMatchObject({ status: 502, code: 'upstream_error', type: 'api_error' });
      expect(err.message).not.toContain('proxy-secret-page');
    }
    const { error } = await streamed('html-400');
    expect(error).toMatchObject({ status: 502, code: 'upstream_error' });
  });

  it('ends a stream that breaks off with an error event the SDK raises, recorded as such', async () => {
    for (const model of ['broken', 'no-done']) {
      const { text, error } = await streamed(model);
      expect(text).toBe('Hello there');
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error).toMatchObject({ code: 'upstream_error' });
      expect(await outcomes(model)).toEqual(['upstream_error']);
    }
    const whole = await streamed('fine');
    expect(whole).toEqual({ text: 'Hello there', error: null });
  });

  it('checks max_completion_tokens like max_tokens and sends it upstream as given', async () => {
    const err = await ask('fine', { max_completion_tokens: 9999 }).catch((e) => e);
    expect(err).toMatchObject({ status: 400, code: 'max_tokens_exceeded' });
    seen['fine'] = [];
    await ask('fine', { max_completion_tokens: 100 });
    expect(seen['fine']![0]).toMatchObject({ max_completion_tokens: 100 });
    expect(seen['fine']![0]).not.toHaveProperty('max_tokens');
    await ask('fine');
    expect(seen['fine']![1]).toMatchObject({ max_tokens: 512 });
  });

  it('keeps the usage details', async () => {
    const r = await ask('fine');
    expect(r.usage).toEqual({
      prompt_tokens: 9,
      completion_tokens: 2,
      total_tokens: 11,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 1 },
    });
  });

  it('retrieves one model on both paths, 404 in OpenAI’s shape for an unknown one', async () => {
    expect(await client.models.retrieve('fine')).toMatchObject({ id: 'fine', object: 'model' });
    const missing = await client.models.retrieve('nope').catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing).toMatchObject({ code: 'model_not_found' });
    const same = await t.request('GET', '/v1/llm/models/fine', { key });
    expect(same.body).toMatchObject({ id: 'fine', object: 'model' });
  });

  it('answers a 431 on an OpenAI-compatible path in OpenAI’s shape', async () => {
    const { port } = new URL(t.kernel.baseUrl());
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write(`GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      );
      let got = '';
      socket.on('data', (d) => {
        got += d;
      });
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1.1 431/);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({
      error: {
        message: expect.any(String),
        type: 'invalid_request_error',
        param: null,
        code: 'headers_too_large',
      },
    });
  });

  it('moderates with the default moderation alias when no model is named', async () => {
    const m = await client.moderations.create({ input: 'hello' });
    expect(m.model).toBe('mod-b');
    expect(seen['moderate']).toHaveLength(1);
  });

  it('forwards tools only for aliases that enable them', async () => {
    const tools = [{ type: 'function', function: { name: 'now', parameters: { type: 'object' } } }];
    seen['fine'] = [];
    seen['fine-tools'] = [];
    await ask('fine', { tools, tool_choice: 'auto' });
    await ask('fine-tools', { tools, tool_choice: 'auto' });
    expect(seen['fine']![0]).not.toHaveProperty('tools');
    expect(seen['fine-tools']![0]).toMatchObject({ tools, tool_choice: 'auto' });
  });
});
