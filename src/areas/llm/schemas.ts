import { Type } from '@sinclair/typebox';
import { CURRENCIES } from './migrations.js';

const nullableNumber = (o: { minimum?: number; maximum?: number }) =>
  Type.Optional(Type.Union([Type.Number(o), Type.Null()]));

export const ChatRequestBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, description: 'A model alias from GET /v1/models' }),
    messages: Type.Array(
      Type.Object(
        {
          role: Type.String({
            minLength: 1,
            maxLength: 32,
            description: 'system, user, assistant (tool and developer pass through)',
          }),
          content: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Unknown()), Type.Null()])),
        },
        { additionalProperties: true },
      ),
      { minItems: 1, maxItems: 4096 },
    ),
    stream: Type.Optional(Type.Boolean()),
    stream_options: Type.Optional(
      Type.Union([
        Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
        Type.Null(),
      ]),
    ),
    temperature: nullableNumber({ minimum: 0, maximum: 2 }),
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    max_completion_tokens: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
        description: 'Checked like max_tokens against the model’s output limit; sent upstream as given',
      }),
    ),
    top_p: nullableNumber({ minimum: 0, maximum: 1 }),
    tools: Type.Optional(
      Type.Unknown({
        description: 'Sent upstream for aliases with tools enabled; otherwise accepted and not used',
      }),
    ),
    tool_choice: Type.Optional(
      Type.Unknown({
        description: 'Sent upstream for aliases with tools enabled; otherwise accepted and not used',
      }),
    ),
    agent_id: Type.Optional(
      Type.String({ maxLength: 200, description: 'Kept with the usage record, for your logs' }),
    ),
    region: Type.Optional(
      Type.String({ description: 'Preferred inference region; only `oslo` is available' }),
    ),
  },
  {
    additionalProperties: true,
    description: 'Other OpenAI request fields (stop, seed, …) pass through to the model server.',
  },
);

const UsageBody = Type.Object(
  {
    prompt_tokens: Type.Integer(),
    completion_tokens: Type.Integer(),
    total_tokens: Type.Integer(),
    prompt_tokens_details: Type.Optional(Type.Object({}, { additionalProperties: true })),
    completion_tokens_details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

export const ChatResponseBody = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(
      Type.Object(
        {
          index: Type.Integer(),
          message: Type.Object(
            { role: Type.String(), content: Type.Union([Type.String(), Type.Null()]) },
            { additionalProperties: true },
          ),
          finish_reason: Type.Union([Type.String(), Type.Null()]),
        },
        { additionalProperties: true },
      ),
    ),
    usage: UsageBody,
    model_output_metadata: Type.Optional(Type.Object({ reasoning: Type.String() })),
  },
  {
    additionalProperties: true,
    description:
      'With `stream: true` the answer is `text/event-stream` instead: OpenAI `chat.completion.chunk` events, then `data: [DONE]`.',
  },
);

export const ModelView = Type.Object({
  id: Type.String(),
  object: Type.Literal('model'),
  owned_by: Type.String(),
  created: Type.Integer(),
});

export const ModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ModelView) });

export const ModelParams = Type.Object({ model: Type.String({ minLength: 1, maxLength: 200 }) });

export const EmbeddingsRequestBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200 }),
    input: Type.Union([
      Type.String(),
      Type.Array(Type.String(), { maxItems: 2048 }),
      Type.Array(Type.Integer()),
      Type.Array(Type.Array(Type.Integer())),
    ]),
  },
  { additionalProperties: true },
);

export const ModerationRequestBody = Type.Object(
  {
    model: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Left out: the moderation alias marked default, else the first one by name',
      }),
    ),
    input: Type.Union([Type.String(), Type.Array(Type.Unknown(), { maxItems: 2048 })]),
  },
  { additionalProperties: true },
);

export const PassThroughResponse = Type.Object({ model: Type.String() }, { additionalProperties: true });

const Currency = Type.Union(CURRENCIES.map((c) => Type.Literal(c)));
const Money = Type.Object(Object.fromEntries(CURRENCIES.map((c) => [c, Type.Number()])));

export const UsageQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({ format: 'date', description: 'First day, UTC (default: the first of this month)' }),
    ),
    to: Type.Optional(
      Type.String({ format: 'date', description: 'Last day, UTC, included (default: today)' }),
    ),
  },
  { additionalProperties: false },
);

export const UsageResponse = Type.Object({
  object: Type.Literal('list'),
  from: Type.String(),
  to: Type.String(),
  data: Type.Array(
    Type.Object({
      model: Type.String(),
      requests: Type.Integer(),
      prompt_tokens: Type.Integer(),
      completion_tokens: Type.Integer(),
      total_tokens: Type.Integer(),
      cost: Money,
    }),
  ),
});

export const BudgetBody = Type.Object(
  { monthly_limit: Type.Number({ minimum: 0, maximum: 1e9 }), currency: Currency },
  { additionalProperties: false },
);

export const BudgetView = Type.Object({
  key_id: Type.String(),
  monthly_limit: Type.Number(),
  currency: Currency,
  spent_this_month: Type.Number(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const KeyParams = Type.Object({ key_id: Type.String({ minLength: 1, maxLength: 64 }) });
