import Ajv, { type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { RAW_BODY } from './route.js';

/**
 * Two validators: bodies are checked strictly (no type coercion — `"true"` is not a boolean in
 * JSON), while path and query parameters, which are always strings on the wire, are coerced.
 * Both refuse strings holding U+0000, which PostgreSQL cannot store in text or JSON columns.
 */
export function makeValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const base: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false };
  const strict = addFormats.default(new Ajv.default({ ...base, coerceTypes: false }));
  const coercing = addFormats.default(new Ajv.default({ ...base, coerceTypes: 'array' }));
  return ({ schema, httpPart }) =>
    // An upload's body is a stream handed to its handler unread (RouteDef.rawBody): nothing to check.
    (schema as Record<string, unknown>)[RAW_BODY] === true
      ? ((() => true) as ReturnType<FastifySchemaCompiler<unknown>>)
      : (compiledOnFirstUse(() =>
          refusingNul((httpPart === 'body' ? strict : coercing).compile(schema as object)),
        ) as ReturnType<FastifySchemaCompiler<unknown>>);
}

/**
 * A validator compiled when first called, not at start: compiling every route's schemas took a
 * fifth of the start-up time, and most routes of an emulator are never called. A schema Ajv
 * refuses then fails its route's first request instead of the start; the contract fuzzer calls
 * every route in the suite, so such a schema cannot land.
 */
function compiledOnFirstUse(compile: () => ValidateFunction): ValidateFunction {
  let validate: ValidateFunction | null = null;
  const get = () => {
    validate ??= compile();
    return validate;
  };
  const wrapped = ((data: unknown, ctx?: unknown) => {
    const v = get();
    const ok = (v as (d: unknown, c?: unknown) => boolean)(data, ctx);
    wrapped.errors = v.errors;
    return ok;
  }) as ValidateFunction;
  // Fastify reads these at request time (see refusingNul): they compile the schema then.
  Object.defineProperty(wrapped, 'schemaEnv', { get: () => get().schemaEnv });
  Object.defineProperty(wrapped, 'schema', { get: () => get().schema });
  return wrapped;
}

function refusingNul(validate: ValidateFunction): ValidateFunction {
  const wrapped = ((data: unknown, ctx?: unknown) => {
    const at = nulPath(data);
    if (at !== null) {
      wrapped.errors = [
        { instancePath: at, schemaPath: '#', keyword: 'nul', params: {}, message: 'must not contain U+0000' },
      ];
      return false;
    }
    const ok = (validate as (d: unknown, c?: unknown) => boolean)(data, ctx);
    wrapped.errors = validate.errors;
    return ok;
  }) as ValidateFunction;
  // Fastify passes the parent object (so Ajv may replace a root value) only when it sees this.
  Object.assign(wrapped, { schemaEnv: validate.schemaEnv, schema: validate.schema });
  return wrapped;
}

/** JSON Pointer of the first string (value or key) holding U+0000, walked without recursion. */
function nulPath(root: unknown): string | null {
  const stack: [unknown, string][] = [[root, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\0')) return path;
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const child = `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        if (k.includes('\0')) return child;
        stack.push([v, child]);
      }
    }
  }
  return null;
}
