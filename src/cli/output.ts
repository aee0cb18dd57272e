/** Prints an answer: `-o json` as is; otherwise a list as a table, an object as `field  value` lines. */
export function print(answer: unknown, format: 'table' | 'json', write: (s: string) => void) {
  if (answer === null || answer === undefined) return;
  if (typeof answer === 'string') return write(answer.endsWith('\n') ? answer : `${answer}\n`);
  if (format === 'json') return write(`${JSON.stringify(answer, null, 2)}\n`);
  const rows = listIn(answer);
  if (rows) return write(table(rows));
  const entries = Object.entries(answer as Record<string, unknown>);
  const width = Math.max(...entries.map(([k]) => k.length));
  write(entries.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join('\n') + '\n');
}

/** The rows of a list answer: an array, or the one array of an object like `{zones: […], total}`. */
function listIn(answer: unknown): Record<string, unknown>[] | null {
  if (Array.isArray(answer)) return answer as Record<string, unknown>[];
  const arrays = Object.values(answer as object).filter(Array.isArray);
  return arrays.length === 1 && (arrays[0] as unknown[]).every((r) => r && typeof r === 'object')
    ? (arrays[0] as Record<string, unknown>[])
    : null;
}

function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '(none)\n';
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))].slice(0, 8);
  const cells = rows.map((r) => columns.map((c) => cell(r[c]).slice(0, 48)));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

const cell = (v: unknown): string =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
