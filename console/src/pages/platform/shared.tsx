import type { ComponentChildren } from 'preact';

/** The path's segments under the area (`/speech/abc` → `['abc']`). */
export const subPath = (path: string): string[] => path.split('/').filter(Boolean).slice(1);

/**
 * Reads a Server-Sent Events answer as it arrives and hands each event's `data` to `onData`
 * (the SDK's `parseAs: 'stream'`, so the CSRF header goes with the request: an EventSource could
 * not send it, nor POST a body).
 */
export async function readEvents(response: Response, onData: (data: string) => void): Promise<void> {
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const events = buffer.split('\n\n');
    buffer = events.pop() ?? '';
    for (const e of events) {
      const data = e
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data) onData(data);
    }
  }
}

export interface Bar {
  label: string;
  value: number;
}

/**
 * A bar chart in SVG, drawn here (a few bars need no chart library): each bar labelled, and the
 * numbers also in a table for screen readers and copying.
 */
export function BarChart({ bars, title, unit }: { bars: Bar[]; title: string; unit: string }) {
  if (bars.length === 0) return <p class="empty">Nothing to chart yet.</p>;
  const max = Math.max(...bars.map((b) => b.value), 1e-9);
  const w = 560;
  const row = 26;
  const labelW = 160;
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${w} ${bars.length * row + 4}`}
        role="img"
        aria-label={`${title}: ${bars.map((b) => `${b.label} ${fmt(b.value)} ${unit}`).join(', ')}`}
      >
        {bars.map((b, i) => (
          <g key={b.label} transform={`translate(0 ${i * row})`}>
            <text x="0" y="17" class="chart-label">
              {b.label}
            </text>
            <rect
              x={labelW}
              y="4"
              height="18"
              width={Math.max(1, ((w - labelW - 90) * b.value) / max)}
              class="chart-bar"
            />
            <text x={labelW + 6 + ((w - labelW - 90) * b.value) / max} y="17" class="chart-value">
              {fmt(b.value)}
            </text>
          </g>
        ))}
      </svg>
      <figcaption>
        {title} ({unit})
      </figcaption>
    </figure>
  );
}

export const fmt = (n: number): string =>
  Number.isInteger(n) ? n.toLocaleString('en') : n.toLocaleString('en', { maximumFractionDigits: 6 });

/** A labelled field: the control is the child; `id` ties the label to it. */
export function Field({ id, label, children }: { id: string; label: string; children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
    </div>
  );
}

/** A status word as a badge, coloured by how it went. */
export function State({ value }: { value: string }) {
  const tone = /ready|completed|delivered|verified|active|approved|online|low/i.test(value)
    ? 'good'
    : /fail|error|undeliver|expired|cancel|reject|high|critical/i.test(value)
      ? 'bad'
      : 'wait';
  return <span class={`state state-${tone}`}>{value}</span>;
}
