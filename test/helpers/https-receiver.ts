import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';

export interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: webhook bodies are arbitrary JSON
  json: any;
}

/**
 * A self-signed certificate made with openssl, as a test CA would issue one: for 127.0.0.1 unless
 * other subject alternative names are asked for.
 */
export function selfSigned(
  commonName = '127.0.0.1',
  altNames = 'IP:127.0.0.1',
): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-sms-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        `/CN=${commonName}`,
        '-addext',
        `subjectAltName=${altNames}`,
      ],
      { stdio: 'ignore' },
    );
    return {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * An HTTPS webhook receiver on 127.0.0.1 (callback URLs must be https), and the fetch that
 * trusts its certificate, to hand to the test Fjord.
 */
export class HttpsReceiver {
  readonly requests: Received[] = [];
  private readonly tls = selfSigned();
  private readonly server: Server = createServer(this.tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {}
      this.requests.push({ path: req.url ?? '/', headers: req.headers, body, json });
      // A held path answers late: the sender is mid-request meanwhile (a worker mid-job).
      const hold = this.holds.get(req.url ?? '/') ?? 0;
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      }, hold);
    });
  });
  base = '';
  /** Milliseconds each path waits before answering (`hold`). */
  private readonly holds = new Map<string, number>();

  /** Answers requests to `path` only after `ms`. */
  hold(path: string, ms: number) {
    this.holds.set(path, ms);
  }
  readonly fetch: typeof fetch;

  constructor() {
    const dispatcher = new Agent({ connect: { ca: this.tls.cert } });
    this.fetch = ((url: string, init: RequestInit) =>
      undiciFetch(url, { ...(init as object), dispatcher } as Parameters<
        typeof undiciFetch
      >[1])) as unknown as typeof fetch;
  }

  /**
   * The certificate as a PEM file, for processes of their own to trust it:
   * `NODE_EXTRA_CA_CERTS=<caFile>` (written on first use, removed by `close`).
   */
  get caFile(): string {
    if (!this.caPath) {
      const dir = mkdtempSync(join(tmpdir(), 'fjord-receiver-ca-'));
      this.caPath = join(dir, 'ca.pem');
      writeFileSync(this.caPath, this.tls.cert);
    }
    return this.caPath;
  }
  private caPath: string | null = null;

  async listen() {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  to(path: string) {
    return this.requests.filter((r) => r.path === path);
  }

  close() {
    if (this.caPath) rmSync(dirname(this.caPath), { recursive: true, force: true });
    this.server.closeAllConnections();
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Checks `Fjord-Signature: t=…,v1=…` against the customer's secret, as a receiver must. */
export function signatureValid(r: Received, secret: string): boolean {
  const header = String(r.headers['fjord-signature'] ?? '');
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${r.body}`).digest();
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'));
}
