import type { OpenApiDocument } from './operations.js';
import { operationsOf } from './operations.js';
import { render } from './output.js';
import { exampleOf } from './schema.js';

/**
 * The table the CLI prints for every operation's example answer (made from its response schema
 * with every optional field filled in), one text per API area. scripts/cli-golden.ts writes them
 * to src/cli/golden/; output.golden.test.ts checks the printer still prints exactly those.
 */
export function goldenTables(doc: OpenApiDocument): Map<string, string> {
  const areas = new Map<string, string[]>();
  const tagOf = new Map<string, string>();
  for (const methods of Object.values(doc.paths))
    for (const op of Object.values(methods))
      if (op.operationId) tagOf.set(op.operationId, (op as { tags?: string[] }).tags?.[0] ?? 'Other');
  const ops = [...operationsOf(doc).values()].sort((a, b) => a.id.localeCompare(b.id));
  for (const op of ops) {
    const file = `${slug(tagOf.get(op.id) ?? 'Other')}.txt`;
    const example = exampleAnswer(op);
    const text = example === undefined ? '(no answer body)\n' : render(example, 'table') || '(empty)\n';
    if (!areas.has(file)) areas.set(file, []);
    areas.get(file)!.push(`## ${op.id}  (${op.method} ${op.path})\n\n${text}`);
  }
  return new Map([...areas].map(([file, parts]) => [file, parts.join('\n')]));
}

/** The example answer of an operation, or undefined when it answers no body. */
export function exampleAnswer(op: ReturnType<typeof operationsOf> extends Map<string, infer O> ? O : never) {
  if (!op.response) return undefined;
  return exampleOf(op.response.schema, 'value');
}

const slug = (tag: string) =>
  tag
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
