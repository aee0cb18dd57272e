import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Access, OperatorPrincipal, Principal } from '../auth/principal.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type StaticOr<T, Fallback> = T extends TSchema ? Static<T> : Fallback;

export interface RouteRequest<P, Q, B, A extends Access> {
  params: StaticOr<P, Record<string, never>>;
  query: StaticOr<Q, Record<string, never>>;
  body: StaticOr<B, undefined>;
  principal: A extends { kind: 'customer' }
    ? Principal
    : A extends { kind: 'operator' }
      ? OperatorPrincipal
      : null;
  raw: FastifyRequest;
  reply: FastifyReply;
}

/**
 * A route is a contract: method and path, operationId, the area's tag, a summary, what
 * credentials it accepts, the request schemas, the success response(s) and the error statuses
 * the handler can produce (401/403/422/429… implied by the access and schemas are added
 * automatically). The OpenAPI document is generated from exactly this.
 */
export interface RouteDef<
  P extends TSchema | undefined = TSchema | undefined,
  Q extends TSchema | undefined = TSchema | undefined,
  B extends TSchema | undefined = TSchema | undefined,
  A extends Access = Access,
> {
  method: HttpMethod;
  url: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  access: A;
  /** Rate-limit buckets this route draws from (default: the route's area bucket). */
  rateLimit?: readonly string[];
  params?: P;
  query?: Q;
  body?: B;
  /**
   * Success status → schema. The handler's result is sent with `status`, or else the lowest
   * status listed (JavaScript orders integer keys, so "the first one written" cannot be meant).
   */
  response: Record<number, TSchema>;
  /** The status of a success answer when `response` lists several. */
  status?: number;
  /** Statuses the handler itself may answer besides success (404, 409, …). */
  errors?: readonly number[];
  /**
   * Error bodies in another shape than `{detail}` on this route, for protocols whose clients
   * expect theirs (OpenAI's `{error: {message, type, code}}` on OpenAI-compatible paths).
   */
  errorFormat?: ErrorFormat;
  /**
   * The code of a request refused by the route's schemas, for areas whose error table names their
   * own (clusters: `invalid_request`); `validation_error` otherwise.
   */
  validationCode?: string;
  /**
   * The request body is handed to the handler unread, as a stream (`raw.raw`), whatever its media
   * type: uploads of files, which must not be buffered or parsed. The handler bounds its size.
   */
  rawBody?: true;
  /** False where answers cannot be recorded and replayed (streams): `Idempotency-Key` is ignored. */
  idempotency?: false;
  /** Media type of a non-JSON success body (the handler sends a string or Buffer). */
  /**
   * Media type of the `errors` this route's handler answers itself, when its protocol answers
   * errors in it too (DynDNS2's `badauth` is text/plain). Errors of the HTTP layer stay JSON.
   */
  errorsProduce?: string;
  produces?: string;
  deprecated?: boolean;
  hidden?: boolean;
  handler(req: RouteRequest<P, Q, B, A>): Promise<unknown>;
}

/** How a route's errors are shaped: rendered from the kernel's body, declared as `schema`. */
export interface ErrorFormat {
  /** A shared schema: `$id` names it in the OpenAPI document. */
  schema: TSchema & { $id: string };
  /**
   * `kernelBody` is `{detail: {code, message, …}}`, or the rate-limit body for 429; `thrown` is
   * what was thrown, for formats that carry more of it than the kernel's body does.
   */
  render(status: number, kernelBody: unknown, thrown?: unknown): unknown;
}

// biome-ignore lint/suspicious/noExplicitAny: the registry holds routes of every shape
export type AnyRoute = RouteDef<any, any, any, any>;

export function defineRoute<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  A extends Access = Access,
>(def: RouteDef<P, Q, B, A>): AnyRoute {
  return def as AnyRoute;
}

/** Marks the body schema of a route whose body is an unread stream (declared for OpenAPI only). */
export const RAW_BODY = 'x-fjord-raw-body';

export const successStatus = (route: AnyRoute): number =>
  route.status ?? Number(Object.keys(route.response)[0] ?? 200);
