/**
 * Domain errors. Code throws an AppError with a *kind* (what went wrong) and a *code* (which
 * rule); only kernel/http maps kinds to HTTP statuses, and protocol servers map them to their
 * own wire formats (S3 XML, DNS RCODEs, MQTT reason codes).
 */
export type ErrorKind =
  | 'bad_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'gone'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'invalid'
  | 'rate_limited'
  | 'internal'
  | 'bad_gateway'
  | 'unavailable'
  /** 507: the disk (data dir or database) is full; the same request succeeds once space is freed. */
  | 'insufficient_storage';

export interface FieldProblem {
  path: string;
  message: string;
}

export interface AppErrorOptions {
  /** Field-level problems of a validation error. */
  errors?: FieldProblem[];
  /** Extra fields an area's stated error shape carries. */
  extra?: Record<string, unknown>;
  /** `detail.code` (default) or `detail.error` (the IP-intelligence shape). */
  codeField?: 'code' | 'error';
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly options: AppErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/** The kernel's own catalogue; areas add theirs next to their service. */
export const kernelErrors = {
  /** 429 with the spec's body; `Retry-After` comes from `retry_after`. */
  rateLimited: (o: { limit: number; window: number; retryAfter: number }) =>
    new AppError(
      'rate_limited',
      'RATE_LIMIT_EXCEEDED',
      `Rate limit of ${o.limit} per ${o.window}s exceeded.`,
      {
        extra: { retry_after: o.retryAfter, limit: o.limit, window: `${o.window}s` },
      },
    ),
  unauthenticated: (message = 'A valid credential is required (X-API-Key or Authorization: Bearer).') =>
    new AppError('unauthenticated', 'unauthenticated', message),
  forbidden: (message: string) => new AppError('forbidden', 'forbidden', message),
  notFound: (what: string) => new AppError('not_found', 'not_found', `${what} not found.`),
  routeNotFound: (method: string, url: string) =>
    new AppError('not_found', 'route_not_found', `No route ${method} ${url}.`),
  invalid: (message: string, errors: FieldProblem[] = []) =>
    new AppError('invalid', 'validation_error', message, { errors }),
  badRequest: (code: string, message: string) => new AppError('bad_request', code, message),
  conflict: (code: string, message: string) => new AppError('conflict', code, message),
  emulatorOnly: () =>
    new AppError('forbidden', 'emulator_only', 'This operation needs emulator mode (FJORD_EMULATOR=1).'),
};
