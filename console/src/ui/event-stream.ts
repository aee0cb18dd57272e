/**
 * Reads a Server-Sent Events answer fetched through the SDK (so the session's CSRF header goes
 * with it: an EventSource could not send it). Calls `on` with each event's name and parsed data
 * until the stream ends or `signal` aborts; resolves then.
 */
export async function readEvents(
  body: ReadableStream<Uint8Array>,
  on: (event: string, data: unknown) => void,
  signal: AbortSignal,
): Promise<void> {
  const reader = body
    .pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>)
    .getReader();
  signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), { once: true });
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done) return;
    buffer += value;
    const blocks = buffer.split('\n\n');
    buffer = blocks.pop() ?? '';
    for (const block of blocks) {
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trim());
      }
      if (!data.length) continue; // a comment or keep-alive
      try {
        on(event, JSON.parse(data.join('\n')));
      } catch {
        /* not JSON: not an event this console reads */
      }
    }
  }
}
