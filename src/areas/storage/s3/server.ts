import http from 'node:http';
import https from 'node:https';
import type { Role } from '../../../config/config.js';
import { isDiskFull } from '../../../kernel/disk-space.js';
import { pooledRandomBytes } from '../../../kernel/ids.js';
import type { RoleServer } from '../../../kernel/kernel.js';
import { authenticate, type Principal } from './auth.js';
import { S3Call, type S3Env } from './context.js';
import { actualHeaders, findRule, preflightHeaders } from './cors.js';
import { fromAppError, S3Error, s3Errors } from './errors.js';
import { internalUpload, isInternalUpload } from './internal-upload.js';
import { levelOf, s3OperationOf } from './operation-lookup.js';
import { el, XML_HEADER } from './xml.js';

/** Splits a request into bucket and key: virtual-host style under the base domain, else path style. */
export function addressOf(
  host: string | undefined,
  path: string,
  baseDomain: string | null,
): { bucket: string | null; key: string | null } {
  const hostname = (host ?? '').replace(/:\d+$/, '').toLowerCase();
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw s3Errors.invalidArgument('The request path is not valid percent-encoding.');
    }
  };
  if (baseDomain && hostname.endsWith(`.${baseDomain}`)) {
    const bucket = hostname.slice(0, -baseDomain.length - 1);
    const key = path.length > 1 ? decode(path.slice(1)) : null;
    return { bucket, key };
  }
  const rest = path.slice(1);
  if (!rest) return { bucket: null, key: null };
  const slash = rest.indexOf('/');
  if (slash < 0) return { bucket: decode(rest), key: null };
  const key = rest.slice(slash + 1);
  return { bucket: decode(rest.slice(0, slash)), key: key ? decode(key) : null };
}

export class S3Server implements RoleServer {
  readonly role: Role = 's3';
  readonly name = 's3';
  private server: http.Server | null = null;
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly env: S3Env,
    private readonly host: string,
    private readonly port: number,
    private readonly onListening: (port: number) => void = () => {},
    private readonly tls: { cert: string; key: string } | null = null,
  ) {}

  get boundPort(): number | null {
    const a = this.server?.address();
    return typeof a === 'object' && a ? a.port : null;
  }

  async start(): Promise<void> {
    const options = { keepAliveTimeout: 30_000, requestTimeout: 0 };
    const listener = (req: http.IncomingMessage, res: http.ServerResponse) => void this.handle(req, res);
    // HTTPS when FJORD_TLS_CERT and FJORD_TLS_KEY are set (the same requests, over TLS).
    const server: http.Server = this.tls
      ? https.createServer({ ...options, ...this.tls }, listener)
      : http.createServer(options, listener);
    server.headersTimeout = 60_000;
    // `Expect: 100-continue` is answered by the handler once the request is authorised (S3Call
    // .continueIfExpected), not by Node before anything is checked.
    server.on('checkContinue', listener);
    // Any other `Expect` value is ignored, as S3 ignores it, where Node would answer 417.
    server.on('checkExpectation', listener);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => resolve());
    });
    this.server = server;
    this.env.bandwidth?.start();
    this.onListening(this.boundPort!);
  }

  /** Adds the bandwidth counted so far to the store and re-judges who is over (tests, shutdown). */
  flushCounters(): Promise<void> {
    return this.env.bandwidth?.flush() ?? Promise.resolve();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await this.env.bandwidth?.stop();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const requestId = pooledRandomBytes(8).toString('hex').toUpperCase();
    res.setHeader('x-amz-request-id', requestId);
    res.setHeader('x-amz-id-2', requestId);
    res.setHeader('server', 'Fjord');
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q >= 0 ? url.slice(0, q) : url;
    const query = new URLSearchParams(q >= 0 ? url.slice(q + 1) : '');
    let call: S3Call | null = null;
    let counted: string | null = null;
    const started = process.hrtime.bigint();
    // Metrics and log lines name the operation as AWS does (operations.ts); never a bucket or key.
    let operation = 'UnaddressedRequest';
    res.once('finish', () => {
      const length = Number(res.getHeader('content-length') ?? 0);
      // Downloads count toward the bucket owner's bandwidth, whoever asked (public buckets too).
      const owner = call?.bucket?.customerId;
      if (owner && req.method === 'GET' && res.statusCode < 300 && Number.isFinite(length))
        this.env.bandwidth?.add(owner, length);
      this.env.metrics?.observe(
        's3',
        operation,
        String(res.statusCode),
        Number(process.hrtime.bigint() - started) / 1e9,
        {
          in: Number(req.headers['content-length'] ?? 0) || 0,
          out: Number.isFinite(length) ? length : 0,
        },
        { customer: call?.principal.kind === 'key' ? call.principal.key.customerId : null, id: requestId },
      );
    });
    try {
      const { bucket, key } = addressOf(req.headers.host, path, this.env.settings.baseDomain);
      const s3call = new S3Call(this.env, req, res, requestId, bucket, key, query, { kind: 'anonymous' });
      call = s3call;
      if (req.method === 'OPTIONS') {
        operation = 'PreflightRequest';
        return await this.preflight(call);
      }
      // A presigned upload into an internal bucket carries its own narrow grant (internal-upload.ts).
      if (isInternalUpload(query)) {
        operation = 'InternalUpload';
        return await internalUpload(call, this.env.secrets);
      }
      const s3op = s3OperationOf(req.method ?? 'GET', levelOf(bucket, key), query, (name) =>
        s3call.header(name),
      );
      operation = s3op?.name ?? 'UnknownOperation';
      call.operation = s3op;
      await this.addCors(call);
      if (!s3op?.formAuth) {
        const principal: Principal = await authenticate(req, this.env.cache, {
          regions: this.env.settings.regions,
          baseDomain: this.env.settings.baseDomain,
          nowMs: () => this.env.clock.nowMs(),
        });
        call.principal = principal;
        if (principal.kind === 'key') {
          counted = principal.key.accessKeyId;
          const n = (this.inFlight.get(counted) ?? 0) + 1;
          this.inFlight.set(counted, n);
          if (n > this.env.settings.maxConnectionsPerKey) throw s3Errors.tooManyConnections();
          void this.env.directory.recordKeyUse?.(counted);
        }
      }
      if (!s3op) throw s3Errors.methodNotAllowed();
      await s3op.run(call);
    } catch (err) {
      this.fail(call, req, res, requestId, path, operation, err);
    } finally {
      if (counted) {
        const n = (this.inFlight.get(counted) ?? 1) - 1;
        if (n <= 0) this.inFlight.delete(counted);
        else this.inFlight.set(counted, n);
      }
    }
  }

  private async preflight(call: S3Call): Promise<void> {
    const origin = call.header('origin');
    const method = call.header('access-control-request-method');
    if (!origin || !method || !call.bucketName) {
      throw new S3Error('BadRequest', 400, 'Insufficient information. Origin request header needed.');
    }
    const bucket = await this.env.cache.findBucket(call.bucketName);
    const headers = (call.header('access-control-request-headers') ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean);
    const rule = bucket ? findRule(bucket, origin, method, headers) : null;
    if (!rule) throw s3Errors.corsNotAllowed();
    call.send(200, preflightHeaders(rule, origin, headers));
  }

  private async addCors(call: S3Call): Promise<void> {
    const origin = call.header('origin');
    if (!origin || !call.bucketName) return;
    const bucket = await this.env.cache.findBucket(call.bucketName).catch(() => null);
    const method = call.req.method === 'HEAD' ? 'HEAD' : (call.req.method ?? 'GET');
    const rule = bucket ? findRule(bucket, origin, method) : null;
    if (rule) call.corsHeaders = actualHeaders(rule, origin);
  }

  private fail(
    call: S3Call | null,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    requestId: string,
    path: string,
    operation: string,
    err: unknown,
  ): void {
    let s3 = err instanceof S3Error ? err : fromAppError(err, call?.bucketName ?? undefined);
    // Before the went-away check: a failed file write tears the request stream down too.
    if (!s3 && isDiskFull(err)) {
      this.env.log.warn({ err, operation, method: req.method, path }, 's3 write refused: disk full');
      s3 = s3Errors.storageFull();
    }
    // A client that goes away mid-answer (a GET read in part, a cancelled upload) is ordinary
    // traffic, not a failure of ours.
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    if (
      !s3 &&
      (res.destroyed ||
        req.destroyed ||
        code === 'ERR_STREAM_PREMATURE_CLOSE' ||
        code === 'ECONNRESET' ||
        code === 'EPIPE')
    ) {
      this.env.log.debug({ code, operation, method: req.method, path }, 's3 client went away');
      res.destroy();
      return;
    }
    if (!s3) {
      // The operation (AWS's name, as in metrics) tells an operator which code path failed.
      this.env.log.error({ err, operation, method: req.method, path }, 's3 request failed');
      s3 = s3Errors.internal();
    }
    if (res.headersSent) {
      // The status line is gone: cutting the connection is the only way to say the body is wrong.
      res.destroy();
      return;
    }
    for (const [k, v] of Object.entries(call?.corsHeaders ?? {})) res.setHeader(k, v);
    for (const [k, v] of Object.entries(s3.headers)) res.setHeader(k, v);
    res.statusCode = s3.status;
    if (s3.status === 304 || req.method === 'HEAD') {
      res.end();
      drain(req);
      return;
    }
    const extras = Object.entries(s3.extra)
      .map(([k, v]) => el(k, v))
      .join('');
    const body = `${XML_HEADER}<Error>${el('Code', s3.code)}${el('Message', s3.message)}${extras}${el('Resource', path)}${el('RequestId', requestId)}${el('HostId', requestId)}</Error>`;
    res.setHeader('content-type', 'application/xml');
    res.setHeader('content-length', Buffer.byteLength(body));
    // An unread request body would stall a keep-alive client; close instead of reading gigabytes.
    if (!req.readableEnded && !req.complete) res.setHeader('connection', 'close');
    res.end(body);
    drain(req);
  }
}

function drain(req: http.IncomingMessage): void {
  if (!req.complete) {
    req.on('error', () => {});
    req.resume();
  }
}
