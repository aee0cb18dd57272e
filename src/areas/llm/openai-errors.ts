import { Type } from '@sinclair/typebox';
import type { ErrorFormat } from '../../kernel/http/route.js';
import { UpstreamRefusal } from './upstream-refusal.js';

/**
 * OpenAI's error shape, so the OpenAI SDKs raise the right exception with the right message:
 * `{error: {message, type, param, code}}`. A 429 keeps the platform's rate-limit fields
 * (`retry_after`, `details`) beside OpenAI's.
 */
export const OpenAiErrorBody = Type.Object(
  {
    error: Type.Object({
      message: Type.String(),
      type: Type.String({
        description:
          'invalid_request_error, authentication_error, permission_error, not_found_error, rate_limit_error, api_error',
      }),
      param: Type.Union([Type.String(), Type.Null()]),
      code: Type.Union([Type.String(), Type.Null()]),
      retry_after: Type.Optional(Type.Integer()),
      details: Type.Optional(Type.Object({ limit: Type.Number(), window: Type.String() })),
    }),
  },
  { $id: 'OpenAiError', title: 'OpenAiError' },
);

const TYPE_OF_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  431: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
};

interface KernelBody {
  detail?: { code?: string; error?: string; message?: string; errors?: { path: string }[] };
  error?: {
    code?: string;
    message?: string;
    retry_after?: number;
    details?: { limit: number; window: string };
  };
}

export const openAiErrorFormat: ErrorFormat = {
  schema: OpenAiErrorBody as typeof OpenAiErrorBody & { $id: string },
  render(status, kernelBody, thrown) {
    const body = (kernelBody ?? {}) as KernelBody;
    const d = body.detail;
    const r = body.error;
    // An upstream's refusal keeps its own type and param (the code is already the upstream's).
    const upstream = thrown instanceof UpstreamRefusal ? thrown.openAi : null;
    const param =
      upstream?.param ?? d?.errors?.[0]?.path.replace(/^\/body\//, '').replace(/\//g, '.') ?? null;
    return {
      error: {
        message: d?.message ?? r?.message ?? 'Error',
        type: upstream?.type ?? TYPE_OF_STATUS[status] ?? 'api_error',
        param,
        code: d?.code ?? d?.error ?? r?.code ?? null,
        ...(r?.retry_after !== undefined ? { retry_after: r.retry_after } : {}),
        ...(r?.details?.limit !== undefined ? { details: r.details } : {}),
      },
    };
  },
};
