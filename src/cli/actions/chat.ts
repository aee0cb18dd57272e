import { readFileSync } from 'node:fs';
import { CliError } from '../context.js';
import { print } from '../output.js';
import type { Action, ActionContext } from './action.js';
import { takeFlag } from './action.js';

/** The prompt: the words given, or standard input when there are none (`echo hi | fjord llm chat`). */
function promptOf(words: string[], what: string): string {
  const text = words.length ? words.join(' ') : process.stdin.isTTY ? '' : readFileSync(0, 'utf8').trim();
  if (!text) throw new CliError(`give the ${what} as words or on standard input`, 2);
  return text;
}

/** `fjord llm chat [PROMPT]`: one question to a model, its answer printed as text. */
export const llmChat: Action = {
  words: ['llm', 'chat'],
  args: ['prompt'],
  op: 'llmChat',
  help: `Sends PROMPT (or standard input) as one user message and prints the model's answer.
  --model NAME     the model (default: the first of fjord llm models)
  --system TEXT    a system message before it
-o json or -o yaml print the whole completion (usage, finish reason).`,
  async run(a, words) {
    const prompt = promptOf(words, 'prompt');
    const system = takeFlag(a, 'system');
    const model = takeFlag(a, 'model') ?? (await firstModel(a));
    const messages = [
      ...(system ? [{ role: 'system', content: system }] : []),
      { role: 'user', content: prompt },
    ];
    const answer = (await a.call('llmChat', {
      body: JSON.stringify({ model, messages, ...extraFields(a) }),
    })) as { choices?: { message?: { content?: string | null } }[] };
    if (a.output !== 'table') print(answer, a.output, a.out);
    else a.out(`${answer.choices?.[0]?.message?.content ?? ''}\n`);
    return 0;
  },
};

/** `fjord chatbot ask <bot_id> QUESTION`: the bot's answer and the sources it cites. */
export const chatbotAsk: Action = {
  words: ['chatbot', 'ask'],
  args: ['bot_id', 'question'],
  op: 'chatbotChat',
  help: `Asks the bot QUESTION (the words after the bot, or standard input) and prints its answer and
citations. --session_id continues a conversation (the answer prints the session).`,
  async run(a, [botId, ...words]) {
    if (!botId) throw new CliError('usage: fjord chatbot ask <bot_id> <question…>', 2);
    const answer = await a.call('chatbotChat', {
      flags: [['bot_id', botId], ['message', promptOf(words, 'question')], ...a.flags],
    });
    a.flags.length = 0;
    print(answer, a.output, a.out);
    return 0;
  },
};

async function firstModel(a: ActionContext): Promise<string> {
  const list = (await a.call('listLlmModels', {})) as { data?: { id: string }[]; models?: { id: string }[] };
  const first = (list.data ?? list.models ?? [])[0]?.id;
  if (!first) throw new CliError('this Fjord serves no language model: give --model', 1);
  return first;
}

/** Other `--field value` flags (temperature, max_tokens …), typed as numbers where they look like one. */
function extraFields(a: ActionContext): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of a.flags.splice(0)) {
    const field = name.replace(/-/g, '_');
    const type = a.ops.get('llmChat')?.body?.get(field)?.type;
    out[field] =
      type === 'number' || type === 'integer' ? Number(value) : type === 'boolean' ? value === 'true' : value;
  }
  return out;
}
