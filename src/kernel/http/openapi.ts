import type { TSchema } from '@sinclair/typebox';
import type { Access } from '../auth/principal.js';
import { ErrorBody, RateLimitBody, STATUS_TEXT } from './common-schemas.js';

/** Error bodies are shared schemas, referenced by every operation. */
export const SHARED_SCHEMAS = [
  { ...ErrorBody, $id: 'Error' },
  { ...RateLimitBody, $id: 'RateLimitError' },
];

import { type AnyRoute, RAW_BODY } from './route.js';

export const OPENAPI_INFO = {
  title: 'Fjord API',
  version: '1.0.0',
  description:
    'The Fjord cloud platform API. Every operation lists the credentials it accepts in `x-fjord-access` and in its security requirements.',
};

export const SWAGGER_OPTIONS = (baseUrl: string) => ({
  openapi: {
    openapi: '3.1.0',
    info: OPENAPI_INFO,
    servers: [{ url: baseUrl }],
    components: {
      securitySchemes: {
        ApiKey: {
          type: 'apiKey' as const,
          in: 'header' as const,
          name: 'X-API-Key',
          description: 'Service key or PAT',
        },
        Bearer: {
          type: 'http' as const,
          scheme: 'bearer',
          description: 'PAT, service key or OIDC token, where the operation allows it',
        },
        Operator: { type: 'http' as const, scheme: 'bearer', description: 'FJORD_OPERATOR_TOKEN' },
      },
    },
  },
  hideUntagged: false,
  refResolver: {
    buildLocalReference: (json: { $id?: string }, _base: unknown, _fragment: unknown, i: number) =>
      json.$id ?? `def-${i}`,
  },
});

/** Statuses every route can answer because of its access rule and schemas. */
export function impliedErrorStatuses(route: AnyRoute): number[] {
  // 431: a request line and headers over 16 KB, refused before any route is chosen.
  // 429: every keyed request is rate limited, a public route's too when a key comes with it.
  const out = new Set<number>([...(route.errors ?? []), 431, 429]);
  if (route.access.kind !== 'public') {
    out.add(401);
    if (route.access.kind === 'customer') out.add(403);
  }
  if (route.params || route.query || route.body) out.add(422);
  // A path parameter that is not valid percent-encoding is 400, one longer than the router takes 414.
  if (route.params) {
    out.add(400);
    out.add(414);
  }
  // Every method but GET reads a body sent to it, declared or not: malformed JSON is 400, a body
  // too large 413, another media type 415.
  // (422: a string with a lone UTF-16 surrogate.)
  if (route.body || route.method !== 'GET') {
    out.add(400);
    out.add(413);
    out.add(415);
    out.add(422);
    // Every method but GET may write: a full disk answers 507 (insufficient_storage).
    out.add(507);
  }
  if (route.method === 'POST' && route.access.kind === 'customer' && route.idempotency !== false) {
    out.add(409); // Idempotency-Key in flight
    out.add(422);
  }
  return [...out].sort();
}

export function describeAccess(access: Access): Record<string, unknown> {
  if (access.kind !== 'customer') return { kind: access.kind };
  return {
    kind: 'customer',
    service_keys: access.services ?? [],
    pat_scopes: access.scopes ?? [],
    oidc: access.oidc ?? false,
    bearer: access.bearer ?? false,
  };
}

function security(access: Access): Record<string, string[]>[] {
  switch (access.kind) {
    case 'public':
      return [];
    case 'operator':
      return [{ Operator: [] }];
    case 'customer':
      return access.bearer || access.oidc ? [{ ApiKey: [] }, { Bearer: [] }] : [{ ApiKey: [] }];
  }
}

function accessSentence(access: Access): string {
  if (access.kind === 'public') return 'No credential needed.';
  if (access.kind === 'operator') return 'Operator token required.';
  const parts: string[] = [];
  if (access.services === 'any') parts.push('any service key');
  else if (access.services?.length) parts.push(`a service key for ${access.services.join(' or ')}`);
  if (access.scopes?.length) parts.push(`a PAT with ${access.scopes.map((s) => `\`${s}\``).join(' or ')}`);
  if (access.oidc) parts.push('an OIDC token');
  return `Accepts ${parts.join(', or ')}.`;
}

/** The Fastify schema of a route: validation, serialisation and the OpenAPI operation in one. */
export function openApiRouteSchema(route: AnyRoute) {
  const response: Record<string, TSchema | Record<string, unknown>> = {};
  for (const [status, schema] of Object.entries(route.response)) {
    response[status] = route.produces
      ? { description: schema.description ?? 'OK', content: { [route.produces]: { schema } } }
      : { ...schema, description: schema.description ?? 'OK' };
  }
  for (const status of impliedErrorStatuses(route)) {
    if (route.errorsProduce && route.errors?.includes(status)) {
      response[String(status)] = {
        description: STATUS_TEXT[status] ?? 'Error',
        content: { [route.errorsProduce]: { schema: { type: 'string' } } },
      };
      continue;
    }
    const ref = route.errorFormat
      ? `${route.errorFormat.schema.$id}#`
      : status === 429
        ? 'RateLimitError#'
        : 'Error#';
    response[String(status)] = { $ref: ref, description: STATUS_TEXT[status] ?? 'Error' };
  }
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: [route.description, accessSentence(route.access)].filter(Boolean).join('\n\n'),
    security: security(route.access),
    'x-fjord-access': describeAccess(route.access),
    ...(route.params ? { params: route.params } : {}),
    ...(route.query ? { querystring: route.query } : {}),
    ...(route.body ? { body: route.body } : {}),
    ...(route.rawBody
      ? {
          body: { type: 'string', format: 'binary', [RAW_BODY]: true },
          consumes: ['application/octet-stream'],
        }
      : {}),
    ...(route.deprecated ? { deprecated: true } : {}),
    ...(route.hidden ? { hide: true } : {}),
    response,
  };
}
