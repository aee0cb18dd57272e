// Rewrites the reference tables that are generated from code: the variable table of
// docs/configuration.md (from src/config/variables.ts), the bucket table of
// docs/rate-limits.md (from src/kernel/limits/table.ts) and the quota table of docs/limits.md
// (from src/kernel/limits/quotas.ts). Areas built in parallel each add rows;
// rendering them from the source of truth keeps the pages whole after a merge.
//
//   npx tsx scripts/render-doc-tables.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { VARIABLES, type VariableSpec } from '../src/config/variables.js';
import { DEFAULT_LIMITS, type LimitRow, PLANS } from '../src/kernel/limits/quotas.js';
import { DEFAULT_RATE_LIMITS } from '../src/kernel/limits/table.js';

function replaceSection(path: string, heading: string, nextHeading: string, body: string) {
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(heading);
  const end = text.indexOf(nextHeading, start);
  if (start < 0 || end < 0) throw new Error(`${path}: cannot find ${heading} … ${nextHeading}`);
  writeFileSync(path, `${text.slice(0, start)}${heading}\n\n${body}\n\n${text.slice(end)}`);
}

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

const variables = table(
  ['Variable', 'Default', 'Meaning'],
  Object.entries(VARIABLES as Record<string, VariableSpec>).map(([name, spec]) => [
    `\`${name}\``,
    spec.default ? `\`${cell(spec.default)}\`` : '—',
    meaning(spec),
  ]),
);
replaceSection('docs/configuration.md', '## Variables', 'Value formats:', variables);

const buckets = table(
  ['Bucket', 'Requests', 'Window', 'Burst', 'Source'],
  Object.entries(DEFAULT_RATE_LIMITS).map(([name, row]) => [
    `\`${name}\``,
    String(row.points),
    `${row.duration} s`,
    row.burst === undefined ? '—' : String(row.burst),
    cell(row.doc),
  ]),
);
replaceSection('docs/rate-limits.md', '## The table', '## Which bucket a request uses', buckets);
function quantity(v: number | null, unit: LimitRow['unit']): string {
  if (v === null) return 'unlimited';
  if (unit === 'bytes' && v >= 1e9) return `${v / 1e9} GB`;
  if (unit === 'megabytes') return v >= 1024 ? `${v / 1024} GB` : `${v} MB`;
  if (unit === 'seconds') return `${v} s`;
  return String(v);
}
const quotas = table(
  ['Limit', ...PLANS, 'What it counts'],
  Object.entries(DEFAULT_LIMITS as Record<string, LimitRow>).map(([name, row]) => {
    const v = row.value;
    const perPlan = PLANS.map((p) => quantity(v === null || typeof v === 'number' ? v : v[p], row.unit));
    return [`\`${name}\``, ...perPlan, cell(row.doc)];
  }),
);
replaceSection('docs/limits.md', '## The table', '## Changing a limit', quotas);
console.log('docs/configuration.md, docs/rate-limits.md and docs/limits.md tables rendered');
