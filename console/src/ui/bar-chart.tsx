/** One bar: its name and its value. */
export interface Bar {
  label: string;
  value: number;
}

/**
 * Horizontal bars for counts by category (queries by record type), drawn in HTML rather than on a
 * canvas: each bar is a table row, so the numbers are read out by assistive technology as they
 * are, and the chart follows the theme's colours and the page's width without a resize hook.
 */
export function BarChart({ label, bars, unit = '' }: { label: string; bars: Bar[]; unit?: string }) {
  const top = Math.max(1, ...bars.map((b) => b.value));
  return (
    <table class="bar-chart">
      <caption>{label}</caption>
      <tbody>
        {bars.map((b) => (
          <tr key={b.label}>
            <th scope="row">{b.label}</th>
            <td>
              <span class="bar" style={{ width: `${(100 * b.value) / top}%` }} aria-hidden="true" />
              <span class="bar-value">
                {b.value.toLocaleString()}
                {unit}
              </span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
