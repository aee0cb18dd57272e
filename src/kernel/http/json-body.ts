import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

// The API's JSON body parser is its own file: what counts as an acceptable JSON body (empty, too
// deep, lone surrogates) is a policy of its own, with its own scanner, apart from building the app.

const MAX_JSON_DEPTH = 128;

/**
 * Fastify's content-type parser for `application/json` (`parseAs: 'string'`). An empty body with a
 * JSON content type means "no body", as most clients send it for bodiless POSTs.
 */
export function parseJsonBody(
  _req: FastifyRequest,
  text: string | Buffer,
  done: (err: Error | null, body?: unknown) => void,
) {
  const body = text as string;
  if (body.trim() === '') return done(null, undefined);
  // Deep nesting parses, but would overflow the stack of whatever recurses over it later.
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    return done(
      new AppError(
        'bad_request',
        'json_too_deep',
        `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`,
      ),
      undefined,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return done(
      new AppError('bad_request', 'invalid_json', 'The request body is not valid JSON.'),
      undefined,
    );
  }
  // A lone UTF-16 surrogate (only an escape can carry one) cannot be stored as UTF-8: it would
  // come back as replacement characters. Refused rather than silently changed.
  if (SURROGATE_ESCAPE.test(body) && hasLoneSurrogate(parsed)) {
    return done(
      new AppError(
        'invalid',
        'invalid_unicode',
        'A string in the request body holds a lone UTF-16 surrogate.',
      ),
      undefined,
    );
  }
  done(null, parsed);
}

/** Whether JSON text nests arrays and objects deeper than `max`, read without parsing it. */
function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when a string anywhere in the value (keys included) holds an unpaired surrogate. */
function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (value && typeof value === 'object')
    return Object.entries(value).some(([k, v]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(v));
  return false;
}
