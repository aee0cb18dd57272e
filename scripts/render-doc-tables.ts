// Rewrites the two reference tables that are generated from code: the variable table of
// docs/configuration.md (from src/config/variables.ts) and the bucket table of
// docs/rate-limits.md (from src/kernel/limits/table.ts). Areas built in parallel each add rows;
// rendering them from the source of truth keeps the pages whole after a merge.
//
//   npx tsx scripts/render-doc-tables.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { VARIABLES, type VariableSpec } from '../src/config/variables.js';
import { DEFAULT_RATE_LIMITS } from '../src/kernel/limits/table.js';

function replaceSection(path: string, heading: string, nextHeading: string, body: string) {
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(heading);
  const end = text.indexOf(nextHeading, start);
  if (start < 0 || end < 0) throw new Error(`${path}: cannot find ${heading} … ${nextHeading}`);
  writeFileSync(path, `${text.slice(0, start)}${heading}\n\n${body}\n\n${text.slice(end)}`);
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

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

const variables = [
  '| Variable | Default | Meaning |',
  '| --- | --- | --- |',
  ...Object.entries(VARIABLES as Record<string, VariableSpec>).map(
    ([name, spec]) =>
      `| \`${name}\` | ${spec.default ? `\`${cell(spec.default)}\`` : '—'} | ${meaning(spec)} |`,
  ),
].join('\n');
replaceSection('docs/configuration.md', '## Variables', 'Value formats:', variables);

const buckets = [
  '| Bucket | Requests | Window | Burst | Source |',
  '| --- | --- | --- | --- | --- |',
  ...Object.entries(DEFAULT_RATE_LIMITS).map(
    ([name, row]) =>
      `| \`${name}\` | ${row.points} | ${row.duration} s | ${row.burst ?? '—'} | ${cell(row.doc)} |`,
  ),
].join('\n');
replaceSection('docs/rate-limits.md', '## The table', '## Which bucket a request uses', buckets);
console.log('docs/configuration.md and docs/rate-limits.md tables rendered');
