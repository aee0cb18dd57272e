// The CLI's tables for every operation's example answer, against the committed golden files
// (regenerate with `npm run cli:golden` and review the diff), and the printer's promise checked
// on each: every field name and every scalar value of the answer is somewhere in its table.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exampleAnswer, goldenTables } from './golden.js';
import { type OpenApiDocument, operationsOf } from './operations.js';
import { render } from './output.js';

const root = join(import.meta.dirname, '..', '..');
const doc = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')) as OpenApiDocument;
const dir = join(import.meta.dirname, 'golden');

describe('the table printer', () => {
  it('prints every operation’s example answer as the golden files say', () => {
    const tables = goldenTables(doc);
    expect(
      readdirSync(dir)
        .filter((f) => f.endsWith('.txt'))
        .sort(),
    ).toEqual([...tables.keys()].sort());
    for (const [file, text] of tables) expect(readFileSync(join(dir, file), 'utf8'), file).toBe(text);
  });

  it('never hides a field: every key and scalar value of every example is in its table', () => {
    let checked = 0;
    for (const op of operationsOf(doc).values()) {
      const example = exampleAnswer(op);
      if (example === undefined || example === null) continue;
      const text = render(example, 'table');
      const upper = text.toUpperCase();
      for (const [key, value] of leaves(example)) {
        // A column heading is the key in capitals; a field line or section is the key itself.
        if (key !== null)
          expect(text.includes(key) || upper.includes(key.toUpperCase()), `${op.id}: ${key}`).toBe(true);
        if (value !== null && value !== undefined)
          expect(text.includes(String(value)), `${op.id}: ${key}=${String(value)}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(3000);
  });

  it('shows a one-time secret beside a list of strings (the device create answer)', () => {
    const text = render(
      { device_id: 'd1', tags: [], mqtt_credentials: { username: 'd1', password: 's3cret' } },
      'table',
    );
    expect(text).toContain('s3cret');
    expect(text).toMatch(/^tags\s+\(none\)$/m);
  });

  it('prints a wrapped list as its table, then the other fields', () => {
    const text = render(
      { buckets: [{ bucket_name: 'a' }, { bucket_name: 'b', region: 'x' }], total: 2 },
      'table',
    );
    expect(text).toBe('BUCKET_NAME  REGION\na\nb            x\n\ntotal  2\n');
  });

  it('prints YAML and JSON as the API sent the answer', () => {
    expect(render({ a: [1, { b: null }] }, 'yaml')).toBe('a:\n  - 1\n  - b: null\n');
    expect(JSON.parse(render({ a: [1] }, 'json'))).toEqual({ a: [1] });
  });
});

/** Every [key, scalar] pair of a value, depth first (array items give a null key). */
function* leaves(value: unknown, key: string | null = null): Generator<[string | null, unknown]> {
  if (Array.isArray(value)) {
    if (value.length === 0) yield [key, null];
    for (const v of value) yield* leaves(v, null);
  } else if (value !== null && typeof value === 'object') {
    if (key !== null) yield [key, null];
    for (const [k, v] of Object.entries(value)) yield* leaves(v, k);
  } else yield [key, value];
}
