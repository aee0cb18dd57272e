/**
 * Token counts for requests an upstream does not report usage for (and for the simulated model),
 * and for checking a prompt against a model's context before calling anyone. The tokenizer (about
 * 2 MB of tables) loads on first use, so Fjord starts without it: through require (its CommonJS
 * build), since the bundle bin/fjord.js runs cannot call import() (bin/bundle-check.js).
 */
import { lazyPackage } from '../../kernel/lazy.js';

const tokenizer = lazyPackage<typeof import('gpt-tokenizer/encoding/cl100k_base')>(
  'gpt-tokenizer/encoding/cl100k_base',
);

export async function countTokens(text: string): Promise<number> {
  return text ? tokenizer().countTokens(text) : 0;
}

/** The text of a chat message's content: a string, or the text parts of a multi-part content. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) =>
        p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
          ? (p as { text: string }).text
          : '',
      )
      .join('\n');
  return '';
}

/** Tokens of a chat prompt, with OpenAI's per-message overhead (about 4 per message, 3 to prime). */
export async function countPromptTokens(messages: { role: string; content?: unknown }[]): Promise<number> {
  let n = 3;
  for (const m of messages)
    n += 4 + (await countTokens(m.role)) + (await countTokens(contentText(m.content)));
  return n;
}
