import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { clientGone } from '../../kernel/http/client-gone.js';
import { openEventStream } from '../../kernel/http/event-stream.js';
import { defineRoute } from '../../kernel/http/route.js';
import {
  ApiBot,
  BotCreateBody,
  BotParams,
  BotPatchBody,
  BotView,
  ChatBody,
  ChatReplyBody,
  SourceBody,
  SourceParams,
  SourceView,
} from './schemas.js';
import type { ChatbotService, ChatListener } from './service.js';

const TAG = 'Chatbot';
const access = (scope: string): CustomerAccess => ({
  kind: 'customer',
  services: ['chatbot'],
  scopes: [scope],
  oidc: true,
});
const Empty = Type.Null({ description: 'No content' });

/**
 * The stream of one chat turn: opened at the first `meta` event (errors before it are ordinary
 * HTTP errors), then `token` events as text is produced, then `done` — or `error` instead.
 */
function sseListener(reply: FastifyReply) {
  let open = false;
  const write = (event: Record<string, unknown>) => {
    reply.raw.write(`data: ${JSON.stringify(event)}\n\n`);
  };
  const listener: ChatListener = {
    meta(sessionId, citations) {
      openEventStream(reply);
      open = true;
      write({ type: 'meta', data: { session_id: sessionId, citations } });
    },
    token(content) {
      write({ type: 'token', content });
    },
  };
  return {
    listener,
    get open() {
      return open;
    },
    done() {
      write({ type: 'done' });
      reply.raw.end();
    },
    fail(message: string) {
      write({ type: 'error', content: message });
      reply.raw.end();
    },
  };
}

export function chatbotRoutes(bots: ChatbotService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/chatbot/api/bots',
      operationId: 'chatbotListActiveBots',
      tag: TAG,
      summary: 'The customer’s active bots',
      access: access('chatbot:read'),
      response: { 200: Type.Object({ bots: Type.Array(ApiBot) }) },
      handler: async ({ principal }) => ({
        bots: (await bots.listBots(principal.customerId, true)).map(
          ({ id, slug, name, status, language }) => ({
            id,
            slug,
            name,
            status,
            language,
          }),
        ),
      }),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/chatbot/api/chat',
      operationId: 'chatbotChat',
      tag: TAG,
      summary: 'Ask a bot; the answer cites the knowledge it comes from',
      access: access('chatbot:write'),
      body: ChatBody,
      response: { 200: ChatReplyBody },
      status: 200,
      errors: [404, 502, 503],
      handler: async ({ principal, body, reply }) => bots.chat(principal, body, clientGone(reply)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/chatbot/api/chat/stream',
      operationId: 'chatbotChatStream',
      tag: TAG,
      summary: 'Ask a bot, with the answer as Server-Sent Events: meta, token…, then done (or error)',
      description:
        'Each event is `data: <JSON>`: `{type: "meta", data: {session_id, citations: [{title, url}]}}` once, then `{type: "token", content}` events, then `{type: "done"}`; if generation fails after the stream started, `{type: "error", content}` instead of `done`.',
      access: access('chatbot:write'),
      idempotency: false,
      body: ChatBody,
      response: { 200: Type.String({ description: 'text/event-stream' }) },
      produces: 'text/event-stream',
      errors: [404, 502, 503],
      handler: async ({ principal, body, reply, raw }) => {
        const stream = sseListener(reply);
        try {
          await bots.chat(principal, body, clientGone(reply), stream.listener);
          stream.done();
        } catch (err) {
          if (!stream.open) throw err;
          raw.log.warn({ err }, 'chatbot stream failed');
          stream.fail(
            err instanceof Error && 'code' in err ? err.message : 'The answer could not be completed.',
          );
        }
        return reply;
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/chatbot/bots',
      operationId: 'chatbotCreateBot',
      tag: TAG,
      summary: 'Create a bot',
      access: access('chatbot:write'),
      body: BotCreateBody,
      response: { 201: BotView },
      errors: [403, 409],
      handler: async ({ principal, body }) => bots.createBot(principal.customerId, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/chatbot/bots',
      operationId: 'chatbotListBots',
      tag: TAG,
      summary: 'Every bot of the customer, with its settings',
      access: access('chatbot:read'),
      response: { 200: Type.Object({ bots: Type.Array(BotView) }) },
      handler: async ({ principal }) => ({ bots: await bots.listBots(principal.customerId) }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/chatbot/bots/:bot_id',
      operationId: 'chatbotGetBot',
      tag: TAG,
      summary: 'A bot, by id or slug',
      access: access('chatbot:read'),
      params: BotParams,
      response: { 200: BotView },
      errors: [404],
      handler: async ({ principal, params }) => bots.getBot(principal.customerId, params.bot_id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/chatbot/bots/:bot_id',
      operationId: 'chatbotUpdateBot',
      tag: TAG,
      summary: 'Change a bot’s settings',
      access: access('chatbot:write'),
      params: BotParams,
      body: BotPatchBody,
      response: { 200: BotView },
      errors: [404, 409],
      handler: async ({ principal, params, body }) =>
        bots.updateBot(principal.customerId, params.bot_id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/chatbot/bots/:bot_id',
      operationId: 'chatbotDeleteBot',
      tag: TAG,
      summary: 'Delete a bot with its knowledge and sessions',
      access: access('chatbot:write'),
      params: BotParams,
      response: { 204: Empty },
      errors: [404],
      handler: async ({ principal, params }) => {
        await bots.deleteBot(principal.customerId, params.bot_id);
        return null;
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/chatbot/bots/:bot_id/sources',
      operationId: 'chatbotAddSource',
      tag: TAG,
      summary: 'Add knowledge: a text, or a web page fetched and indexed in the background',
      access: access('chatbot:write'),
      params: BotParams,
      body: SourceBody,
      response: { 201: SourceView },
      errors: [403, 404],
      handler: async ({ principal, params, body }) =>
        bots.addSource(principal.customerId, params.bot_id, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/chatbot/bots/:bot_id/sources',
      operationId: 'chatbotListSources',
      tag: TAG,
      summary: 'A bot’s knowledge sources and their indexing status',
      access: access('chatbot:read'),
      params: BotParams,
      response: { 200: Type.Object({ sources: Type.Array(SourceView) }) },
      errors: [404],
      handler: async ({ principal, params }) => ({
        sources: await bots.listSources(principal.customerId, params.bot_id),
      }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/chatbot/bots/:bot_id/sources/:source_id',
      operationId: 'chatbotGetSource',
      tag: TAG,
      summary: 'A knowledge source',
      access: access('chatbot:read'),
      params: SourceParams,
      response: { 200: SourceView },
      errors: [404],
      handler: async ({ principal, params }) =>
        bots.getSource(principal.customerId, params.bot_id, params.source_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/chatbot/bots/:bot_id/sources/:source_id/reindex',
      operationId: 'chatbotReindexSource',
      tag: TAG,
      summary: 'Index a source again (a web page that changed)',
      access: access('chatbot:write'),
      params: SourceParams,
      response: { 202: SourceView },
      errors: [404],
      handler: async ({ principal, params }) =>
        bots.reindexSource(principal.customerId, params.bot_id, params.source_id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/chatbot/bots/:bot_id/sources/:source_id',
      operationId: 'chatbotDeleteSource',
      tag: TAG,
      summary: 'Remove a knowledge source and its passages',
      access: access('chatbot:write'),
      params: SourceParams,
      response: { 204: Empty },
      errors: [404],
      handler: async ({ principal, params }) => {
        await bots.deleteSource(principal.customerId, params.bot_id, params.source_id);
        return null;
      },
    }),
  ];
}
