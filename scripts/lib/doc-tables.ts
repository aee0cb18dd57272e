// The reference tables generated from code: the variable table of docs/configuration.md (from
// src/config/variables.ts), the bucket table of docs/rate-limits.md (from
// src/kernel/limits/table.ts) and the quota table of docs/limits.md (from
// src/kernel/limits/quotas.ts). scripts/render-doc-tables.ts writes them; test/kernel/docs.test.ts
// fails when a committed page differs from its rendering.
import { VARIABLES, type VariableSpec } from '../../src/config/variables.js';
import { DEFAULT_LIMITS, type LimitRow, PLANS } from '../../src/kernel/limits/quotas.js';
import { DEFAULT_RATE_LIMITS } from '../../src/kernel/limits/table.js';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A Markdown table with padded columns, so the page reads well as plain text too. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function meaning(spec: VariableSpec): string {
  const range =
    spec.min !== undefined && spec.max !== undefined
      ? ` From ${spec.min} to ${spec.max}.`
      : spec.min !== undefined
        ? ` At least ${spec.min}.`
        : '';
  const values =
    spec.kind === 'enum' && spec.values ? ` One of ${spec.values.map((v) => `\`${v}\``).join(', ')}.` : '';
  return cell(`${spec.doc}${range}${values}`);
}

const variables = () =>
  table(
    ['Variable', 'Default', 'Meaning'],
    Object.entries(VARIABLES as Record<string, VariableSpec>).map(([name, spec]) => [
      `\`${name}\``,
      spec.default ? `\`${cell(spec.default)}\`` : '—',
      meaning(spec),
    ]),
  );
const buckets = () =>
  table(
    ['Bucket', 'Requests', 'Window', 'Burst', 'Source'],
    Object.entries(DEFAULT_RATE_LIMITS).map(([name, row]) => [
      `\`${name}\``,
      String(row.points),
      `${row.duration} s`,
      row.burst === undefined ? '—' : String(row.burst),
      cell(row.doc),
    ]),
  );
function quantity(v: number | null, unit: LimitRow['unit']): string {
  if (v === null) return 'unlimited';
  if (unit === 'bytes' && v >= 1e9) return `${v / 1e9} GB`;
  if (unit === 'megabytes') return v >= 1024 ? `${v / 1024} GB` : `${v} MB`;
  if (unit === 'seconds') return `${v} s`;
  return String(v);
}
const quotas = () =>
  table(
    ['Limit', ...PLANS, 'What it counts'],
    Object.entries(DEFAULT_LIMITS as Record<string, LimitRow>).map(([name, row]) => {
      const v = row.value;
      const perPlan = PLANS.map((p) => quantity(v === null || typeof v === 'number' ? v : v[p], row.unit));
      return [`\`${name}\``, ...perPlan, cell(row.doc)];
    }),
  );
/** Each page with a generated table, and the section of it the table fills. */
const SECTIONS = [
  { path: 'docs/configuration.md', heading: '## Variables', next: 'Value formats:', body: variables },
  {
    path: 'docs/rate-limits.md',
    heading: '## The table',
    next: '## Which bucket a request uses',
    body: buckets,
  },
  { path: 'docs/limits.md', heading: '## The table', next: '## Changing a limit', body: quotas },
];

/**
 * Each page with its generated tables rendered from the code, from `read(path)` (the page as it
 * is now): scripts/render-doc-tables.ts writes them, a test checks the committed pages equal them.
 */
export function renderDocTables(read: (path: string) => string): Map<string, string> {
  const pages = new Map<string, string>();
  for (const { path, heading, next, body } of SECTIONS) {
    const text = pages.get(path) ?? read(path);
    const start = text.indexOf(heading);
    const end = text.indexOf(next, start);
    if (start < 0 || end < 0) throw new Error(`${path}: cannot find ${heading} … ${next}`);
    pages.set(path, `${text.slice(0, start)}${heading}\n\n${body()}\n\n${text.slice(end)}`);
  }
  return pages;
}
