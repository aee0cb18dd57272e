import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * The language-model gateway's upstreams and model aliases (FJORD_LLM_UPSTREAMS,
 * FJORD_LLM_MODELS), as JSON. Checked whole at start, each problem named.
 */

export const LLM_CATEGORIES = ['chat', 'reasoning', 'code', 'vision', 'embeddings', 'moderation'] as const;
export type LlmCategory = (typeof LLM_CATEGORIES)[number];

const Price = Type.Object(
  Object.fromEntries(
    ['NOK', 'SEK', 'DKK', 'EUR', 'USD'].map((c) => [c, Type.Optional(Type.Number({ minimum: 0 }))]),
  ),
  { additionalProperties: false },
);

export const LlmUpstreamSetting = Type.Object(
  {
    /** Referred to by the models' routes. */
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,62}$' }),
    /** The OpenAI-compatible base URL, up to and including `/v1`. */
    url: Type.String({ pattern: '^https?://' }),
    api_key: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: false },
);

export const LlmModelSetting = Type.Object(
  {
    category: Type.Union(LLM_CATEGORIES.map((c) => Type.Literal(c))),
    owned_by: Type.Optional(Type.String()),
    context_tokens: Type.Optional(Type.Integer({ minimum: 256 })),
    max_output_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Tried in order: the next one on a connection error, a timeout or a 5xx before the first byte. */
    routes: Type.Array(
      Type.Object(
        { upstream: Type.String(), model: Type.String({ minLength: 1 }) },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
    /** Price per 1000 tokens, by currency. */
    price_per_1k_input: Type.Optional(Price),
    price_per_1k_output: Type.Optional(Price),
    /** Forward `tools` and `tool_choice` to the upstream (which must support them); off by default. */
    tools: Type.Optional(Type.Boolean()),
    /** The alias `/v1/moderations` uses when a request names none (one moderation alias at most). */
    default: Type.Optional(Type.Boolean()),
    /** Milliseconds to wait for an upstream's answer to start. */
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
  },
  { additionalProperties: false },
);

export type LlmUpstreamSettings = Static<typeof LlmUpstreamSetting>;
export type LlmModelSettings = Static<typeof LlmModelSetting>;

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new Error('expected JSON');
  }
}

function check<T extends TSchema>(schema: T, value: unknown, what: string): Static<T> {
  if (Value.Check(schema, value)) return value;
  const first = [...Value.Errors(schema, value)][0];
  throw new Error(`${what}${first?.path ?? ''}: ${first?.message ?? 'invalid'}`);
}

export function asLlmUpstreams(raw: string): LlmUpstreamSettings[] {
  const list = parseJson(raw);
  if (!Array.isArray(list)) throw new Error('expected a JSON array of {name, url, api_key}');
  const seen = new Set<string>();
  return list.map((u, i) => {
    const upstream = check(LlmUpstreamSetting, u, `[${i}]`);
    if (seen.has(upstream.name)) throw new Error(`[${i}].name: ${upstream.name} is given twice`);
    seen.add(upstream.name);
    return { ...upstream, url: upstream.url.replace(/\/+$/, '') };
  });
}

export function asLlmModels(raw: string): Record<string, LlmModelSettings> {
  const models = parseJson(raw);
  if (!models || typeof models !== 'object' || Array.isArray(models))
    throw new Error('expected a JSON object of model alias → settings');
  const out: Record<string, LlmModelSettings> = {};
  for (const [alias, m] of Object.entries(models)) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/.test(alias))
      throw new Error(`${alias}: not a valid model name`);
    out[alias] = check(LlmModelSetting, m, alias);
  }
  const defaults = Object.entries(out).filter(([, m]) => m.default);
  for (const [alias, m] of defaults)
    if (m.category !== 'moderation')
      throw new Error(`${alias}.default: only a moderation alias can be the default`);
  if (defaults.length > 1)
    throw new Error(`${defaults.map(([a]) => a).join(', ')}: only one moderation alias can be the default`);
  return out;
}
