import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { Nullable, NullableTimestamp, Timestamp } from '../../src/kernel/http/common-schemas.js';
import { forSerializing } from '../../src/kernel/http/serializer-schema.js';

/** fast-json-stringify as Fastify (and the API's app) compiles a response schema. */
const build = (schema: unknown) =>
  SerializerSelector()(undefined as never, {} as never)({
    schema,
    method: 'GET',
    url: '/',
    httpStatus: '200',
  } as never) as (data: unknown) => string;

const Status = Type.Union([Type.Literal('active'), Type.Literal('maintenance')]);
const Shape = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  count: Nullable(Type.Integer()),
  status: Status,
  created_at: Timestamp(),
  expires_at: NullableTimestamp(),
  tags: Type.Array(Type.Object({ key: Type.String(), value: Nullable(Type.String()) })),
  either: Type.Union([Type.String(), Type.Number()]),
  nested: Nullable(Type.Object({ a: Type.String() })),
});

describe('response schemas as the serialiser sees them', () => {
  const simplified = forSerializing(Shape) as unknown as {
    properties: Record<string, Record<string, unknown>>;
  };
  const p = simplified.properties;

  it('writes a union of null and one primitive type as that type or null, keeping its format', () => {
    expect(p['name']).toMatchObject({ type: ['string', 'null'] });
    expect(p['count']).toMatchObject({ type: ['integer', 'null'] });
    expect(p['expires_at']).toMatchObject({ type: ['string', 'null'], format: 'date-time' });
    const tags = p['tags']!['items'] as { properties: Record<string, unknown> };
    expect(tags.properties['value']).toMatchObject({ type: ['string', 'null'] });
    for (const k of ['name', 'count', 'expires_at']) expect(p[k]).not.toHaveProperty('anyOf');
  });

  it('leaves unions of literals, of several types or of objects, and the declared schema, as they are', () => {
    expect(p['status']).toHaveProperty('anyOf');
    expect(p['either']).toHaveProperty('anyOf');
    expect(p['nested']).toHaveProperty('anyOf');
    expect(Shape.properties.name).toHaveProperty('anyOf');
    expect(p['id']).toBe(Shape.properties.id);
  });

  it('serialises every value the schema describes exactly as the declared schema does', () => {
    const declared = build(Shape);
    const fast = build(forSerializing(Shape));
    const values = [
      {
        id: 'a',
        name: 'Kari',
        count: 3,
        status: 'active',
        created_at: '2026-11-29T10:00:00.000Z',
        expires_at: null,
        tags: [{ key: 'k', value: null }],
        either: 2,
        nested: null,
      },
      {
        id: 'b "quoted"',
        name: null,
        count: null,
        status: 'maintenance',
        created_at: new Date(0),
        expires_at: new Date(86_400_000),
        tags: [],
        either: 'x',
        nested: { a: 'y' },
      },
    ];
    for (const v of values) expect(fast(v)).toBe(declared(v));
  });
});
