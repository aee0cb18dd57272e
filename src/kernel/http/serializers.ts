/**
 * The API's response serializers (Fastify's `buildSerializer`): fast-json-stringify on each
 * route's schema, compiled on a route's first answer with each status rather than at start
 * (compiling them all was half of the start-up time; the first answer of a kind pays ~0.5 ms
 * once), on the schema with its nullable primitives collapsed (serializer-schema.ts).
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { forSerializing } from './serializer-schema.js';

/**
 * Fastify's serializer compiler, deferred per route and status until first used, on the schema
 * with its unions of one primitive type collapsed (see serializer-schema.ts).
 */
export function lazySerializers(externalSchemas: unknown, options: unknown) {
  const compile = SerializerSelector()(externalSchemas as never, options as never);
  return (route: Parameters<typeof compile>[0]) => {
    let serialize: ((data: unknown) => string) | null = null;
    // A frozen answer is one built once and returned on every call (kernel/immutable.ts): the same
    // object always gives the same JSON, so it is written once per route and status.
    const frozenJson = new WeakMap<object, string>();
    return (data: unknown) => {
      serialize ??= compile({ ...route, schema: forSerializing(route.schema) }) as (data: unknown) => string;
      if (typeof data !== 'object' || data === null || !Object.isFrozen(data)) return serialize(data);
      const kept = frozenJson.get(data);
      if (kept !== undefined) return kept;
      const json = serialize(data);
      frozenJson.set(data, json);
      return json;
    };
  };
}
