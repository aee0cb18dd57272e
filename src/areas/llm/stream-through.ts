import type { Usage } from './chat-types.js';
import { dataOf, SseSplitter, sseEvent } from './sse.js';
import { contentText, countTokens } from './tokens.js';
import type { UpstreamAnswer } from './upstream.js';

/**
 * An upstream's chat stream, passed on event by event as it arrives: each chunk gets the alias
 * as `model` (the upstream's own model name stays private), a reasoning model's
 * `delta.reasoning_content` becomes `model_output_metadata.reasoning`, and usage is taken from
 * the stream (or counted from the text when the upstream sends none) to be recorded before the
 * event that ends the stream reaches the client. When the client asked for usage and the upstream sent none, a usage chunk is added before
 * `[DONE]`, as OpenAI sends it.
 */
export async function* streamThrough(
  answer: UpstreamAnswer,
  alias: string,
  promptTokens: number,
  includeUsage: boolean,
  clientSignal: AbortSignal,
  record: (usage: Usage, outcome: string) => Promise<void>,
): AsyncIterable<string> {
  const splitter = new SseSplitter();
  let usage: Usage | null = null;
  let text = '';
  let last: { id?: unknown; created?: unknown } = {};
  let done = false;
  /** The upstream sent an error event of its own, or its stream broke off. */
  let failed = false;
  const reader = answer.body?.getReader();
  const counted = async (): Promise<Usage> => {
    if (usage) return usage;
    const completion = await countTokens(text);
    return {
      prompt_tokens: promptTokens,
      completion_tokens: completion,
      total_tokens: promptTokens + completion,
    };
  };
  // Recorded once, before the event that ends the stream for the client: an SDK returns (or
  // raises) on `[DONE]` or an error event, and what it then reads about the call must be there.
  let recorded = false;
  const recordOnce = async (outcome: string) => {
    if (recorded) return;
    recorded = true;
    await record(await counted(), outcome);
  };
  const relay = async (event: string): Promise<string | null> => {
    const data = dataOf(event);
    if (data === null) return null;
    if (data.trim() === '[DONE]') {
      done = true;
      await recordOnce(failed ? 'upstream_error' : 'ok');
      const tail =
        includeUsage && !usage
          ? sseEvent(
              JSON.stringify({
                ...last,
                object: 'chat.completion.chunk',
                model: alias,
                choices: [],
                usage: await counted(),
              }),
            )
          : '';
      return `${tail}${sseEvent('[DONE]')}`;
    }
    let chunk: Record<string, unknown>;
    try {
      chunk = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return sseEvent(data); // not JSON: passed on untouched
    }
    if (chunk['error']) {
      failed = true; // an upstream's own error event: passed on as it is, so the SDKs raise it
      await recordOnce('upstream_error');
      return sseEvent(JSON.stringify(chunk));
    }
    last = { id: chunk['id'], created: chunk['created'] };
    if (chunk['usage']) usage = chunk['usage'] as Usage;
    const reasoning: string[] = [];
    for (const choice of (chunk['choices'] as { delta?: Record<string, unknown> }[] | undefined) ?? []) {
      const delta = choice.delta;
      if (!delta) continue;
      text += contentText(delta['content']);
      if (typeof delta['reasoning_content'] === 'string') {
        reasoning.push(delta['reasoning_content']);
        delete delta['reasoning_content'];
      }
    }
    const out = {
      ...chunk,
      model: alias,
      ...(reasoning.length ? { model_output_metadata: { reasoning: reasoning.join('') } } : {}),
    };
    return sseEvent(JSON.stringify(out));
  };
  let broken = false;
  try {
    if (reader) {
      for (;;) {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch (err) {
          if (clientSignal.aborted) throw err;
          broken = true; // the upstream's connection failed mid-answer
          break;
        }
        if (next.done) break;
        for (const event of splitter.feed(next.value)) {
          const out = await relay(event);
          if (out) yield out;
        }
      }
      const rest = splitter.rest();
      if (rest && !broken) {
        const out = await relay(rest);
        if (out) yield out;
      }
    }
    // An answer that stops without `[DONE]` is cut short, not complete: OpenAI's error event
    // tells the client so (the SDKs raise it), where a silent end would pass for the whole answer.
    if (!done && !failed) {
      failed = true;
      await recordOnce('upstream_error');
      yield brokenStreamEvent();
    }
    done = true;
  } finally {
    if (!done) await reader?.cancel().catch(() => {});
    await recordOnce(failed ? 'upstream_error' : done ? 'ok' : 'aborted');
  }
}

/** OpenAI's error event for an answer cut short; the SDKs raise an APIError on it. */
export const brokenStreamEvent = () => sseEvent(JSON.stringify(BROKEN_STREAM));

const BROKEN_STREAM = {
  error: {
    message: 'The model server’s answer broke off before its end.',
    type: 'api_error',
    param: null,
    code: 'upstream_error',
  },
};
