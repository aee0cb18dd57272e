import { CliError } from '../context.js';
import { print } from '../output.js';
import { buildRequest, refusal } from '../request.js';
import type { Action, ActionContext } from './action.js';

interface Line {
  time: string;
  instance: string;
  stream: string;
  text: string;
}

/**
 * `fjord apps logs <app_id> [--follow]`: the app's last lines, and with `--follow` each new one
 * as it is written (the API's event stream), until the instances stop or you press Ctrl-C.
 */
export const appsLogs: Action = {
  words: ['apps', 'logs'],
  args: ['app_id'],
  op: 'appsLogs',
  switches: ['follow'],
  help: `Prints the app's log lines, one a line: time, instance, stream and text (-o json: the
API's objects). --follow keeps printing new lines as the app writes them.`,
  async run(a, [appId, ...rest]) {
    if (!appId || rest.length)
      throw new CliError('usage: fjord apps logs <app_id> [--follow] [--lines N]', 2);
    if (!a.switches.has('follow')) {
      const answer = (await a.call('appsLogs', { positional: [appId], flags: a.flags })) as { lines: Line[] };
      if (a.output !== 'table') print(answer, a.output, a.out);
      else for (const l of answer.lines) a.out(lineText(l));
      return 0;
    }
    await follow(a, appId);
    return 0;
  },
};

const lineText = (l: Line) => `${l.time} ${l.instance} ${l.stream} ${l.text}\n`;

async function follow(a: ActionContext, appId: string) {
  const op = a.ops.get('appsLogs');
  if (!op) throw new CliError('this Fjord does not serve appsLogs');
  const { url, init } = buildRequest(a.ctx, op, {
    positional: [appId],
    flags: [...a.flags, ['follow', 'true']],
  });
  const res = await fetch(url, {
    ...init,
    headers: { ...(init.headers as object), accept: 'text/event-stream' },
  });
  if (!res.ok) {
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the text is the message
    }
    throw refusal(res, parsed, text);
  }
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      const name = /^event: (.*)$/m.exec(event)?.[1];
      if (name === 'end') return;
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (!data) continue;
      const line = JSON.parse(data) as Line;
      a.out(a.output === 'table' ? lineText(line) : `${JSON.stringify(line)}\n`);
    }
  }
}
