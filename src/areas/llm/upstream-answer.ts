import type { Usage } from './chat-types.js';
import { contentText, countTokens } from './tokens.js';
import type { UpstreamAnswer } from './upstream.js';
import { upstreamErrors } from './upstream-refusal.js';

// What the gateway makes of an upstream's successful answer is a file of its own: the checks an
// answer must pass to be shown (an object with its list, else a 502), the usage it reports or the
// one counted in its place, and OpenAI's shape for a reasoning model's thoughts. The service
// (service.ts) decides what to ask and what to record; this reads what came back.

/** Whether the upstream answered with server-sent events. */
export function isEventStream(answer: UpstreamAnswer): boolean {
  return (answer.headers.get('content-type') ?? '').includes('text/event-stream');
}

/**
 * A successful upstream answer's JSON, which must be an object with `list` as an array: anything
 * else (a proxy's HTML page, a truncated body) is the upstream's failure, a 502 that does not
 * show what it sent.
 */
export async function answerJson(answer: UpstreamAnswer, list: string): Promise<Record<string, unknown>> {
  const text = await new Response(answer.body).text().catch(() => null);
  if (text === null) throw upstreamErrors.malformed(answer.status, 'a body that broke off');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw upstreamErrors.malformed(answer.status, 'a body that is not JSON');
  }
  if (!json || typeof json !== 'object' || !Array.isArray((json as Record<string, unknown>)[list]))
    throw upstreamErrors.malformed(answer.status, `JSON without \`${list}\``);
  return json as Record<string, unknown>;
}

/**
 * The upstream's usage (its `prompt_tokens_details` and `completion_tokens_details` kept), or one
 * counted from the answer's text when it reports none.
 */
export async function usageOf(json: Record<string, unknown>, promptTokens: number): Promise<Usage> {
  const u = json['usage'] as Partial<Usage> | undefined;
  if (u && typeof u.prompt_tokens === 'number' && typeof u.completion_tokens === 'number')
    return {
      ...u,
      prompt_tokens: u.prompt_tokens,
      completion_tokens: u.completion_tokens,
      total_tokens: u.total_tokens ?? u.prompt_tokens + u.completion_tokens,
    };
  const choices = (json['choices'] as { message?: { content?: unknown } }[] | undefined) ?? [];
  const completion = await countTokens(choices.map((c) => contentText(c.message?.content)).join('\n'));
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
  };
}

/** A reasoning model's `reasoning_content` moves to `model_output_metadata.reasoning`. */
export function withReasoning(json: Record<string, unknown>): Record<string, unknown> {
  const choices = (json['choices'] as { message?: Record<string, unknown> }[] | undefined) ?? [];
  const reasoning = choices
    .map((c) => c.message?.['reasoning_content'])
    .filter((r): r is string => typeof r === 'string' && r !== '');
  for (const c of choices) if (c.message) delete c.message['reasoning_content'];
  return reasoning.length ? { ...json, model_output_metadata: { reasoning: reasoning.join('\n') } } : json;
}

/** The text of an embeddings or moderation `input` (a string or strings), to count when no usage comes back. */
export function inputText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (Array.isArray(input)) return input.filter((x) => typeof x === 'string').join('\n');
  return '';
}
