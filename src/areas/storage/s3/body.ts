import { createHash, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  algorithmOfHeader,
  type Checksum,
  type ChecksumAlgorithm,
  checksumLoaded,
  checksumReady,
  createChecksum,
} from './checksums.js';
import { decodeAwsChunked } from './chunked.js';
import { S3Error, s3Errors } from './errors.js';
import { checkPartAlgorithm } from './multipart-checksums.js';
import {
  type Credential,
  STREAMING_SIGNED,
  STREAMING_SIGNED_TRAILER,
  STREAMING_UNSIGNED_TRAILER,
  scopeOf,
  signingKey,
  UNSIGNED_PAYLOAD,
} from './sigv4.js';

export interface ReceivedBody {
  size: number;
  /** Hex MD5: the ETag of a simple object or part. */
  md5: string;
  checksum: { algorithm: ChecksumAlgorithm; value: string } | null;
}

export interface BodyChecksumOptions {
  /** The checksum the body must have: one sent with another algorithm is refused, none is computed. */
  algorithm?: ChecksumAlgorithm | null;
  /** With `algorithm`: the client must send that checksum (COMPOSITE parts); it is still checked. */
  mustBeSent?: boolean;
  /**
   * The `x-amz-checksum-*` headers are the checksum of an object the request makes, not of this
   * body (CompleteMultipartUpload): the body is then checked only against a trailer.
   */
  headersDescribeObject?: boolean;
}

/**
 * One request body on its way to storage: de-framed (aws-chunked), counted and hashed while it
 * streams. `verify()` runs after the last byte and before the blob becomes visible, and throws
 * when the size or any declared digest (x-amz-content-sha256, Content-MD5, x-amz-checksum-*,
 * in a header or a trailer) does not match what arrived.
 */
export class BodyReader {
  readonly expectedSize: number;
  private size = 0;
  private readonly md5: Hash = createHash('md5');
  private readonly sha256: Hash | null;
  private readonly checksum: {
    algorithm: ChecksumAlgorithm;
    /** Null until `chunks()` has waited for the algorithm to load (xxHash, the first time). */
    hasher: Checksum | null;
    expected: string | null;
  } | null;
  private readonly trailers = new Map<string, string>();
  private readonly chunked: boolean;

  constructor(
    private readonly req: IncomingMessage,
    private readonly cred: Credential | null,
    private readonly secret: string | null,
    maxSize: number,
    options: BodyChecksumOptions = {},
  ) {
    const payload = cred?.payloadHash ?? UNSIGNED_PAYLOAD;
    // Framed when the signature says it streams, or when aws-chunked comes with its decoded
    // length. `Content-Encoding: aws-chunked` alone on a body signed whole (boto3 sends it so)
    // frames nothing: S3 stores such a body as sent, without that encoding.
    this.chunked =
      payload.startsWith('STREAMING-') ||
      (/aws-chunked/i.test(String(req.headers['content-encoding'] ?? '')) &&
        req.headers['x-amz-decoded-content-length'] !== undefined);
    const lengthHeader = this.chunked
      ? req.headers['x-amz-decoded-content-length']
      : req.headers['content-length'];
    const length =
      typeof lengthHeader === 'string' && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : null;
    if (length === null) {
      // A plain body without a length (Transfer-Encoding: chunked) is read to its end, within the limit.
      if (this.chunked || req.headers['transfer-encoding'] === undefined)
        throw s3Errors.missingContentLength();
    }
    if (length !== null && length > maxSize) throw s3Errors.entityTooLarge();
    this.expectedSize = length ?? -1;
    // A digest is compared whatever its case; anything that is neither a digest nor one of S3's
    // defined values is refused rather than left unchecked.
    this.sha256 = /^[0-9a-f]{64}$/i.test(payload) ? createHash('sha256') : null;
    if (!this.sha256 && payload !== UNSIGNED_PAYLOAD && !payload.startsWith('STREAMING-'))
      throw s3Errors.invalidArgument(
        'x-amz-content-sha256 must be a SHA-256 hex digest or one of S3’s defined values',
        'x-amz-content-sha256',
        payload.slice(0, 100),
      );
    if (
      payload.startsWith('STREAMING-') &&
      ![STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER].includes(payload)
    ) {
      throw s3Errors.invalidArgument(
        `x-amz-content-sha256 ${payload} is not supported`,
        'x-amz-content-sha256',
        payload,
      );
    }
    let algorithm: ChecksumAlgorithm | null = null;
    let expected: string | null = null;
    for (const name in options.headersDescribeObject ? {} : req.headers) {
      const alg = algorithmOfHeader(name);
      const value = req.headers[name];
      if (alg && typeof value === 'string') {
        if (algorithm)
          throw s3Errors.invalidRequest(
            'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.',
          );
        algorithm = alg;
        expected = value;
      }
    }
    const trailer = req.headers['x-amz-trailer'];
    if (typeof trailer === 'string' && !algorithm) {
      algorithm = algorithmOfHeader(trailer.trim());
      if (!algorithm)
        throw s3Errors.invalidArgument(`x-amz-trailer ${trailer} is not supported`, 'x-amz-trailer', trailer);
    }
    if (options.algorithm) {
      checkPartAlgorithm(options.algorithm, algorithm, options.mustBeSent === true);
      algorithm = options.algorithm;
    }
    this.checksum = algorithm
      ? { algorithm, hasher: checksumLoaded(algorithm) ? createChecksum(algorithm) : null, expected }
      : null;
    this.maxSize = maxSize;
  }

  private readonly maxSize: number;

  /** The decoded bytes, counted and hashed on the way. */
  async *chunks(): AsyncGenerator<Buffer> {
    if (this.checksum && !this.checksum.hasher) {
      await checksumReady(this.checksum.algorithm);
      this.checksum.hasher = createChecksum(this.checksum.algorithm);
    }
    const payload = this.cred?.payloadHash ?? UNSIGNED_PAYLOAD;
    const signed = payload === STREAMING_SIGNED || payload === STREAMING_SIGNED_TRAILER;
    const source: AsyncIterable<Buffer> = this.chunked
      ? decodeAwsChunked(this.req, {
          signing:
            signed && this.cred && this.secret
              ? {
                  key: signingKey(this.secret, this.cred.date, this.cred.region, this.cred.service),
                  amzDate: this.cred.amzDate,
                  scope: scopeOf(this.cred),
                  seedSignature: this.cred.signature,
                }
              : null,
          onTrailer: (name, value) => this.trailers.set(name, value),
        })
      : this.req;
    for await (const chunk of source) {
      this.take(chunk);
      yield chunk;
    }
  }

  /** Counts and hashes one chunk; throws once the body is past its declared length or the limit. */
  private take(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size > (this.expectedSize >= 0 ? this.expectedSize : this.maxSize))
      throw this.expectedSize >= 0
        ? s3Errors.invalidRequest('The body is longer than its declared length.')
        : s3Errors.entityTooLarge();
    this.md5.update(chunk);
    this.sha256?.update(chunk);
    if (this.checksum) this.checksum.hasher!.update(chunk);
  }

  /**
   * The whole body, when its declared length is at most `max` and it is not aws-chunked: read with
   * plain listeners, counted and hashed on the way. For a small PUT the async iterators of
   * `chunks()` cost more than hashing the bytes. Null when the body does not qualify.
   */
  whole(max: number): Promise<Buffer[]> | null {
    if (this.chunked || this.expectedSize < 0 || this.expectedSize > max) return null;
    if (this.checksum && !this.checksum.hasher) return null; // its algorithm loads in chunks()
    const req = this.req;
    return new Promise((resolve, reject) => {
      const out: Buffer[] = [];
      if (req.readableEnded) return resolve(out); // read already (as `chunks()` would find it)
      const settle = (err: Error | null) => {
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('close', onClose);
        // The error listener stays: a stream error after this must not go unhandled.
        if (err) reject(err);
        else resolve(out);
      };
      const onData = (chunk: Buffer) => {
        try {
          this.take(chunk);
        } catch (err) {
          settle(err as Error);
          return;
        }
        out.push(chunk);
      };
      const onEnd = () => settle(null);
      const onError = (err: Error) => settle(err);
      // Closed before its end: the client went away mid-body, as the stream iterator reports it.
      const onClose = () =>
        settle(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', onError);
      req.on('close', onClose);
      if (req.destroyed) onClose();
    });
  }

  /** Throws when what arrived is not what was declared. */
  verify(): ReceivedBody {
    if (this.expectedSize >= 0 && this.size !== this.expectedSize) throw s3Errors.incompleteBody();
    const payload = this.cred?.payloadHash ?? UNSIGNED_PAYLOAD;
    if (this.sha256 && this.sha256.digest('hex') !== payload.toLowerCase()) throw s3Errors.sha256Mismatch();
    const md5 = this.md5.digest();
    const contentMd5 = this.req.headers['content-md5'];
    if (typeof contentMd5 === 'string') {
      const given = Buffer.from(contentMd5, 'base64');
      if (given.length !== 16) throw s3Errors.invalidDigest();
      if (!given.equals(md5)) throw s3Errors.badDigest();
    }
    let checksum: ReceivedBody['checksum'] = null;
    if (this.checksum) {
      const header = `x-amz-checksum-${this.checksum.algorithm.toLowerCase()}`;
      const expected = this.checksum.expected ?? this.trailers.get(header) ?? null;
      const actual = this.checksum.hasher!.digest();
      if (expected !== null && expected !== actual) throw s3Errors.checksumMismatch(header);
      if (expected === null && this.req.headers['x-amz-trailer']) {
        throw new S3Error('InvalidRequest', 400, `The trailer ${header} was declared but not sent.`);
      }
      checksum = { algorithm: this.checksum.algorithm, value: actual };
    }
    return { size: this.size, md5: md5.toString('hex'), checksum };
  }
}
