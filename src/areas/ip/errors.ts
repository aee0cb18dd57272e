import { Type } from '@sinclair/typebox';
import { AppError } from '../../kernel/errors.js';
import type { ErrorFormat } from '../../kernel/http/route.js';

/** The area's errors, in its stated body `{detail: {error, message}}`. */
const e = (kind: ConstructorParameters<typeof AppError>[0], code: string, message: string, extra = {}) =>
  new AppError(kind, code, message, { codeField: 'error', extra });

export const ipErrors = {
  invalidIp: (value: string) =>
    e('bad_request', 'invalid_ip', `${JSON.stringify(value.slice(0, 60))} is not an IPv4 or IPv6 address.`),
  invalidCountry: (value: string) =>
    e(
      'bad_request',
      'invalid_country_code',
      `${JSON.stringify(value.slice(0, 20))} is not an ISO 3166-1 alpha-2 country code.`,
    ),
  invalidAsn: (value: string) =>
    e(
      'bad_request',
      'invalid_asn',
      `${JSON.stringify(value.slice(0, 20))} is not an AS number (1-4294967295).`,
    ),
  noSubscription: () =>
    e(
      'forbidden',
      'no_subscription',
      'This account has no IP intelligence subscription; ask the operator to set a tier.',
    ),
  notFound: (what: string) => e('not_found', 'not_found', `No data for ${what}.`),
  quota: (limit: number, window: 'day' | 'minute', resetMs: number, nowMs: number) =>
    new AppError(
      'rate_limited',
      'quota_exceeded',
      window === 'day'
        ? `The daily limit of ${limit} requests is reached; it resets at ${new Date(resetMs).toISOString()}.`
        : `The burst limit of ${limit} requests a minute is reached.`,
      {
        extra: {
          retry_after: Math.max(1, Math.ceil((resetMs - nowMs) / 1000)),
          limit,
          window: window === 'day' ? '86400s' : '60s',
          reset: new Date(resetMs).toISOString(),
        },
        headers: {
          'x-ratelimit-limit': String(limit),
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.ceil(resetMs / 1000)),
        },
      },
    ),
  unknownCategory: (value: unknown) =>
    e(
      'invalid',
      'invalid_category',
      `${JSON.stringify(value)} is not a report category (GET /v1/ip/categories).`,
    ),
  duplicateReport: (ip: string) =>
    e(
      'conflict',
      'duplicate_report',
      `You reported ${ip} less than 15 minutes ago; one report per address per 15 minutes.`,
    ),
  reporterExists: (domain: string) =>
    e('conflict', 'reporter_exists', `${domain} is already registered as a reporter.`),
  reporterNotFound: (domain: string) =>
    e('not_found', 'not_found', `No reporter is registered for ${domain}.`),
  notReportable: (ip: string, why: string) =>
    e('bad_request', 'invalid_ip', `${ip} is a ${why.replace('_', '-')} address: it cannot be reported.`),
  delistNotFound: () => e('not_found', 'not_found', 'No such delisting request.'),
  delistDecided: () => e('conflict', 'already_decided', 'This delisting request was decided already.'),
};

export const IpErrorBody = Type.Object(
  {
    detail: Type.Object(
      {
        error: Type.Optional(Type.String()),
        message: Type.String(),
        limit: Type.Optional(Type.Integer()),
        reset: Type.Optional(Type.String({ format: 'date-time' })),
      },
      { additionalProperties: true },
    ),
  },
  { $id: 'IpError', title: 'IpError' },
);

interface KernelBody {
  detail?: { code?: string; error?: string; message?: string } & Record<string, unknown>;
  error?: { code?: string; message?: string; details?: { limit?: number; reset?: string } };
}

/**
 * The kernel's errors in this area's shape: `code` becomes `error`; the 401 carries no code, as
 * stated; a 429 (the daily quota, the burst, or the API's own request buckets) is
 * `quota_exceeded` with `limit` and `reset`.
 */
export const ipErrorFormat: ErrorFormat = {
  schema: IpErrorBody as typeof IpErrorBody & { $id: string },
  render(status, kernelBody) {
    const body = (kernelBody ?? {}) as KernelBody;
    if (body.error) {
      return {
        detail: {
          error: 'quota_exceeded',
          message: body.error.message ?? 'Too many requests.',
          limit: body.error.details?.limit,
          reset: body.error.details?.reset,
        },
      };
    }
    const { code, error, ...rest } = body.detail ?? {};
    if (status === 401) return { detail: { message: rest.message ?? 'A valid API key is required.' } };
    return { detail: { error: error ?? code, ...rest } };
  },
};
