/**
 * A response schema as fast-json-stringify should see it: an `anyOf` whose branches are all one
 * JSON primitive type, or that type or null, becomes that `type` (or `[type, 'null']`).
 *
 * fast-json-stringify writes an `anyOf` as a run of Ajv validations, one per branch, on every
 * value it serialises: a `Nullable(Type.String())` costs a validation per field per answer, a
 * union of literals (a status) one per branch tried, and a `date-time` branch its format regex
 * too. For a value that the schema describes, the type alone picks the same output. The
 * serialiser never validated beyond types (a string field is not checked for its `pattern`),
 * so a value of the right type outside a union of literals is now written as it is rather than
 * refused. The OpenAPI document keeps the schema as declared: only the serialiser's copy changes.
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
      if (s !== item) (out ??= [...node])[i] = s;
    });
    return out ?? node;
  }
  if (node === null || typeof node !== 'object') return node;
  const source = node as Record<string | symbol, unknown>;
  let out: Record<string | symbol, unknown> | null = null;
  for (const key of Object.keys(source)) {
    if (DATA.has(key)) continue;
    const s = simplify(source[key]);
    if (s !== source[key]) (out ??= { ...source })[key] = s;
  }
  const schema = out ?? source;
  const collapsed = Array.isArray(schema['anyOf']) ? collapse(schema) : null;
  return collapsed ?? schema;
}

/** The `anyOf` of one primitive type (and maybe null) as that type; null when it is not one. */
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
  if (type === null) return null;
  const { anyOf: _branches, ...rest } = schema;
  return {
    ...rest,
    type: nullable ? [type, 'null'] : type,
    ...(format === undefined ? {} : { format }),
  };
}
