import { describe, expect, it } from 'vitest';
import type { Usage } from './chat-types.js';
import { streamThrough } from './stream-through.js';
import type { UpstreamAnswer } from './upstream.js';

/** An upstream answer whose body is these SSE events, in one chunk each. */
function answerOf(events: string[]): UpstreamAnswer {
  const encoder = new TextEncoder();
  return {
    status: 200,
    headers: new Headers({ 'content-type': 'text/event-stream' }),
    body: new ReadableStream({
      start(c) {
        for (const e of events) c.enqueue(encoder.encode(e));
        c.close();
      },
    }),
    upstream: {} as UpstreamAnswer['upstream'],
    upstreamModel: 'up',
  };
}

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c1', created: 1, choices: [{ delta: { content } }] })}\n\n`;

/** Runs the stream; returns what was yielded, each marked with whether the call was recorded then. */
async function run(events: string[]) {
  const log: string[] = [];
  const record = async (_u: Usage, outcome: string) => {
    await new Promise((r) => setTimeout(r, 20)); // a store write that takes a while
    log.push(`recorded ${outcome}`);
  };
  for await (const out of streamThrough(
    answerOf(events),
    'alias',
    3,
    false,
    new AbortController().signal,
    record,
  ))
    log.push(out.includes('[DONE]') ? 'done' : out.includes('"error"') ? 'error' : 'chunk');
  return log;
}

describe('streamThrough records the call before the event that ends the stream', () => {
  // An SDK returns on [DONE] and raises on an error event: a client that reads its usage then
  // must find the call there.
  it('on [DONE]', async () => {
    expect(await run([chunk('Hi'), 'data: [DONE]\n\n'])).toEqual(['chunk', 'recorded ok', 'done']);
  });
  it("on the upstream's own error event", async () => {
    const error = `data: ${JSON.stringify({ error: { message: 'x', code: 'boom' } })}\n\n`;
    expect(await run([chunk('Hi'), error])).toEqual(['chunk', 'recorded upstream_error', 'error']);
  });
  it('on an answer that stops without [DONE]', async () => {
    expect(await run([chunk('Hi')])).toEqual(['chunk', 'recorded upstream_error', 'error']);
  });
});
