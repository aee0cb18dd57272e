import { stringify as toYaml } from 'yaml';

export type OutputFormat = 'table' | 'json' | 'yaml';
export const OUTPUT_FORMATS: OutputFormat[] = ['table', 'json', 'yaml'];

/**
 * Prints an answer. `-o json` and `-o yaml` print it as the API sent it. The table form never
 * drops a field: a list is a table with a column for every key its rows have; an object is a
 * `field  value` line for every scalar field, then each nested object or list under its name,
 * indented. A list answer wrapped in an object (`{buckets: […], total: 2}`) prints its table
 * first and the other fields after it.
 */
export function print(answer: unknown, format: OutputFormat, write: (s: string) => void) {
  write(render(answer, format));
}

export function render(answer: unknown, format: OutputFormat): string {
  if (answer === null || answer === undefined) return '';
  if (typeof answer === 'string') return answer.endsWith('\n') ? answer : `${answer}\n`;
  if (format === 'json') return `${JSON.stringify(answer, null, 2)}\n`;
  if (format === 'yaml') return toYaml(answer);
  return tableForm(answer, '').join('\n') + '\n';
}

type Row = Record<string, unknown>;

const isObject = (v: unknown): v is Row => v !== null && typeof v === 'object' && !Array.isArray(v);
/** A value that fits on one line: not an object, and not a list holding objects or lists. */
const isInline = (v: unknown): boolean =>
  isObject(v)
    ? Object.keys(v).length === 0
    : !(Array.isArray(v) && v.some((x) => x !== null && typeof x === 'object'));

function tableForm(value: unknown, indent: string): string[] {
  if (Array.isArray(value)) return isInline(value) ? [indent + inline(value)] : table(value, indent);
  if (!isObject(value)) return [indent + inline(value)];
  const entries = Object.entries(value);
  const nested = entries.filter(([, v]) => !isInline(v));
  const scalars = entries.filter(([, v]) => isInline(v));
  // A list wrapped in an object: its table first, as `doctl … list` prints one.
  if (nested.length === 1 && Array.isArray(nested[0]![1]) && (nested[0]![1] as unknown[]).length > 0)
    return [
      ...table(nested[0]![1] as unknown[], indent),
      ...(scalars.length ? ['', ...pairs(scalars, indent)] : []),
    ];
  const lines = pairs(scalars, indent);
  for (const [key, v] of nested) {
    if (lines.length) lines.push('');
    const count = Array.isArray(v) ? ` (${v.length})` : '';
    lines.push(`${indent}${key}${count}:`, ...tableForm(v, `${indent}  `));
  }
  return lines.length ? lines : [`${indent}(none)`];
}

/** `field  value` lines, the names padded to one width; a multi-line value stays indented. */
function pairs(entries: [string, unknown][], indent: string): string[] {
  if (entries.length === 0) return [];
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => {
    const text = inline(v).replace(/\n/g, `\n${indent}${' '.repeat(width + 2)}`);
    return `${indent}${k.padEnd(width)}  ${text}`.trimEnd();
  });
}

/** A table of `rows`, a column for every key any row has (first seen, first shown). */
function table(rows: unknown[], indent: string): string[] {
  if (rows.length === 0) return [`${indent}(none)`];
  if (!rows.every(isObject)) return rows.map((r) => indent + cell(r));
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    (indent + values.map((v, i) => v.padEnd(widths[i]!)).join('  ')).trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)];
}

/** A value on one line: lists joined with commas, an empty list `(none)`. */
function inline(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.length === 0 ? '(none)' : v.map(cell).join(', ');
  if (isObject(v)) return Object.keys(v).length === 0 ? '(none)' : JSON.stringify(v);
  return String(v);
}

/** A table cell: one line, nested values as compact JSON (whole: a cell is never cut short). */
function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return Array.isArray(v) && isInline(v) ? inline(v) : JSON.stringify(v);
  return String(v).replace(/\r?\n/g, '\\n');
}
