/**
 * JSON Schema as the CLI reads it: the OpenAPI document's request and response schemas, reduced
 * to what a person needs (a type name, the allowed values) and turned into an example value.
 */
export interface Schema {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  minimum?: number;
  minLength?: number;
  pattern?: string;
}

/** The alternatives of a union without `null`: `anyOf: [string, null]` reads as a string. */
function alternatives(s: Schema): Schema[] {
  const union = s.anyOf ?? s.oneOf;
  if (!union) return [s];
  return union.flatMap(alternatives).filter((a) => a.type !== 'null');
}

/** True when the schema admits `null` (shown as "or null" in help). */
export const nullable = (s: Schema): boolean =>
  (s.anyOf ?? s.oneOf ?? []).some((a) => a.type === 'null' || nullable(a)) ||
  (Array.isArray(s.type) && s.type.includes('null'));

/** The fixed values a field takes (`anyOf` of one-value enums included), or null when it is free. */
export function enumOf(s: Schema): unknown[] | null {
  const alts = alternatives(s);
  const values: unknown[] = [];
  for (const a of alts) {
    if (a.enum) values.push(...a.enum);
    else if (a.const !== undefined) values.push(a.const);
    else return null;
  }
  return values.length ? values : null;
}

/** A short type name: `string`, `integer`, `string[]`, `object`, `date-time` … */
export function typeName(s: Schema): string {
  const alts = alternatives(s);
  const names = [
    ...new Set(
      alts.map((a) => {
        if (a.allOf) return 'object';
        const t = Array.isArray(a.type) ? a.type.find((x) => x !== 'null') : a.type;
        if (t === 'array') return `${a.items ? typeName(a.items) : 'any'}[]`;
        if (t === 'string' && a.format) return a.format;
        return t ?? (a.properties ? 'object' : a.enum ? typeof a.enum[0] : 'any');
      }),
    ),
  ];
  return names.join('|') || 'any';
}

/** The JSON type a flag's text converts to (`--count 3` is a number, `--tags a,b` a list). */
export function jsonType(s: Schema | undefined): string | undefined {
  if (!s) return undefined;
  const a = alternatives(s)[0];
  if (!a) return undefined;
  if (a.allOf || a.properties) return 'object';
  return Array.isArray(a.type) ? a.type.find((x) => x !== 'null') : a.type;
}

/** The object's properties with `allOf` merged, and which of them are required. */
export function objectFields(s: Schema | undefined): {
  properties: Record<string, Schema>;
  required: string[];
} {
  const out = { properties: {} as Record<string, Schema>, required: [] as string[] };
  if (!s) return out;
  for (const part of [s, ...(s.allOf ?? [])]) {
    Object.assign(out.properties, part.properties ?? {});
    out.required.push(...(part.required ?? []));
  }
  if (s.allOf) for (const part of s.allOf) if (part.allOf) mergeInto(out, objectFields(part));
  return out;
}

function mergeInto(a: ReturnType<typeof objectFields>, b: ReturnType<typeof objectFields>) {
  Object.assign(a.properties, b.properties);
  a.required.push(...b.required);
}

/**
 * A deterministic example of a value the schema describes: its own `example`/`examples`/`default`
 * when it has one, otherwise a made-up value of the right shape — every property (optional ones
 * too, so the golden tables show every field), one item per array, the first enum value.
 */
export function exampleOf(s: Schema | undefined, name = 'value', depth = 0): unknown {
  if (!s || depth > 12) return null;
  if (s.example !== undefined) return s.example;
  if (s.examples?.length) return s.examples[0];
  if (s.default !== undefined && s.default !== null) return s.default;
  if (s.const !== undefined) return s.const;
  if (s.enum?.length) return s.enum[0];
  const alts = alternatives(s);
  if (alts.length === 0) return null;
  const a = alts[0]!;
  if (a !== s && (s.anyOf || s.oneOf)) return exampleOf(a, name, depth);
  if (a.allOf || a.properties) {
    const { properties } = objectFields(a);
    return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, exampleOf(v, k, depth + 1)]));
  }
  const type = Array.isArray(a.type) ? a.type.find((t) => t !== 'null') : a.type;
  switch (type) {
    case 'string':
      return exampleString(a, name);
    case 'integer':
      return Math.max(a.minimum ?? 1, 1);
    case 'number':
      return Math.max(a.minimum ?? 1.5, 1.5);
    case 'boolean':
      return true;
    case 'array':
      return [exampleOf(a.items, singular(name), depth + 1)];
    case 'object':
      return typeof a.additionalProperties === 'object'
        ? { key: exampleOf(a.additionalProperties, 'key', depth + 1) }
        : {};
    default:
      return `example-${name}`;
  }
}

/** Example values for the string formats the API uses. */
const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00.000Z',
  date: '2026-01-01',
  email: 'user@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
};

function exampleString(s: Schema, name: string): string {
  return (s.format && FORMAT_EXAMPLES[s.format]) || `example-${name.replace(/_/g, '-')}`;
}

const singular = (name: string) => (name.endsWith('s') ? name.slice(0, -1) : name);
