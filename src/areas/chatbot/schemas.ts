import { Type } from '@sinclair/typebox';
import { BOT_STATUSES, CITATION_STYLES } from './migrations.js';

const literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

export const ApiBot = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  status: Type.String(),
  language: Type.String(),
});

export const Citation = Type.Object({
  title: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  snippet: Type.String(),
});

export const ChatBody = Type.Object(
  {
    bot_id: Type.String({ minLength: 1, maxLength: 100, description: 'The bot’s id (UUID) or slug' }),
    message: Type.String({ minLength: 1, maxLength: 8000 }),
    session_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Omit to start a new session' }),
    ),
  },
  { additionalProperties: false },
);

export const ChatReplyBody = Type.Object({
  session_id: Type.String(),
  message_id: Type.String(),
  response: Type.String(),
  citations: Type.Array(Citation),
  tokens_input: Type.Integer(),
  tokens_output: Type.Integer(),
  response_time_ms: Type.Integer(),
});

const slug = Type.String({
  pattern: '^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$',
  description: 'Lowercase letters, digits and hyphens',
});
const botFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  slug: Type.Optional(slug),
  status: Type.Optional(literals(BOT_STATUSES)),
  language: Type.Optional(
    Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$', description: 'BCP 47, e.g. en, nb, de-CH' }),
  ),
  system_prompt: Type.Optional(Type.String({ maxLength: 8000 })),
  model: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'A chat model alias; default: the first real one, else the simulated fjord-echo',
    }),
  ),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  citation_style: Type.Optional(literals(CITATION_STYLES)),
};
export const BotCreateBody = Type.Object(botFields, { additionalProperties: false });
export const BotPatchBody = Type.Partial(Type.Object(botFields), {
  additionalProperties: false,
  minProperties: 1,
});

export const BotView = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  status: Type.String(),
  language: Type.String(),
  system_prompt: Type.String(),
  model: Type.String(),
  simulated: Type.Boolean({
    description: 'True when no real model answers: replies are extracts of the knowledge',
  }),
  temperature: Type.Number(),
  citation_style: Type.String(),
  sources: Type.Integer(),
  sources_ready: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const SourceBody = Type.Union([
  Type.Object(
    {
      kind: Type.Literal('text'),
      title: Type.String({ minLength: 1, maxLength: 300 }),
      text: Type.String({ minLength: 1, maxLength: 2_000_000 }),
      url: Type.Optional(Type.String({ maxLength: 2000 })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      kind: Type.Literal('url'),
      url: Type.String({ pattern: '^https?://', maxLength: 2000 }),
      title: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      kind: Type.Literal('object'),
      bucket: Type.String({ minLength: 3, maxLength: 63, description: 'One of your buckets' }),
      key: Type.String({ minLength: 1, maxLength: 1024, description: 'A text, Markdown or HTML object' }),
      title: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    },
    { additionalProperties: false },
  ),
]);

export const SourceView = Type.Object({
  id: Type.String(),
  bot_id: Type.String(),
  kind: Type.String(),
  title: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  status: Type.String({ description: 'pending, indexing, ready or failed' }),
  error: Type.Union([Type.String(), Type.Null()]),
  chunks: Type.Integer(),
  created_at: Type.String(),
  indexed_at: Type.Union([Type.String(), Type.Null()]),
});

export const BotParams = Type.Object({ bot_id: Type.String({ minLength: 1, maxLength: 100 }) });
export const SourceParams = Type.Object({
  bot_id: Type.String({ minLength: 1, maxLength: 100 }),
  source_id: Type.String({ minLength: 1, maxLength: 64 }),
});
