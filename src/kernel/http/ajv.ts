import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Two validators: bodies are checked strictly (no type coercion — `"true"` is not a boolean in
 * JSON), while path and query parameters, which are always strings on the wire, are coerced.
 */
export function makeValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const base: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false };
  const strict = addFormats.default(new Ajv.default({ ...base, coerceTypes: false }));
  const coercing = addFormats.default(new Ajv.default({ ...base, coerceTypes: 'array' }));
  return ({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema as object) as ReturnType<
      FastifySchemaCompiler<unknown>
    >;
}
