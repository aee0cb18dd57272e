/**
 * Server-Sent Events, split as they arrive: `feed` takes bytes and returns every complete event
 * (the text between blank lines), keeping a partial one for the next call. Nothing waits for more
 * than one event, so a stream passes through without buffering.
 */
export class SseSplitter {
  private pending = '';
  private readonly decoder = new TextDecoder();

  feed(bytes: Uint8Array): string[] {
    this.pending += this.decoder.decode(bytes, { stream: true }).replace(/\r\n?/g, '\n');
    const events: string[] = [];
    let end = this.pending.indexOf('\n\n');
    while (end >= 0) {
      events.push(this.pending.slice(0, end));
      this.pending = this.pending.slice(end + 2);
      end = this.pending.indexOf('\n\n');
    }
    return events;
  }

  /** What is left at the end of the stream (an event without its final blank line). */
  rest(): string | null {
    const tail = (this.pending + this.decoder.decode()).trim();
    this.pending = '';
    return tail ? tail : null;
  }
}

/** The `data:` payload of an event (joined when it spans lines), or null for comments and others. */
export function dataOf(event: string): string | null {
  const lines = event.split('\n').filter((l) => l.startsWith('data:'));
  if (lines.length === 0) return null;
  return lines.map((l) => l.slice(5).replace(/^ /, '')).join('\n');
}

export const sseEvent = (data: string) => `data: ${data}\n\n`;
