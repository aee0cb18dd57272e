#!/usr/bin/env node
// Renders a run of Ceph's s3-tests (scripts/s3-tests/run.mjs's JSON summary) into docs/s3.md,
// between its `<!-- s3-tests:begin -->` and `<!-- s3-tests:end -->` markers: the counts, then each
// failure group of scripts/s3-tests/causes.json with the tests of the run that are in it.
//
//   node scripts/s3-tests/render.mjs [results.json] [--check]
//
// A failed test that no group names is listed as not yet explained; a group's test that passed
// is left out of it (and said on stderr, so a stale group is seen). --check exits 1 when
// docs/s3.md is not what the summary renders to, or when a failure is unexplained.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const DOC = resolve(HERE, '../../docs/s3.md');
const BEGIN = '<!-- s3-tests:begin (scripts/s3-tests/render.mjs writes this part) -->';
const END = '<!-- s3-tests:end -->';

const KIND = {
  aws: 'AWS answers as Fjord does',
  client: 'The client, not Fjord',
  ceph: 'Ceph-specific',
  deliberate: 'Deliberate',
  open: 'Open',
};

export function render(summary, causes) {
  const failing = Object.entries(summary.tests)
    .filter(([, t]) => t.outcome === 'failed' || t.outcome === 'error')
    .map(([name]) => name);
  const failingSet = new Set(failing);
  const claimed = new Set();
  const rows = [];
  for (const group of causes) {
    const tests = group.tests.filter((t) => failingSet.has(t));
    for (const t of group.tests) {
      if (!failingSet.has(t)) console.error(`render: ${t} is in a group but did not fail in this run`);
      claimed.add(t);
    }
    if (tests.length) rows.push({ kind: group.kind, cause: group.cause, tests });
  }
  const unexplained = failing.filter((t) => !claimed.has(t));
  if (unexplained.length) rows.push({ kind: 'open', cause: 'Not yet explained.', tests: unexplained });
  const c = summary.counts;
  const short = (t) => `\`${t.split('::').pop()}\``;
  const cell = (s) => s.replace(/\|/g, '\\|');
  const row = (label, k) =>
    `| ${label} | ${k.selected} | ${k.passed} | ${k.failed} | ${k.error} | ${k.skipped} |`;
  const setting = summary.objectOwnership
    ? `, \`FJORD_S3_DEFAULT_OBJECT_OWNERSHIP=${summary.objectOwnership}\``
    : '';
  const lines = [
    BEGIN,
    '',
    `s3-tests \`${summary.suite}\`, boto3 ${summary.boto3}${setting}:`,
    '',
    '| run | selected | passed | failed | errors | skipped |',
    '| --- | -------: | -----: | -----: | -----: | ------: |',
  ];
  if (summary.rerun) {
    const of = summary.rerun.of;
    lines.push(row(`${of.date.slice(0, 10)}, Fjord \`${of.fjord}\``, of.counts));
    lines.push(
      row(
        `${summary.date.slice(0, 10)}, Fjord \`${summary.fjord}\`: the ${summary.rerun.tests} that failed, run again`,
        c,
      ),
    );
  } else lines.push(row(`${summary.date.slice(0, 10)}, Fjord \`${summary.fjord}\``, c));
  lines.push(
    '',
    'What failed, by cause:',
    '',
    '| tests | kind | cause | which |',
    '| ----: | ---- | ----- | ----- |',
    ...rows.map(
      (r) => `| ${r.tests.length} | ${KIND[r.kind]} | ${cell(r.cause)} | ${r.tests.map(short).join(', ')} |`,
    ),
    '',
    END,
  );
  return { text: lines.join('\n'), unexplained };
}

/** The document as biome formats it (it aligns Markdown tables). */
function formatted(markdown) {
  const biome = resolve(HERE, '../../node_modules/.bin/biome');
  return execFileSync(biome, ['format', `--stdin-file-path=${DOC}`], { input: markdown, encoding: 'utf8' });
}

function main() {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const file = args.find((a) => !a.startsWith('--')) ?? join(HERE, 'results.json');
  const summary = JSON.parse(readFileSync(file, 'utf8'));
  const causes = JSON.parse(readFileSync(join(HERE, 'causes.json'), 'utf8'));
  const { text, unexplained } = render(summary, causes);
  const doc = readFileSync(DOC, 'utf8');
  const from = doc.indexOf(BEGIN);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error(`docs/s3.md has no ${BEGIN} … ${END} section`);
  // Formatted as the repository's formatter formats every doc, so --check and `biome check` agree.
  const next = formatted(doc.slice(0, from) + text + doc.slice(to + END.length));
  if (unexplained.length) console.error(`render: ${unexplained.length} failures not yet explained`);
  if (check) {
    if (next !== doc || unexplained.length) {
      console.error('render: docs/s3.md is not the rendering of the summary');
      process.exit(1);
    }
    return;
  }
  writeFileSync(DOC, next);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
