/**
 * A response schema as fast-json-stringify should see it: an `anyOf` of null and one JSON
 * primitive type (`Nullable(Type.String())`, a nullable timestamp) becomes `type: [t, 'null']`.
 *
 * fast-json-stringify writes an `anyOf` as a run of Ajv validations, one per branch tried, on
 * every value it serialises: a nullable field cost a validation (a `date-time` one its format
 * regex too) per field per answer, where `type: [t, 'null']` is a `typeof` check. For a value
 * that the schema describes, the output is the same. (A union of literals is left alone: each
 * branch writes its constant as it is, cheaper than escaping the string it would become.)
 * The OpenAPI document keeps the schema as declared: only the serialiser's copy changes.
 */
export function forSerializing<T>(schema: T): T {
  return simplify(schema) as T;
}

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean']);
/** Branch keywords that only constrain a value, which the serialiser does not check anyway. */
const CONSTRAINTS = new Set([
  'type',
  'const',
  'enum',
  'format',
  'title',
  'description',
  'examples',
  'default',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
]);
/** Keywords whose values are data, not schemas: never walked. */
const DATA = new Set(['const', 'enum', 'default', 'examples', 'example']);

function simplify(node: unknown): unknown {
  if (Array.isArray(node)) {
    let out: unknown[] | null = null;
    node.forEach((item, i) => {
      const s = simplify(item);
      if (s === item) return;
      out ??= [...node];
      out[i] = s;
    });
    return out ?? node;
  }
  if (node === null || typeof node !== 'object') return node;
  const source = node as Record<string | symbol, unknown>;
  let out: Record<string | symbol, unknown> | null = null;
  for (const key of Object.keys(source)) {
    if (DATA.has(key)) continue;
    const s = simplify(source[key]);
    if (s === source[key]) continue;
    out ??= { ...source };
    out[key] = s;
  }
  const schema = out ?? source;
  const collapsed = Array.isArray(schema['anyOf']) ? collapse(schema) : null;
  return collapsed ?? schema;
}

/** The `anyOf` of null and one primitive type as that type or null; null when it is not one. */
function collapse(schema: Record<string | symbol, unknown>): Record<string | symbol, unknown> | null {
  const branches = schema['anyOf'] as unknown[];
  let type: string | null = null;
  let format: unknown;
  let nullable = false;
  for (const [i, b] of branches.entries()) {
    if (b === null || typeof b !== 'object' || Array.isArray(b)) return null;
    const branch = b as Record<string, unknown>;
    if (!Object.keys(branch).every((k) => CONSTRAINTS.has(k))) return null;
    if (branch['type'] === 'null') {
      nullable = true;
      continue;
    }
    const t = branch['type'];
    if (typeof t !== 'string' || !PRIMITIVES.has(t) || (type !== null && t !== type)) return null;
    // Formats change how a Date is written (date-time, date, time): they must agree.
    if (i > 0 && type !== null && branch['format'] !== format) return null;
    type = t;
    format = branch['format'];
  }
  if (type === null || !nullable) return null;
  const { anyOf: _branches, ...rest } = schema;
  return {
    ...rest,
    type: [type, 'null'],
    ...(format === undefined ? {} : { format }),
  };
}
