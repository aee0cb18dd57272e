import type { Alias } from './aliases.js';
import type { Field, Operation } from './operations.js';
import { render } from './output.js';
import { enumOf, exampleOf, nullable, type Schema, typeName } from './schema.js';

/**
 * `fjord <command> --help`: the command's line, what the operation does, every argument and flag
 * with its type, allowed values and whether it is required, an example command made from the
 * schema, and an example of the answer as the command prints it.
 */
export function commandHelp(
  op: Operation,
  opts: { words: string[]; args?: string[]; alias?: Alias; extra?: string },
): string {
  const args = opts.args ?? op.pathParams;
  const fields = allFields(op);
  const positional = args.map((name) => [name, fields.get(name)] as const);
  const flags = [...fields].filter(([name]) => !args.includes(name));
  const lines = [
    `usage: fjord ${[...opts.words, ...args.map((a) => `<${a}>`)].join(' ')}${flags.length ? ' [--field value…]' : ''}`,
    '',
    `  ${op.summary || op.id}`,
    `  ${op.method} ${op.path}   (fjord op ${op.id})`,
  ];
  if (op.description) lines.push(`  ${op.description.split('\n')[0]}`);
  if (positional.length) {
    lines.push('', 'Arguments:');
    lines.push(...fieldLines(positional.map(([name, f]) => [`<${name}>`, f])));
  }
  if (flags.length) {
    lines.push(
      '',
      'Flags (dashes or underscores; numbers, true/false, a,b lists and JSON objects are typed):',
    );
    lines.push(...fieldLines(flags.map(([name, f]) => [`--${name}`, f])));
  }
  if (opts.extra) lines.push('', opts.extra.trimEnd());
  lines.push('', 'Options:');
  lines.push('  -o table|json|yaml    how to print the answer (table by default)');
  if (op.body) lines.push('  --body JSON|@file|-   the whole request body instead of flags');
  if (opts.alias?.wait)
    lines.push(
      `  --wait                poll until ${opts.alias.wait.until.join(', ')}, with a progress line on stderr`,
    );
  lines.push('', 'Example:', `  ${exampleCommand(op, opts.words, args)}`);
  if (op.response) {
    const answer = exampleOf(op.response.schema, 'value');
    if (answer !== null && answer !== undefined) {
      lines.push('', `Answer (${op.response.contentType}), printed as a table:`);
      lines.push(
        ...render(answer, 'table')
          .trimEnd()
          .split('\n')
          .map((l) => `  ${l}`.trimEnd()),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Path parameters, then query parameters, then body fields, each once. */
function allFields(op: Operation): Map<string, Field> {
  const out = new Map<string, Field>();
  for (const [name, f] of op.pathSchemas) out.set(name, { ...f, required: true });
  for (const [name, f] of op.queryParams) if (!out.has(name)) out.set(name, f);
  for (const [name, f] of op.body ?? []) if (!out.has(name)) out.set(name, f);
  return out;
}

function fieldLines(fields: (readonly [string, Field | undefined])[]): string[] {
  const rows = fields.map(([label, f]) => [
    label,
    f ? describeType(f.schema) : 'string',
    f?.required ? 'required' : '',
    f ? describeField(f.schema) : '',
  ]);
  const w0 = Math.max(...rows.map((r) => r[0]!.length));
  const w1 = Math.max(...rows.map((r) => r[1]!.length));
  return rows.map(([label, type, req, text]) =>
    `  ${label!.padEnd(w0)}  ${type!.padEnd(w1)}  ${req!.padEnd(8)}  ${text}`.trimEnd(),
  );
}

function describeType(s: Schema): string {
  return `${typeName(s)}${nullable(s) ? '|null' : ''}`;
}

/** The field's description, allowed values, default and bounds, on one line. */
function describeField(s: Schema): string {
  const parts: string[] = [];
  const desc = s.description ?? (s.anyOf ?? s.oneOf ?? []).find((a) => a.description)?.description;
  if (desc) parts.push(desc.split('\n')[0]!);
  const values = enumOf(s);
  if (values) parts.push(`one of: ${values.join(', ')}`);
  if (s.default !== undefined) parts.push(`default: ${JSON.stringify(s.default)}`);
  const bounded = [s, ...(s.anyOf ?? [])] as (Schema & { maxLength?: number; maximum?: number })[];
  for (const b of bounded) {
    if (b.minLength !== undefined || b.maxLength !== undefined)
      parts.push(`${b.minLength ?? 0}-${b.maxLength ?? '…'} characters`);
    if (b.minimum !== undefined || b.maximum !== undefined)
      parts.push(`${b.minimum ?? '…'}-${b.maximum ?? '…'}`);
    if (b.pattern) parts.push(`matching ${b.pattern}`);
  }
  return parts.join('; ');
}

/** A command line that would work: the positional arguments and the required flags, from examples. */
export function exampleCommand(op: Operation, words: string[], args: string[]): string {
  const fields = allFields(op);
  const parts = ['fjord', ...words];
  for (const name of args) parts.push(quote(exampleOf(fields.get(name)?.schema, name)));
  const required = [...fields].filter(([name, f]) => f.required && !args.includes(name));
  for (const [name, f] of required) parts.push(`--${name}`, quote(exampleOf(f.schema, name)));
  return parts.join(' ');
}

function quote(value: unknown): string {
  const text =
    typeof value === 'string'
      ? value
      : Array.isArray(value) && value.every((v) => typeof v !== 'object')
        ? value.join(',')
        : JSON.stringify(value);
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
