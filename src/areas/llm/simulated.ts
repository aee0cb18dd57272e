import { randomBytes } from 'node:crypto';
import { SIMULATED_MODEL } from './catalogue.js';
import type { ChatRequest, Usage } from './chat-types.js';
import { sseEvent } from './sse.js';
import { contentText, countTokens } from './tokens.js';

/**
 * The simulated model: no language model runs here (none can be downloaded), so it answers with
 * the last user message, unchanged. Every answer says what it is in `system_fingerprint`, and the
 * model list, the banner and the account's services say so too. Useful to test clients,
 * streaming, limits and billing end to end; never an answer to trust.
 */
const FINGERPRINT = 'fjord-simulated-echo';

function echoOf(req: ChatRequest): string {
  const lastUser = [...req.messages].reverse().find((m) => m.role === 'user');
  return contentText(lastUser?.content);
}

const completionId = () => `chatcmpl-${randomBytes(12).toString('hex')}`;

export async function simulatedAnswer(req: ChatRequest, promptTokens: number) {
  const content = echoOf(req);
  const completion = await countTokens(content);
  return {
    id: completionId(),
    object: 'chat.completion' as const,
    created: Math.floor(Date.now() / 1000),
    model: SIMULATED_MODEL,
    system_fingerprint: FINGERPRINT,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completion,
      total_tokens: promptTokens + completion,
    },
  };
}

/** The same answer as OpenAI's chunks, a word at a time, with usage last when asked for. */
export async function* simulatedStream(
  req: ChatRequest,
  promptTokens: number,
  record: (usage: Usage, outcome: string, upstream: null) => Promise<void>,
): AsyncIterable<string> {
  const id = completionId();
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    sseEvent(
      JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model: SIMULATED_MODEL,
        system_fingerprint: FINGERPRINT,
        choices: [{ index: 0, delta, finish_reason: finish }],
      }),
    );
  const content = echoOf(req);
  const completion = await countTokens(content);
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
  };
  let finished = false;
  try {
    yield chunk({ role: 'assistant', content: '' }, null);
    for (const piece of content.match(/\S+\s*|\s+/g) ?? []) yield chunk({ content: piece }, null);
    yield chunk({}, 'stop');
    if (req.stream_options?.include_usage)
      yield sseEvent(
        JSON.stringify({
          id,
          object: 'chat.completion.chunk',
          created,
          model: SIMULATED_MODEL,
          choices: [],
          usage,
        }),
      );
    yield sseEvent('[DONE]');
    finished = true;
  } finally {
    await record(usage, finished ? 'ok' : 'aborted', null);
  }
}
