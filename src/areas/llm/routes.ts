import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { isoOf } from '../../kernel/clock.js';
import { kernelErrors } from '../../kernel/errors.js';
import { clientGone } from '../../kernel/http/client-gone.js';
import { openEventStream } from '../../kernel/http/event-stream.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { ChatOutcome, ChatRequest } from './chat-types.js';
import type { Currency } from './migrations.js';
import { openAiErrorFormat } from './openai-errors.js';
import {
  BudgetBody,
  BudgetView,
  ChatRequestBody,
  ChatResponseBody,
  EmbeddingsRequestBody,
  KeyParams,
  ModelList,
  ModelParams,
  ModelView,
  ModerationRequestBody,
  PassThroughResponse,
  UsageQuery,
  UsageResponse,
} from './schemas.js';
import type { LlmService } from './service.js';
import { brokenStreamEvent } from './stream-through.js';
import { REFUSAL_STATUSES } from './upstream-refusal.js';

const TAG = 'LLM';
/** OpenAI clients send the key as `Authorization: Bearer`; the platform's own clients as X-API-Key. */
const gateway = (scope: string): CustomerAccess => ({
  kind: 'customer',
  services: ['llm-api'],
  scopes: [scope],
  oidc: true,
  bearer: true,
});
const openAi = { errorFormat: openAiErrorFormat, tag: TAG } as const;
/** Fjord's own refusals, an upstream's passed on with their status, and the gateway's 502/503. */
const UPSTREAM_ERRORS = [...new Set([400, 404, ...REFUSAL_STATUSES, 502, 503])];

/** Sends a chat outcome: JSON, or SSE events written as they come, with no buffering. */
async function send(outcome: ChatOutcome, req: FastifyRequest, reply: FastifyReply, signal: AbortSignal) {
  if (outcome.kind === 'json') return outcome.body;
  const res = openEventStream(reply);
  res.flushHeaders();
  const iterator = outcome.events[Symbol.asyncIterator]();
  const stop = () => void iterator.return?.(undefined);
  signal.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { value, done } = await iterator.next();
      if (done) break;
      if (!res.write(value)) await new Promise((r) => res.once('drain', r));
    }
  } catch (err) {
    // The answer has started: the error can only end the stream, with OpenAI's error event.
    req.log.warn({ err }, 'llm stream ended early');
    if (!signal.aborted) res.write(brokenStreamEvent());
  } finally {
    signal.removeEventListener('abort', stop);
    res.end();
  }
  return reply;
}

/** Where one operation is served: OpenAI's path and Fjord's own, each with its operationId. */
interface RoutePath {
  url: string;
  operationId: string;
  summary: string;
}

/** The same route, registered under each of `paths`. */
function underPaths<R>(paths: RoutePath[], route: (path: RoutePath) => R): R[] {
  return paths.map(route);
}

const chatRoute = (llm: LlmService, path: RoutePath) =>
  defineRoute({
    ...openAi,
    ...path,
    method: 'POST',
    description:
      '`tools` and `tool_choice` go upstream for aliases with tools enabled and are otherwise accepted and not used; `agent_id` is kept with the usage record; `region` can only be `oslo`. At most 50 requests in flight per key (the next one gets 429).',
    access: gateway('llm:write'),
    rateLimit: ['llm'],
    idempotency: false,
    body: ChatRequestBody,
    response: { 200: ChatResponseBody },
    errors: UPSTREAM_ERRORS,
    handler: async ({ principal, body, raw, reply }) => {
      const signal = clientGone(reply);
      return send(await llm.chat(principal, body as ChatRequest, signal), raw, reply, signal);
    },
  });

export function llmRoutes(llm: LlmService, identity: IdentityService) {
  const ownKey = async (customerId: string, keyId: string) => {
    if (!(await identity.listKeys(customerId)).some((k) => k.id === keyId))
      throw kernelErrors.notFound('API key');
  };
  const budgetView = async (b: {
    key_id: string;
    monthly_limit: number;
    currency: string;
    created_at: number;
    updated_at: number;
  }) => ({
    key_id: b.key_id,
    monthly_limit: b.monthly_limit,
    currency: b.currency as Currency,
    spent_this_month: Math.round((await llm.spentThisMonth(b.key_id, b.currency as Currency)) * 1e6) / 1e6,
    created_at: isoOf(b.created_at)!,
    updated_at: isoOf(b.updated_at)!,
  });
  return [
    ...underPaths(
      [
        { url: '/v1/models', operationId: 'listModels', summary: 'List models (OpenAI-compatible path)' },
        { url: '/v1/llm/models', operationId: 'listLlmModels', summary: 'List models' },
      ],
      (path) =>
        defineRoute({
          ...openAi,
          ...path,
          method: 'GET',
          access: gateway('llm:read'),
          rateLimit: ['llm'],
          response: { 200: ModelList },
          handler: async () => llm.listModels(),
        }),
    ),
    ...underPaths(
      [
        {
          url: '/v1/models/:model',
          operationId: 'retrieveModel',
          summary: 'One model (OpenAI-compatible path)',
        },
        { url: '/v1/llm/models/:model', operationId: 'getLlmModel', summary: 'One model' },
      ],
      (path) =>
        defineRoute({
          ...openAi,
          ...path,
          method: 'GET',
          access: gateway('llm:read'),
          rateLimit: ['llm'],
          params: ModelParams,
          response: { 200: ModelView },
          errors: [404],
          handler: async ({ params }) => llm.getModel(params.model),
        }),
    ),
    ...underPaths(
      [
        {
          url: '/v1/chat/completions',
          operationId: 'createChatCompletion',
          summary: 'Chat completion (OpenAI-compatible path)',
        },
        { url: '/v1/llm/chat', operationId: 'llmChat', summary: 'Chat completion' },
        {
          url: '/v1/llm/chat/completions',
          operationId: 'llmChatCompletions',
          summary: 'Chat completion (alias of /v1/llm/chat)',
        },
      ],
      (path) => chatRoute(llm, path),
    ),
    defineRoute({
      ...openAi,
      method: 'POST',
      url: '/v1/embeddings',
      operationId: 'createEmbeddings',
      summary: 'Embeddings from a model of the `embeddings` category (OpenAI-compatible)',
      access: gateway('llm:write'),
      rateLimit: ['llm'],
      body: EmbeddingsRequestBody,
      response: { 200: PassThroughResponse },
      errors: UPSTREAM_ERRORS,
      handler: async ({ principal, body, reply }) =>
        llm.passThrough(principal, 'embeddings', body, clientGone(reply)),
    }),
    defineRoute({
      ...openAi,
      method: 'POST',
      url: '/v1/moderations',
      operationId: 'createModeration',
      summary: 'Classify text with a model of the `moderation` category (OpenAI-compatible)',
      access: gateway('llm:write'),
      rateLimit: ['llm'],
      body: ModerationRequestBody,
      response: { 200: PassThroughResponse },
      errors: UPSTREAM_ERRORS,
      handler: async ({ principal, body, reply }) =>
        llm.passThrough(principal, 'moderation', body, clientGone(reply)),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/llm/usage',
      operationId: 'llmUsage',
      tag: TAG,
      summary: 'Tokens and cost per model over a period (UTC days)',
      access: gateway('llm:read'),
      query: UsageQuery,
      response: { 200: UsageResponse },
      handler: async ({ principal, query }) => {
        const now = new Date();
        const from = query.from ?? `${now.toISOString().slice(0, 8)}01`;
        const to = query.to ?? now.toISOString().slice(0, 10);
        if (to < from)
          throw kernelErrors.invalid('`to` is before `from`.', [
            { path: '/query/to', message: 'is before from' },
          ]);
        const data = await llm.usage(
          principal.customerId,
          Date.parse(`${from}T00:00:00Z`),
          Date.parse(`${to}T00:00:00Z`) + 86_400_000,
        );
        return { object: 'list' as const, from, to, data };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/llm/budgets',
      operationId: 'listLlmBudgets',
      tag: TAG,
      summary: 'Monthly budgets of the customer’s keys',
      access: gateway('llm:read'),
      response: { 200: Type.Object({ budgets: Type.Array(BudgetView) }) },
      handler: async ({ principal }) => ({
        budgets: await Promise.all((await llm.budgets(principal.customerId)).map(budgetView)),
      }),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/llm/budgets/:key_id',
      operationId: 'putLlmBudget',
      tag: TAG,
      summary:
        'Set a key’s monthly budget: once spent, its requests get 429 `budget_exceeded` until the month ends',
      access: gateway('llm:write'),
      params: KeyParams,
      body: BudgetBody,
      response: { 200: BudgetView },
      errors: [404],
      handler: async ({ principal, params, body }) => {
        await ownKey(principal.customerId, params.key_id);
        return budgetView(
          await llm.putBudget(principal.customerId, params.key_id, body.monthly_limit, body.currency),
        );
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/llm/budgets/:key_id',
      operationId: 'deleteLlmBudget',
      tag: TAG,
      summary: 'Remove a key’s monthly budget',
      access: gateway('llm:write'),
      params: KeyParams,
      response: { 204: Type.Null({ description: 'No content' }) },
      errors: [404],
      handler: async ({ principal, params }) => {
        if (!(await llm.deleteBudget(principal.customerId, params.key_id)))
          throw kernelErrors.notFound('Budget');
        return null;
      },
    }),
  ];
}
