import { type TSchema, Type } from '@sinclair/typebox';

/** `{detail: {code, message}}` — the default error body. Some areas use `detail.error` instead of `code`. */
export const ErrorBody = Type.Object(
  {
    detail: Type.Object(
      {
        code: Type.Optional(Type.String({ description: 'Machine-readable error code' })),
        error: Type.Optional(
          Type.String({ description: 'Error code, in the areas that use this field name' }),
        ),
        message: Type.String(),
        errors: Type.Optional(
          Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
            description: 'Failing fields of a validation error (JSON pointers into the request)',
          }),
        ),
      },
      { additionalProperties: true },
    ),
  },
  { title: 'Error' },
);

/** The stated 429 body. */
export const RateLimitBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({
        description:
          '`RATE_LIMIT_EXCEEDED` for request rate limits; an area’s own 429 names its limit (`concurrent_job_limit`, `budget_exceeded`)',
      }),
      message: Type.String(),
      retry_after: Type.Integer({ description: 'Seconds until a retry can succeed' }),
      details: Type.Object({
        limit: Type.Integer(),
        window: Type.String({ description: 'Length of the window, e.g. "60s"' }),
      }),
    }),
  },
  { title: 'RateLimitError' },
);

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });
export const NullableTimestamp = (description?: string) => Nullable(Timestamp(description));

export const OkRevoked = Type.Object({ ok: Type.Boolean(), revoked: Type.String() });
export const SuccessMessage = Type.Object({ success: Type.Boolean(), message: Type.String() });

export const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed request (e.g. invalid JSON)',
  401: 'Missing, invalid, expired or revoked credential',
  403: 'Valid credential without the needed service or scope',
  404: 'Not found (also for other customers’ resources)',
  409: 'Conflict with the current state',
  410: 'Gone',
  413: 'Request body too large',
  414: 'A path parameter is longer than the router accepts (100 characters)',
  415: 'Unsupported content type',
  431: 'Request line and headers over 16 KB',
  422: 'Request failed validation',
  429: 'Rate limit exceeded',
  502: 'Back end failed',
  503: 'Back end unavailable',
  507: 'Insufficient storage: the server’s disk is full; retry once space is freed',
};
