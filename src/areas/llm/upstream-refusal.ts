import { AppError, type ErrorKind } from '../../kernel/errors.js';
import type { UpstreamAnswer } from './upstream.js';

/**
 * An upstream's 4xx passed on to the client as the upstream said it, LiteLLM-style: the same
 * status (so the OpenAI SDKs raise RateLimitError, ConflictError … and back off on 429), its
 * `Retry-After`, and its error's `message`, `type`, `code` and `param`. Only what is Fjord's own
 * business is taken out: the upstream's address and the key Fjord sends it.
 */
export class UpstreamRefusal extends AppError {
  constructor(
    kind: ErrorKind,
    code: string,
    message: string,
    /** OpenAI's `type` and `param` as the upstream gave them. */
    readonly openAi: { type: string | null; param: string | null },
    options: { retryAfter?: number; headers: Record<string, string> },
  ) {
    super(kind, code, message, {
      headers: options.headers,
      ...(kind === 'rate_limited' ? { extra: { retry_after: options.retryAfter } } : {}),
    });
  }
}

/** The statuses a refusal keeps; any other 4xx becomes 400 (the OpenAPI document lists these). */
const KIND_OF_STATUS: Record<number, ErrorKind> = {
  400: 'bad_request',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'invalid',
  429: 'rate_limited',
};

/** Statuses an upstream refusal can reach the client with. */
export const REFUSAL_STATUSES = [400, 404, 409, 413, 415, 422, 429] as const;

export const upstreamErrors = {
  /** The upstream answered something that is not an OpenAI answer: its body is not shown. */
  malformed: (upstreamStatus: number, what: string) =>
    new AppError(
      'bad_gateway',
      'upstream_error',
      `The model server answered ${upstreamStatus} with ${what}, not an OpenAI-compatible answer.`,
    ),
  /** A stream that ended before its end (a broken connection, no `[DONE]`). */
  brokenStream: () =>
    new AppError('bad_gateway', 'upstream_error', 'The model server’s answer broke off before its end.'),
  credentials: () =>
    new AppError(
      'bad_gateway',
      'upstream_rejected',
      'The model server refused Fjord’s credentials; the operator must fix FJORD_LLM_UPSTREAMS.',
    ),
};

/** Reads an upstream's 4xx answer and turns it into the error the client gets. */
export async function refusal(answer: UpstreamAnswer): Promise<AppError> {
  const text = await new Response(answer.body).text().catch(() => '');
  if (answer.status === 401 || answer.status === 403) return upstreamErrors.credentials();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return upstreamErrors.malformed(answer.status, 'a body that is not JSON');
  }
  if (!json || typeof json !== 'object' || Array.isArray(json))
    return upstreamErrors.malformed(answer.status, 'JSON that is not an error object');
  // OpenAI nests it under `error`; vLLM and some others put message/type/code at the top.
  const raw = json as Record<string, unknown>;
  const e = (raw['error'] && typeof raw['error'] === 'object' ? raw['error'] : raw) as Record<
    string,
    unknown
  >;
  const clean = scrub(answer);
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? clean(v) : null);
  const message =
    str(e['message']) ??
    (typeof raw['error'] === 'string' ? clean(raw['error']) : null) ??
    `The model server refused the request (${answer.status}).`;
  const kind = KIND_OF_STATUS[answer.status] ?? 'bad_request';
  const headers: Record<string, string> = {};
  const retryAfter = answer.headers.get('retry-after');
  if (retryAfter) headers['retry-after'] = retryAfter;
  const retryAfterMs = answer.headers.get('retry-after-ms');
  if (retryAfterMs) headers['retry-after-ms'] = retryAfterMs;
  const seconds = retryAfter && /^\d+(\.\d+)?$/.test(retryAfter) ? Math.ceil(Number(retryAfter)) : undefined;
  return new UpstreamRefusal(
    kind,
    str(e['code']) ?? 'upstream_refused',
    message,
    { type: str(e['type']), param: str(e['param']) },
    { ...(seconds !== undefined ? { retryAfter: seconds } : {}), headers },
  );
}

/** Removes the upstream's address and Fjord's key for it from a text the client will see. */
function scrub(answer: UpstreamAnswer): (text: string) => string {
  const secrets: [string, string][] = [];
  const { url, api_key } = answer.upstream;
  if (api_key) secrets.push([api_key, '[redacted]']);
  try {
    const u = new URL(url);
    secrets.push([url, '[model server]'], [u.origin, '[model server]'], [u.host, '[model server]']);
    if (u.hostname !== u.host) secrets.push([u.hostname, '[model server]']);
  } catch {}
  return (text) => {
    let out = text;
    for (const [secret, stand_in] of secrets) out = out.split(secret).join(stand_in);
    return out.slice(0, 2000);
  };
}
