import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { lazySerializers } from '../../src/kernel/http/serializers.js';
import { deepFreeze } from '../../src/kernel/immutable.js';

/** A serializer as the API's app gets one for a route and status. */
const serializerFor = (schema: unknown) =>
  lazySerializers(undefined, {})({ schema, method: 'GET', url: '/', httpStatus: '200' } as never) as (
    data: unknown,
  ) => string;

const Listing = Type.Object({
  items: Type.Array(Type.Object({ name: Type.String() })),
  total: Type.Integer(),
});

/** An answer whose one item counts how often the serializer reads its name. */
function counted() {
  const reads = { n: 0 };
  const item = {};
  Object.defineProperty(item, 'name', {
    enumerable: true,
    get: () => {
      reads.n++;
      return 'oslo';
    },
  });
  return { answer: { items: [item], total: 1 }, reads };
}

describe('response serializers', () => {
  it('write a frozen answer once, and an unfrozen one every time', () => {
    const serialize = serializerFor(Listing);
    const frozen = counted();
    deepFreeze(frozen.answer);
    frozen.reads.n = 0; // freezing reads it too
    expect(serialize(frozen.answer)).toBe('{"items":[{"name":"oslo"}],"total":1}');
    const readsPerWrite = frozen.reads.n;
    expect(readsPerWrite).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++)
      expect(serialize(frozen.answer)).toBe('{"items":[{"name":"oslo"}],"total":1}');
    expect(frozen.reads.n).toBe(readsPerWrite);

    const plain = counted();
    for (let i = 0; i < 3; i++) serialize(plain.answer);
    expect(plain.reads.n).toBe(3 * readsPerWrite);
  });

  it('write the same frozen answer by each route’s own schema', () => {
    const { answer } = counted();
    deepFreeze(answer);
    expect(serializerFor(Listing)(answer)).toContain('"total":1');
    expect(serializerFor(Type.Object({ total: Type.Integer() }))(answer)).toBe('{"total":1}');
  });
});
