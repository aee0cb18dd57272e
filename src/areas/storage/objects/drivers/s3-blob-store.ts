import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { newId } from '../../../../kernel/ids.js';
import { signRequest, UNSIGNED_PAYLOAD, uriEncode } from '../../s3/sigv4.js';
import type { BlobStore } from './blob-store.js';

export interface UpstreamConfig {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretKey: string;
  /** Key prefix inside the upstream bucket. */
  prefix: string;
}

/**
 * Blobs in an upstream S3-compatible store (for scaled-out deployments): every blob is one
 * upstream object, streamed both ways with a known length (UNSIGNED-PAYLOAD, so nothing is
 * buffered to hash it first). A blob whose check fails after upload is deleted upstream.
 */
export class S3BlobStore implements BlobStore {
  readonly name = 's3' as const;
  private readonly base: URL;
  private readonly agent: http.Agent;

  constructor(private readonly cfg: UpstreamConfig) {
    this.base = new URL(cfg.endpoint);
    this.agent =
      this.base.protocol === 'https:'
        ? new https.Agent({ keepAlive: true })
        : new http.Agent({ keepAlive: true });
  }

  private request(
    method: string,
    ref: string,
    headers: Record<string, string>,
    body?: AsyncIterable<Buffer>,
    query = '',
  ): Promise<http.IncomingMessage> {
    const basePath = this.base.pathname.replace(/\/+$/, '');
    const path = `${basePath}/${uriEncode(this.cfg.bucket)}/${uriEncode(`${this.cfg.prefix}${ref}`, true)}`;
    const signed = signRequest({
      method,
      path,
      query,
      headers: { host: this.base.host, ...headers },
      accessKeyId: this.cfg.accessKeyId,
      secret: this.cfg.secretKey,
      region: this.cfg.region,
      nowMs: Date.now(),
      payloadHash: UNSIGNED_PAYLOAD,
    });
    const lib = this.base.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(
        {
          method,
          host: this.base.hostname,
          port: this.base.port,
          path: query ? `${path}?${query}` : path,
          headers: signed,
          agent: this.agent,
        },
        resolve,
      );
      req.on('error', reject);
      if (body)
        Readable.from(body)
          .on('error', (e) => req.destroy(e))
          .pipe(req);
      else req.end();
    });
  }

  private async expectOk(res: http.IncomingMessage, what: string): Promise<void> {
    if (res.statusCode && res.statusCode < 300) return;
    let text = '';
    for await (const c of res) text += String(c);
    throw new Error(`upstream S3 ${what} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  }

  async put(source: AsyncIterable<Buffer>, size: number, check: () => void): Promise<string> {
    if (size < 0) return this.putSpooled(source, check);
    const ref = newId();
    let failure: unknown = null;
    const guarded = (async function* () {
      try {
        yield* source;
      } catch (err) {
        failure = err;
        throw err;
      }
    })();
    let res: http.IncomingMessage;
    try {
      res = await this.request(
        'PUT',
        ref,
        { 'content-length': String(size), 'content-type': 'application/octet-stream' },
        guarded,
      );
    } catch (err) {
      throw failure ?? err;
    }
    if (failure) throw failure;
    await this.expectOk(res, 'PUT');
    res.resume();
    try {
      check();
    } catch (err) {
      await this.delete(ref);
      throw err;
    }
    return ref;
  }

  /**
   * A body of unknown length (a form upload, a plain chunked PUT) is spooled to a temp file
   * first: the upstream wants a Content-Length, and memory must stay flat.
   */
  private async putSpooled(source: AsyncIterable<Buffer>, check: () => void): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'fjord-spool-'));
    const path = join(dir, 'body');
    try {
      await pipeline(Readable.from(source), createWriteStream(path));
      const { size } = await stat(path);
      return await this.put(createReadStream(path), size, check);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async get(ref: string, start: number, end: number): Promise<Readable> {
    const res = await this.request('GET', ref, { range: `bytes=${start}-${end}` });
    await this.expectOk(res, 'GET');
    return res;
  }

  async delete(ref: string): Promise<void> {
    const res = await this.request('DELETE', ref, {}).catch(() => null);
    res?.resume();
  }

  async clear(): Promise<void> {
    // Upstream blobs of a reset emulator are left for the upstream's own lifecycle rules.
  }
}
