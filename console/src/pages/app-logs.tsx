import { useEffect, useRef, useState } from 'preact/hooks';
import { useApi } from '../context.js';

interface Line {
  time: string;
  instance: string;
  stream: string;
  text: string;
}

/**
 * An app's logs, streamed: the API's `follow` answer (Server-Sent Events) read through the SDK
 * as a stream, so the CSRF header goes with it (an EventSource could not send it). New lines
 * are appended as they come; the newest stays in view unless the reader scrolled up.
 */
export function LogStream({ app }: { app: string }) {
  const api = useApi();
  const [lines, setLines] = useState<Line[]>([]);
  const [state, setState] = useState('Connecting…');
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const stop = new AbortController();
    void (async () => {
      const { response } = await api
        .GET('/v1/apps/{app_id}/logs', {
          params: { path: { app_id: app }, query: { follow: true, lines: 200 } },
          parseAs: 'stream',
          signal: stop.signal,
        })
        .catch(() => ({ response: null }));
      if (!response?.ok || !response.body) return setState('The logs are not available.');
      setState('Streaming');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          const events = buffer.split('\n\n');
          buffer = events.pop() ?? '';
          const fresh: Line[] = [];
          for (const e of events) {
            const data = e
              .split('\n')
              .filter((l) => l.startsWith('data:'))
              .map((l) => l.slice(5).trim())
              .join('\n');
            if (!data) continue;
            try {
              fresh.push(JSON.parse(data) as Line);
            } catch {
              /* a comment or keep-alive */
            }
          }
          if (fresh.length) setLines((old) => [...old, ...fresh].slice(-1000));
        }
        setState('The stream ended (no instance is running).');
      } catch {
        if (!stop.signal.aborted) setState('The stream was interrupted.');
      }
    })();
    return () => stop.abort();
  }, [api, app]);
  useEffect(() => {
    const el = box.current;
    if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 80) el.scrollTop = el.scrollHeight;
  }, [lines]);
  return (
    <>
      <p role="status">{state}</p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to be scrolled */}
      <div class="logs" ref={box} tabIndex={0} role="log" aria-label={`Logs of ${app}`}>
        {lines.length === 0 ? (
          <p>No log lines yet.</p>
        ) : (
          lines.map((l, i) => (
            <div key={i} class={`log-${l.stream}`}>
              <time>{l.time}</time> <span>{l.instance}</span> {l.text}
            </div>
          ))
        )}
      </div>
    </>
  );
}
