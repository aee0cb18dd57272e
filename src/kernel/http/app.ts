import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import { OptionalKind } from '@sinclair/typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { type PresentedCredential, presentedCredential } from '../auth/authenticate.js';
import type { OperatorPrincipal, Principal } from '../auth/principal.js';
import { AppError, kernelErrors } from '../errors.js';
import type { Kernel } from '../kernel.js';
import type { RateLimitOutcome } from '../limits/rate-limiter.js';
import { makeValidatorCompiler } from './ajv.js';
import { clientErrorFormatOf } from './client-error-format.js';
import { toHttpError } from './errors-to-http.js';
import { IdempotencyStore } from './idempotency.js';
import { parseJsonBody } from './json-body.js';
import type { HttpMetrics, RouteSeries } from './metrics.js';
import { openApiRouteSchema, SHARED_SCHEMAS, SWAGGER_OPTIONS } from './openapi.js';
import { type AnyRoute, successStatus } from './route.js';
import { lazySerializers } from './serializers.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | OperatorPrincipal | null;
    idempotency: { scope: string; key: string } | null;
    /** The matched route, set by its first hook (null until then, and when none matched). */
    mounted: MountedRoute | null;
  }
  interface FastifyContextConfig {
    route?: AnyRoute;
  }
}

const REQUEST_ID = /^[\w.:@/+=-]{1,200}$/;

/**
 * Request ids are UUIDs (v4: 106 random bits from a fresh `randomUUID` every 65 536 ids, the
 * last four hex digits counted), unique without a random UUID per request, which cost ~0.4 µs.
 * They name a request in logs; nothing uses them as a secret.
 */
let idBase = '';
let idCount = 0x10000;
export function nextRequestId(): string {
  if (idCount === 0x10000) {
    idBase = randomUUID().slice(0, 32);
    idCount = 0;
  }
  const n = idCount++;
  return idBase + HEX2[n >> 8]! + HEX2[n & 0xff]!;
}
const HEX2 = Array.from({ length: 256 }, (_, n) => n.toString(16).padStart(2, '0'));

/** What a request needs of its route after routing: the contract and its metrics series. */
interface MountedRoute {
  readonly def: AnyRoute;
  readonly series: RouteSeries;
}

/** Builds the API server: one Fastify app with every route's contract, auth, limits and errors wired in. */
export async function buildHttpApp(
  kernel: Kernel,
  routes: AnyRoute[],
  metrics: HttpMetrics,
  idempotency: IdempotencyStore,
): Promise<FastifyInstance> {
  const formatOfRefused = clientErrorFormatOf(routes);
  const app = Fastify({
    // HTTPS when FJORD_TLS_CERT and FJORD_TLS_KEY are set; the app is the same either way.
    ...((kernel.config.tls ? { https: kernel.config.tls } : {}) as object),
    loggerInstance: kernel.log.child({ role: 'api' }) as FastifyBaseLogger,
    // No child logger per request (a measurable share of a small request's cost): the lines we
    // write name the request id themselves.
    childLoggerFactory: (logger) => logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: kernel.config.bodyLimitBytes,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : nextRequestId();
    },
    return503OnClosing: true,
    // Response serializers are compiled on a route's first answer with each status, not at start:
    // compiling all of them (hundreds of routes, each with its error statuses) was half of the
    // start-up time. The first answer of a kind pays ~0.5 ms once.
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
    // URLs the router cannot decode (`%zz`) or parameters over its length limit: our error shape.
    // A route with its own error shape (the OpenAI-compatible ones) gets it here too.
    frameworkErrors: (err, req, reply) => {
      const http = toHttpError(err);
      const format = formatOfRefused(`${req.method} ${req.url} HTTP/1.1`);
      (reply as unknown as FastifyReply)
        .code(http.status)
        .headers({ ...http.headers, 'x-request-id': req.id })
        .send(format ? format.render(http.status, http.body, err) : http.body);
    },
    routerOptions: { ignoreTrailingSlash: true },
    // What Node's HTTP parser refuses before any route sees it (headers or URL over 16 KB,
    // malformed request lines) still gets our error shape, and the connection is closed.
    clientErrorHandler: (err: NodeJS.ErrnoException, socket) => {
      if (!socket.writable) return socket.destroy();
      const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
      const kernelBody = {
        detail: tooLarge
          ? { code: 'headers_too_large', message: 'The request line and headers exceed 16 KB.' }
          : { code: 'bad_request', message: 'Malformed HTTP request.' },
      };
      const format = formatOfRefused((err as { rawPacket?: unknown }).rawPacket);
      const body = JSON.stringify(format ? format.render(tooLarge ? 431 : 400, kernelBody) : kernelBody);
      socket.end(
        `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
  });
  app.setValidatorCompiler(makeValidatorCompiler());
  app.decorateRequest('principal', null);
  app.decorateRequest('idempotency', null);
  app.decorateRequest('mounted', null);

  // JSON only: Fastify's text/plain parser would hand a string to the body schema (a 422, not a 415).
  app.removeContentTypeParser('text/plain');
  // An empty body means none; too deep, invalid or with lone surrogates, refused (see json-body.ts).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);

  // Global hooks are callback-style: on every request an async hook costs a promise and a tick.
  // There is no global onRequest: each route's own first hook sets X-Request-Id (see `mount`),
  // and the not-found handler, the error handler and frameworkErrors set it where no route did.
  app.addHook('onResponse', (req, reply, done) => {
    const mounted = req.mounted;
    metrics.end(req, reply, mounted ? mounted.series : metrics.unmatched);
    // A 500 is Fjord's fault; a 502-504 it chose to answer (a back end down, still starting) is not.
    const level = reply.statusCode === 500 ? 'error' : reply.statusCode > 500 ? 'warn' : 'info';
    // Checked first: the line's object is not even built at a level that drops it.
    if ((req.log as unknown as { isLevelEnabled(l: string): boolean }).isLevelEnabled(level))
      req.log[level](
        {
          reqId: req.id,
          method: req.method,
          url: mounted ? mounted.def.url : req.url.split('?')[0], // query strings may carry secrets
          status: reply.statusCode,
          ms: reply.elapsedTime,
        },
        'request',
      );
    done();
  });
  const recordIdempotent = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const idem = req.idempotency;
    if (idem && typeof payload === 'string') {
      const contentType = String(reply.getHeader('content-type') ?? '');
      await idempotency.complete(idem.scope, idem.key, reply.statusCode, payload, contentType);
    }
    return payload;
  };

  app.setErrorHandler((err, req, reply) => {
    const route = (req.routeOptions.config as { route?: AnyRoute } | undefined)?.route;
    const http = toHttpError(err, route?.validationCode);
    if (http.internal) req.log.error({ err, reqId: req.id }, 'request failed');
    // A back end's failure shown to the client as a clear 502/503: the operator needs its cause.
    else if (http.status >= 500 && err instanceof AppError && err.cause !== undefined)
      req.log.warn({ err: err.cause, code: err.code, reqId: req.id }, 'a back end failed the request');
    const format = route?.errorFormat;
    if (!reply.hasHeader('x-request-id')) reply.header('x-request-id', req.id);
    reply
      .code(http.status)
      .headers(http.headers)
      .send(format ? format.render(http.status, http.body, err) : http.body);
  });
  app.setNotFoundHandler((req, reply) => {
    const http = toHttpError(kernelErrors.routeNotFound(req.method, req.url.split('?')[0]!));
    reply.code(http.status).header('x-request-id', req.id).send(http.body);
  });

  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  // Error shapes of routes that answer in their protocol's own (each schema added once).
  for (const schema of new Set(routes.flatMap((r) => (r.errorFormat ? [r.errorFormat.schema] : []))))
    app.addSchema(schema);
  await app.register(swagger, SWAGGER_OPTIONS(kernel.baseUrl()));

  const mount = (target: FastifyInstance, route: AnyRoute) => {
    const status = successStatus(route);
    const mounted: MountedRoute = { def: route, series: metrics.forRoute(route.url) };
    target.route({
      method: route.method,
      url: route.url,
      schema: openApiRouteSchema(route),
      config: { route },
      onRequest: route.access.kind === 'public' ? keyedPublic(kernel, mounted) : authoriser(kernel, mounted),
      // A body declared Type.Optional(...) may be left out: it is then validated as `{}`.
      preValidation: route.body && OptionalKind in route.body ? emptyBodyAsObject : undefined,
      preHandler:
        route.method === 'POST' && route.idempotency !== false
          ? (req, reply) => beginIdempotency(idempotency, req, reply)
          : undefined,
      onSend: route.method === 'POST' && route.idempotency !== false ? recordIdempotent : undefined,
      // Callback-style: the handler's own promise is the only one a request waits on. Returning
      // a promise would cost two more per request (Fastify's `then` on it, and adopting the
      // reply, a thenable, that it resolved to).
      handler: (req, reply) => {
        route
          .handler({
            params: req.params as never,
            query: req.query as never,
            body: req.body as never,
            principal: req.principal as never,
            raw: req,
            reply,
          })
          .then(
            (result) => {
              if (reply.sent) return; // the handler answered itself (a stream, a redirect)
              // A handler may name the exact type (a download's image/png); `produces` is the default.
              if (route.produces && !reply.hasHeader('content-type')) reply.type(route.produces);
              reply.code(status).send(result);
            },
            (err: unknown) => failed(reply, err),
          );
      },
    });
  };
  for (const route of routes) if (!route.rawBody) mount(app, route);
  // Uploads: in a scope of their own, every media type reaches the handler as the unread stream.
  const rawRoutes = routes.filter((r) => r.rawBody);
  if (rawRoutes.length > 0)
    await app.register((scope, _options, registered) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
      for (const route of rawRoutes) mount(scope, route);
      registered();
    });
  return app;
}

/** A handler's rejection, to the error handler (what Fastify does for a handler's promise). */
function failed(reply: FastifyReply, err: unknown): void {
  if (reply.sent) {
    reply.log.error({ err, reqId: reply.request.id }, 'the handler failed after its answer was sent');
    return;
  }
  // Fastify sends only an Error to the error handler; anything else thrown is wrapped, kept as cause.
  reply.send(err instanceof Error ? err : new Error('The handler failed.', { cause: err }));
}

function emptyBodyAsObject(req: FastifyRequest, _reply: FastifyReply, done: () => void) {
  if (req.body === undefined || req.body === null) req.body = {};
  done();
}

/**
 * A public route called with a key (a catalogue read by a customer's client) is counted and
 * answered with X-RateLimit-* like every keyed request; a key that does not identify anyone is
 * ignored, since the route needs none. Without a credential nothing is done.
 */
function keyedPublic(kernel: Kernel, mounted: MountedRoute) {
  const route = mounted.def;
  const buckets = route.rateLimit ?? [bucketOfTag(route.tag)];
  const anyCustomer = { kind: 'customer', services: 'any', oidc: true, bearer: true } as const;
  const slowly = async (reply: FastifyReply, presented: PresentedCredential) => {
    let principal: Principal | OperatorPrincipal | null | undefined;
    try {
      // The credential cache first, as on every other route: verifying a key afresh is slow.
      principal = kernel.auth.identifyNow(anyCustomer, presented);
      if (principal === undefined) principal = await kernel.auth.identify(anyCustomer, presented);
    } catch {
      return;
    }
    if (!principal) return;
    const outcome =
      kernel.limiter.consumeNow(buckets, principal.credential.id) ??
      (await kernel.limiter.consume(buckets, principal.credential.id));
    reply.header('x-ratelimit-limit', outcome.limit);
    reply.header('x-ratelimit-remaining', outcome.remaining);
    reply.header('x-ratelimit-reset', outcome.reset);
    if (!outcome.allowed) throw kernelErrors.rateLimited(outcome);
  };
  // Callback-style, so that a request without a credential (the common case) pays no promise.
  return (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    req.mounted = mounted;
    reply.header('x-request-id', req.id);
    let presented: PresentedCredential | null;
    try {
      presented = presentedCredential(req.headers);
    } catch (err) {
      return done(err as Error);
    }
    if (!presented) return done();
    slowly(reply, presented).then(() => done(), done);
  };
}

/**
 * The route's onRequest hook: who is calling (401), their rate limit (429), whether the route
 * takes their credential (403). Callback-style with a synchronous path — a cached API key and
 * in-memory counters, the common case — so most requests pay no promise for it; the rest take
 * the asynchronous one.
 */
function authoriser(kernel: Kernel, mounted: MountedRoute) {
  const route = mounted.def;
  const buckets = route.rateLimit ?? [route.access.kind === 'operator' ? 'admin' : bucketOfTag(route.tag)];
  const limitAndAuthorise = (
    principal: Principal | OperatorPrincipal,
    reply: FastifyReply,
    outcome: RateLimitOutcome,
  ) => {
    reply.header('x-ratelimit-limit', outcome.limit);
    reply.header('x-ratelimit-remaining', outcome.remaining);
    reply.header('x-ratelimit-reset', outcome.reset);
    if (!outcome.allowed) throw kernelErrors.rateLimited(outcome);
    kernel.auth.authorise(route.access, principal);
  };
  const slowly = async (req: FastifyRequest, reply: FastifyReply, known?: Principal | OperatorPrincipal) => {
    const principal = known ?? (await kernel.auth.identify(route.access, presentedCredential(req.headers)));
    req.principal = principal;
    if (!principal) return;
    limitAndAuthorise(principal, reply, await kernel.limiter.consume(buckets, principal.credential.id));
  };
  return (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    req.mounted = mounted;
    reply.header('x-request-id', req.id);
    try {
      const principal = kernel.auth.identifyNow(route.access, presentedCredential(req.headers));
      if (principal === undefined) return void slowly(req, reply).then(() => done(), done);
      req.principal = principal;
      if (!principal) return done();
      const outcome = kernel.limiter.consumeNow(buckets, principal.credential.id);
      if (outcome === undefined) return void slowly(req, reply, principal).then(() => done(), done);
      limitAndAuthorise(principal, reply, outcome);
      done();
    } catch (err) {
      done(err as Error);
    }
  };
}

async function beginIdempotency(store: IdempotencyStore, req: FastifyRequest, reply: FastifyReply) {
  const key = req.headers['idempotency-key'];
  // Scoped to the credential, not only the customer: a replay must not hand one key the answer
  // another key was allowed to get (a new secret, say).
  const principal = req.principal;
  if (typeof key !== 'string' || !principal?.customerId) return;
  const scope = `${principal.customerId}:${principal.credential.id}`;
  const outcome = await store.begin(scope, key, IdempotencyStore.fingerprint(req.method, req.url, req.body));
  if (outcome.kind === 'fresh') {
    req.idempotency = { scope, key };
    return;
  }
  reply
    .code(outcome.status)
    .header('idempotent-replayed', 'true')
    .header('content-type', outcome.contentType || 'application/json; charset=utf-8')
    .serializer((p: unknown) => p as string)
    .send(outcome.body);
  return reply;
}

export const bucketOfTag = (tag: string): string => tag.toLowerCase().replace(/\s+/g, '-');
