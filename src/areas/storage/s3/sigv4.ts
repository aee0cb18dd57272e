import * as crypto from 'node:crypto';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { S3Error, s3Errors } from './errors.js';

/**
 * AWS Signature Version 4 as S3 uses it: the Authorization header and presigned query strings.
 * The canonical request is rebuilt from the request exactly as it arrived — the Host header as
 * sent (never a proxy's idea of the port), the path as sent — and compared in constant time.
 */
export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
export const STREAMING_SIGNED = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
export const STREAMING_SIGNED_TRAILER = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';
export const STREAMING_UNSIGNED_TRAILER = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
export const MAX_SKEW_MS = 15 * 60_000;
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export interface SignedRequest {
  method: string;
  /** The request target as sent: path and query string. */
  url: string;
  /** Node's rawHeaders: name, value, name, value … */
  rawHeaders: string[];
  headers: Record<string, string | string[] | undefined>;
}

export interface Credential {
  kind: 'header' | 'query';
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
  /** `yyyymmddThhmmssZ` */
  amzDate: string;
  /** Presigned only. */
  expiresSeconds: number | null;
  /** What the payload is declared to be: a hex SHA-256, UNSIGNED-PAYLOAD or a STREAMING-… mode. */
  payloadHash: string;
  /** 2 for a request signed with Signature Version 2 (sigv2.ts); absent for version 4. */
  version?: 2;
}

const header = (req: SignedRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

/** The credential a request carries, or null for an anonymous request. */
export function parseCredential(req: SignedRequest): Credential | null {
  const auth = header(req, 'authorization');
  if (auth) {
    if (!auth.startsWith(`${ALGORITHM} `)) {
      throw s3Errors.authorizationHeaderMalformed(
        'The authorization header is malformed; the algorithm is not supported.',
      );
    }
    let credential: string | undefined;
    let signedHeaders: string | undefined;
    let signature: string | undefined;
    for (const part of auth.slice(ALGORITHM.length + 1).split(',')) {
      const eq = part.indexOf('=');
      if (eq <= 0) continue;
      const name = part.slice(0, eq).trim();
      const value = part.slice(eq + 1).trim();
      if (name === 'Credential') credential = value;
      else if (name === 'SignedHeaders') signedHeaders = value;
      else if (name === 'Signature') signature = value;
    }
    if (!credential || !signedHeaders || !signature) {
      throw s3Errors.authorizationHeaderMalformed(
        'The authorization header is malformed; it needs Credential, SignedHeaders and Signature.',
      );
    }
    const amzDate = header(req, 'x-amz-date') ?? fromHttpDate(header(req, 'date'));
    if (!amzDate)
      throw new S3Error('AccessDenied', 403, 'AWS authentication requires a valid Date or x-amz-date header');
    const scope = splitScope(credential, (m) => s3Errors.authorizationHeaderMalformed(m));
    // Written out: a spread plus further fields costs microseconds per request on Node 20.
    return {
      kind: 'header',
      accessKeyId: scope.accessKeyId,
      date: scope.date,
      region: scope.region,
      service: scope.service,
      signedHeaders: signedHeaders.split(';'),
      signature,
      amzDate,
      expiresSeconds: null,
      payloadHash: header(req, 'x-amz-content-sha256') ?? UNSIGNED_PAYLOAD,
    };
  }
  const q = req.url.indexOf('?');
  if (q < 0) return null;
  const params = new URLSearchParams(req.url.slice(q + 1));
  if (params.has('X-Amz-Algorithm') || params.has('X-Amz-Credential')) {
    const bad = (m: string) => s3Errors.authorizationQueryParametersError(m);
    if (params.get('X-Amz-Algorithm') !== ALGORITHM)
      throw bad('X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"');
    const credential = params.get('X-Amz-Credential');
    const amzDate = params.get('X-Amz-Date');
    const signedHeaders = params.get('X-Amz-SignedHeaders');
    const signature = params.get('X-Amz-Signature');
    const expires = params.get('X-Amz-Expires');
    if (!credential || !amzDate || !signedHeaders || !signature || !expires) {
      throw bad(
        'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
      );
    }
    // A negative one (boto3 signs ExpiresIn=-1000 as asked) is AWS's 400, not an expired 403.
    if (/^-\d+$/.test(expires)) throw bad('X-Amz-Expires must be non-negative');
    if (!/^\d+$/.test(expires)) throw bad('X-Amz-Expires should be a number');
    const expiresSeconds = Number(expires);
    if (expiresSeconds > MAX_PRESIGN_SECONDS)
      throw bad(
        'X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds',
      );
    return {
      kind: 'query',
      ...splitScope(credential, bad),
      signedHeaders: signedHeaders.split(';'),
      signature,
      amzDate,
      expiresSeconds,
      payloadHash: params.get('X-Amz-Content-Sha256') ?? UNSIGNED_PAYLOAD,
    };
  }
  return null;
}

function splitScope(credential: string, bad: (m: string) => S3Error) {
  // The access key id may itself contain '/' in some systems; the last four parts are the scope.
  const parts = credential.split('/');
  if (parts.length < 5 || parts[parts.length - 1] !== 'aws4_request') {
    throw bad(
      `Error parsing the X-Amz-Credential parameter; the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`,
    );
  }
  const [date, region, service] = parts.slice(-4, -1) as [string, string, string];
  return { accessKeyId: parts.slice(0, -4).join('/'), date, region, service };
}

function fromHttpDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : toAmzDate(ms);
}

export const toAmzDate = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

export function amzDateToMs(amzDate: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!m) return null;
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
}

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ is %XX (upper case). */
export function uriEncode(value: string, keepSlash = false): string {
  let out = encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  if (keepSlash) out = out.replace(/%2F/g, '/');
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function canonicalQuery(rawQuery: string, dropSignature: boolean): string {
  const pairs: [string, string][] = [];
  for (const part of rawQuery.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const k = safeDecode((eq >= 0 ? part.slice(0, eq) : part).replace(/\+/g, '%20'));
    const v = eq >= 0 ? safeDecode(part.slice(eq + 1).replace(/\+/g, '%20')) : '';
    if (dropSignature && k === 'X-Amz-Signature') continue;
    pairs.push([uriEncode(k), uriEncode(v)]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

function canonicalHeaders(req: SignedRequest, names: string[]): string | null {
  const values = new Map<string, string[]>();
  for (const name of names) values.set(name, []);
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const list = values.get(req.rawHeaders[i]!.toLowerCase());
    if (!list) continue; // not signed
    list.push(req.rawHeaders[i + 1]!.trim().replace(/\s+/g, ' '));
  }
  let out = '';
  for (const name of names) {
    const v = values.get(name)!;
    if (v.length === 0) return null; // a signed header that is not there cannot match
    out += `${name}:${v.join(',')}\n`;
  }
  return out;
}

const keyCache = new Map<string, Buffer>();

export function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  const id = `${secret}\n${date}\n${region}\n${service}`;
  let key = keyCache.get(id);
  if (!key) {
    const kDate = createHmac('sha256', `AWS4${secret}`).update(date).digest();
    const kRegion = createHmac('sha256', kDate).update(region).digest();
    const kService = createHmac('sha256', kRegion).update(service).digest();
    key = createHmac('sha256', kService).update('aws4_request').digest();
    if (keyCache.size > 1000) keyCache.clear();
    keyCache.set(id, key);
  }
  return key;
}

export const scopeOf = (c: Pick<Credential, 'date' | 'region' | 'service'>) =>
  `${c.date}/${c.region}/${c.service}/aws4_request`;

/** `crypto.hash` (Node 20.12 on) hashes in one call, without a Hash object per digest. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Buffer, encoding: 'hex') => string })
  .hash;
export const sha256Hex = (data: string | Buffer): string =>
  oneShot ? oneShot('sha256', data, 'hex') : createHash('sha256').update(data).digest('hex');

/**
 * The bytes a signed text stands for. Node decodes header bytes one to a character (latin1), so a
 * header sent as UTF-8 (`x-amz-meta-name: Ünïcode`, which curl and s3-tests send) reaches us as
 * one character per byte: hashing that as UTF-8 would hash other bytes than the client signed.
 * Texts with characters past U+00FF did not come off the wire that way and are UTF-8.
 */
export function wireBytes(text: string): Buffer {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the whole latin1 range is meant
  return Buffer.from(text, /^[\u0000-\u00ff]*$/.test(text) ? 'latin1' : 'utf8');
}
export const hmacHex = (key: Buffer, data: string) => createHmac('sha256', key).update(data).digest('hex');

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * True when the signature matches. The path is tried as sent and, failing that, re-encoded the
 * strict SigV4 way: clients differ in which reserved characters they leave unescaped on the wire.
 */
export function verifySignature(req: SignedRequest, cred: Credential, secret: string): boolean {
  const q = req.url.indexOf('?');
  const rawPath = q >= 0 ? req.url.slice(0, q) : req.url;
  const query = canonicalQuery(q >= 0 ? req.url.slice(q + 1) : '', cred.kind === 'query');
  const headers = canonicalHeaders(req, cred.signedHeaders);
  if (headers === null || !cred.signedHeaders.includes('host')) return false;
  const key = signingKey(secret, cred.date, cred.region, cred.service);
  const signs = (path: string) => {
    const canonical = [req.method, path, query, headers, cred.signedHeaders.join(';'), cred.payloadHash].join(
      '\n',
    );
    const toSign = [ALGORITHM, cred.amzDate, scopeOf(cred), sha256Hex(wireBytes(canonical))].join('\n');
    return safeEqual(hmacHex(key, toSign), cred.signature);
  };
  if (signs(rawPath)) return true;
  // Re-encoded only when the path as sent did not match (most clients send it encoded already).
  const strict = rawPath
    .split('/')
    .map((s) => uriEncode(safeDecode(s)))
    .join('/');
  return strict !== rawPath && signs(strict);
}

/** Signs a request the way clients do (used by the upstream S3 driver and by tests). */
export function signRequest(opts: {
  method: string;
  path: string;
  query?: string;
  headers: Record<string, string>;
  accessKeyId: string;
  secret: string;
  region: string;
  nowMs: number;
  payloadHash: string;
}): Record<string, string> {
  const amzDate = toAmzDate(opts.nowMs);
  const date = amzDate.slice(0, 8);
  const headers: Record<string, string> = {
    ...opts.headers,
    'x-amz-date': amzDate,
    'x-amz-content-sha256': opts.payloadHash,
  };
  const names = Object.keys(headers)
    .map((h) => h.toLowerCase())
    .sort();
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const canonHeaders = names.map((n) => `${n}:${String(lower[n]).trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = [
    opts.method,
    opts.path,
    canonicalQuery(opts.query ?? '', false),
    canonHeaders,
    names.join(';'),
    opts.payloadHash,
  ].join('\n');
  const scope = `${date}/${opts.region}/s3/aws4_request`;
  const toSign = [ALGORITHM, amzDate, scope, sha256Hex(wireBytes(canonical))].join('\n');
  const signature = hmacHex(signingKey(opts.secret, date, opts.region, 's3'), toSign);
  headers['authorization'] =
    `${ALGORITHM} Credential=${opts.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  return headers;
}

/** A SigV4 presigned URL (query-string authentication, UNSIGNED-PAYLOAD, only `host` signed). */
export function presignUrl(opts: {
  method: string;
  endpoint: string;
  path: string;
  accessKeyId: string;
  secret: string;
  region: string;
  nowMs: number;
  expiresSeconds: number;
}): string {
  const url = new URL(opts.endpoint);
  const amzDate = toAmzDate(opts.nowMs);
  const date = amzDate.slice(0, 8);
  const scope = `${date}/${opts.region}/s3/aws4_request`;
  const params = new URLSearchParams({
    'X-Amz-Algorithm': ALGORITHM,
    'X-Amz-Credential': `${opts.accessKeyId}/${scope}`,
    'X-Amz-Date': amzDate,
    'X-Amz-Expires': String(opts.expiresSeconds),
    'X-Amz-SignedHeaders': 'host',
  });
  const query = canonicalQuery(params.toString(), false);
  const path = opts.path
    .split('/')
    .map((s) => uriEncode(s))
    .join('/');
  const canonical = [opts.method, path, query, `host:${url.host}\n`, 'host', UNSIGNED_PAYLOAD].join('\n');
  const toSign = [ALGORITHM, amzDate, scope, sha256Hex(wireBytes(canonical))].join('\n');
  const signature = hmacHex(signingKey(opts.secret, date, opts.region, 's3'), toSign);
  return `${url.origin}${path}?${query}&X-Amz-Signature=${signature}`;
}
