import type { FastifyError } from 'fastify';
import { insufficientStorage, isDiskFull } from '../disk-space.js';
import { AppError, type ErrorKind, type FieldProblem } from '../errors.js';
import { patternInWords } from './pattern-words.js';

const STATUS_OF_KIND: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid: 422,
  rate_limited: 429,
  internal: 500,
  bad_gateway: 502,
  unavailable: 503,
  insufficient_storage: 507,
};

export const statusOfKind = (kind: ErrorKind): number => STATUS_OF_KIND[kind];

export interface HttpError {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  /** True for our own faults, which are logged with their stack. */
  internal: boolean;
}

/** Turns anything thrown while serving a request into the stated error bodies; never a 500 for bad input. */
export function toHttpError(err: unknown, validationCode = 'validation_error'): HttpError {
  if (err instanceof AppError) return fromAppError(err);
  // ENOSPC from a file write, SQLITE_FULL, PostgreSQL's disk_full: 507, never a 500.
  if (isDiskFull(err)) return fromAppError(insufficientStorage(err));
  const fe = err as FastifyError & { validation?: AjvLikeError[]; validationContext?: string };
  if (fe?.validation) {
    const context = fe.validationContext === 'querystring' ? 'query' : (fe.validationContext ?? 'body');
    const errors = problemsOf(fe.validation, context);
    return fromAppError(
      new AppError('invalid', validationCode, `Request failed validation: ${summarise(errors)}`, {
        errors,
      }),
    );
  }
  switch (fe?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return fromAppError(new AppError('bad_request', 'invalid_json', 'The request body is not valid JSON.'));
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return fromAppError(
        new AppError('payload_too_large', 'body_too_large', 'The request body is too large.'),
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return fromAppError(
        new AppError(
          'unsupported_media_type',
          'unsupported_media_type',
          'Send the request body as application/json.',
        ),
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return fromAppError(
        new AppError('bad_request', 'invalid_content_length', 'Content-Length does not match the body.'),
      );
  }
  if (err instanceof SyntaxError || fe?.statusCode === 400) {
    return fromAppError(new AppError('bad_request', 'bad_request', fe?.message || 'Malformed request.'));
  }
  if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return {
      status: fe.statusCode,
      body: { detail: { code: 'bad_request', message: fe.message } },
      headers: {},
      internal: false,
    };
  }
  return {
    status: 500,
    body: {
      detail: {
        code: 'internal_error',
        message: 'Internal error; the request id identifies it in the logs.',
      },
    },
    headers: {},
    internal: true,
  };
}

function fromAppError(err: AppError): HttpError {
  const status = STATUS_OF_KIND[err.kind];
  const headers = { ...(err.options.headers ?? {}) };
  if (err.kind === 'rate_limited') {
    const { retry_after, limit, window, reset } = err.options.extra as {
      retry_after: number;
      limit: number;
      window: string;
      /** When the window ends (ISO 8601), for quotas that name it in their body. */
      reset?: string;
    };
    // An upstream's 429 passed on (the LLM gateway) may name no delay: then none is invented.
    if (retry_after !== undefined) headers['retry-after'] = String(retry_after);
    return {
      status,
      headers,
      internal: false,
      body: {
        // RATE_LIMIT_EXCEEDED for the request buckets; an area's own 429 (a budget) names its code.
        error: {
          code: err.code,
          message: err.message,
          retry_after,
          details: { limit, window, ...(reset ? { reset } : {}) },
        },
      },
    };
  }
  const detail: Record<string, unknown> = {
    [err.options.codeField ?? 'code']: err.code,
    message: err.message,
  };
  if (err.options.errors?.length) detail['errors'] = err.options.errors;
  Object.assign(detail, err.options.extra ?? {});
  // A 502/503 an area chose to answer (a back end down, "still starting") is an answer, not a
  // fault of Fjord's: logged with its cause when it has one, never as a crash with a stack.
  return { status, body: { detail }, headers, internal: status === 500 };
}

interface AjvLikeError {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

/**
 * One problem per field and rule, worded for a person: a choice of literals (TypeBox writes an
 * enum as `anyOf` of `const`) becomes "must be one of a, b", a pattern is said in words.
 */
function problemsOf(errors: AjvLikeError[], context: string): FieldProblem[] {
  const choices = new Map<string, unknown[]>();
  for (const v of errors)
    if (v.keyword === 'const' && 'allowedValue' in v.params) {
      const list = choices.get(v.instancePath) ?? [];
      list.push(v.params['allowedValue']);
      choices.set(v.instancePath, list);
    }
  const out: FieldProblem[] = [];
  const said = new Set<string>();
  for (const v of errors) {
    const values = choices.get(v.instancePath);
    if (values && (v.keyword === 'const' || v.keyword === 'anyOf')) {
      if (said.has(v.instancePath)) continue;
      said.add(v.instancePath);
      out.push({ path: `/${context}${v.instancePath}`, message: `must be one of ${values.join(', ')}` });
      continue;
    }
    out.push(problemOf(v, context));
  }
  return out;
}

function problemOf(v: AjvLikeError, context: string): FieldProblem {
  let path = `/${context}${v.instancePath}`;
  if (v.keyword === 'required' && typeof v.params['missingProperty'] === 'string') {
    path += `/${v.params['missingProperty']}`;
    return { path, message: 'is required' };
  }
  if (v.keyword === 'additionalProperties' && typeof v.params['additionalProperty'] === 'string') {
    path += `/${v.params['additionalProperty']}`;
    return { path, message: 'is not allowed' };
  }
  if (v.keyword === 'enum' && Array.isArray(v.params['allowedValues'])) {
    return { path, message: `must be one of ${(v.params['allowedValues'] as unknown[]).join(', ')}` };
  }
  if (v.keyword === 'pattern' && typeof v.params['pattern'] === 'string') {
    const words = patternInWords(v.params['pattern']);
    if (words) return { path, message: words };
  }
  return { path, message: v.message ?? 'is invalid' };
}

const summarise = (errors: FieldProblem[]) =>
  errors
    .slice(0, 5)
    .map((e) => `${e.path} ${e.message}`)
    .join('; ');
