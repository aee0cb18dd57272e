import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '../../../kernel/clock.js';
import type { ProtocolMetrics } from '../../../kernel/observe/protocol-metrics.js';
import type { SecretBox } from '../../../kernel/secrets.js';
import type {
  BucketDirectory,
  BucketRecord,
  ObjectOwnership,
  PublicAccessBlock,
} from '../data-plane-contract.js';
import type { BandwidthMeter } from '../objects/bandwidth.js';
import type { ObjectStore } from '../objects/object-store.js';
import { grantsTo } from './acl.js';
import type { Principal } from './auth.js';
import { type BodyChecksumOptions, BodyReader } from './body.js';
import type { DirectoryCache } from './directory-cache.js';
import { S3Error, s3Errors } from './errors.js';
import { decodeObjectAcl } from './object-acl.js';
import type { S3Operation } from './operations.js';
import {
  type Decision,
  decide,
  foreignObjectAllows,
  type ObjectJudge,
  policyOf,
  type RequestFacts,
} from './permissions.js';
import { readsExistingTags } from './policy.js';
import { doc } from './xml.js';

export interface S3Settings {
  regions: string[];
  baseDomain: string | null;
  /** Largest single PUT or part. */
  maxObjectBytes: number;
  maxUploadBytes: number;
  /** Requests in flight per access key (`storage.connections_per_key`). */
  maxConnectionsPerKey: number;
  /** The operator's public access block, on top of each bucket's own (FJORD_S3_BLOCK_PUBLIC_ACCESS). */
  publicAccessBlock?: PublicAccessBlock;
  /** Ownership of a bucket created without `x-amz-object-ownership` (FJORD_S3_DEFAULT_OBJECT_OWNERSHIP). */
  defaultObjectOwnership?: ObjectOwnership;
}

/** What every operation handler gets: the parsed request and the services behind it. */
export interface S3Env {
  objects: ObjectStore;
  directory: BucketDirectory;
  cache: DirectoryCache;
  clock: Clock;
  log: Logger;
  settings: S3Settings;
  /** Durations and bytes per operation, for `/metrics`. */
  metrics?: ProtocolMetrics;
  /** Bytes sent per customer per month, and who is over the plan's bandwidth. */
  bandwidth?: BandwidthMeter;
  /** Opens the grants of presigned internal uploads (internal-upload.ts). */
  secrets?: SecretBox;
}

/**
 * The actions for which AWS fills in `s3:ExistingObjectTag/<key>`: reading an object and reading
 * or changing its tags or ACL. Other actions (DeleteObject, a copy's write …) never see the key.
 */
const EXISTING_TAG_ACTIONS = new Set([
  's3:GetObject',
  's3:GetObjectVersion',
  's3:GetObjectAcl',
  's3:GetObjectVersionAcl',
  's3:PutObjectAcl',
  's3:PutObjectVersionAcl',
  's3:GetObjectTagging',
  's3:GetObjectVersionTagging',
  's3:PutObjectTagging',
  's3:PutObjectVersionTagging',
  's3:DeleteObjectTagging',
  's3:DeleteObjectVersionTagging',
]);

export class S3Call {
  /** CORS headers to add to the answer (set once the bucket is known). */
  corsHeaders: Record<string, string> = {};
  bucket: BucketRecord | null = null;

  constructor(
    readonly env: S3Env,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly requestId: string,
    readonly bucketName: string | null,
    readonly key: string | null,
    readonly query: URLSearchParams,
    public principal: Principal,
  ) {}

  /** `https://host/bucket/key` of an object as this request reached Fjord (Location answers). */
  objectUrl(bucket: string, key: string): string {
    // A TLS socket (FJORD_TLS_CERT) is https; the Host header is the client's own name for us.
    const scheme = (this.req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
    return `${scheme}://${this.header('host') ?? ''}/${bucket}/${encodeURIComponent(key).replace(/%2F/g, '/')}`;
  }

  header(name: string): string | undefined {
    const v = this.req.headers[name];
    return Array.isArray(v) ? v.join(',') : v;
  }

  /** The operation the request is (operations.ts), set once it is known. */
  operation: S3Operation | null = null;

  /**
   * The bucket, checked for existence and for the operation's policy action on the object the
   * request names (or the bucket). With `objectAcl`, a refusal that the object's own ACL may still
   * lift is kept for `checkObjectAcl`, which the handler must call once it has the object.
   */
  async requireBucket(
    opts: { objectAcl?: boolean; key?: string | null; perObject?: boolean } = {},
  ): Promise<BucketRecord> {
    const op = this.operation;
    if (!op) throw new Error('requireBucket outside an S3 operation');
    const action = op.versionAction && this.query.get('versionId') !== null ? op.versionAction : op.action;
    const name = this.bucketName!;
    const bucket = this.bucket ?? (await this.env.cache.findBucket(name));
    if (!bucket) throw s3Errors.noSuchBucket(name);
    this.bucket = bucket;
    this.checkExpectedOwner(bucket, 'x-amz-expected-bucket-owner');
    const key = opts.key === undefined ? this.key : opts.key;
    const d =
      key === null
        ? this.decide(bucket, action, null)
        : await this.decideObject(bucket, action, key, this.query.get('versionId'));
    if (opts.objectAcl) this.objectAclAction = action;
    if (!d.allowed) {
      if (opts.objectAcl && d.objectCheck) this.pendingObjectCheck = d;
      // DeleteObjects: each key is judged on its own when a policy may allow some keys only.
      else if (!(opts.perObject && bucket.policy && d.error.code === 'AccessDenied')) throw d.error;
    }
    return bucket;
  }

  /**
   * `x-amz-expected-bucket-owner` (or a copy's `x-amz-source-expected-bucket-owner`): clients send
   * the account they believe owns the bucket, so a bucket that changed hands is never written to
   * or read from by mistake. Another owner is 403 AccessDenied, as on AWS. The owner's id is the
   * account id Fjord shows as the canonical id.
   */
  checkExpectedOwner(bucket: BucketRecord, header: string): void {
    const expected = this.header(header);
    if (expected !== undefined && expected !== bucket.customerId) throw s3Errors.accessDenied();
  }

  /** Throws unless the principal may take `action` on `bucket` (or on `key` in it). */
  authorize(bucket: BucketRecord, action: string, key: string | null = null): void {
    const d = this.decide(bucket, action, key);
    if (!d.allowed) throw d.error;
  }

  decide(bucket: BucketRecord, action: string, key: string | null): Decision {
    // The request's facts feed only a bucket policy's conditions.
    const facts = bucket.policy ? this.facts() : null;
    // Only for the object whose tags were read (a copy's source is judged without them).
    if (facts && this.existing?.bucketId === bucket.id && this.existing.key === key)
      facts.existingTags = this.existing.tags;
    return decide(this.principal, bucket, action, key, facts, this.env.settings.publicAccessBlock);
  }

  /**
   * `decide` for an object, with its stored tags when the bucket's policy reads them
   * (`s3:ExistingObjectTag/…`) and AWS fills them in for `action`. One store read, only then.
   */
  async decideObject(
    bucket: BucketRecord,
    action: string,
    key: string,
    versionId: string | null,
  ): Promise<Decision> {
    const policy = EXISTING_TAG_ACTIONS.has(action) ? policyOf(bucket) : null;
    if (policy && readsExistingTags(policy)) {
      const row = await this.storedObject(bucket, key, versionId);
      this.existing = {
        bucketId: bucket.id,
        key,
        tags: row ? (JSON.parse(row.tags) as Record<string, string>) : null,
      };
    }
    return this.decide(bucket, action, key);
  }

  /** The version `versionId` names, else the current one; null when it is missing or a delete marker. */
  private async storedObject(bucket: BucketRecord, key: string, versionId: string | null) {
    const repo = this.env.objects.repo;
    const row =
      versionId !== null ? await repo.version(bucket.id, key, versionId) : await repo.latest(bucket.id, key);
    return row && !row.is_delete_marker ? row : null;
  }

  /**
   * A refused read of an object that does not exist is `404` to a principal who may list its
   * name (`s3:ListBucket`, or `s3:ListBucketVersions` for a version, with `s3:prefix` = the key),
   * as on AWS: listing would tell them anyway. Any other refusal stays as it was.
   */
  async notFoundIfListable(err: unknown, bucket: BucketRecord | null, key: string): Promise<unknown> {
    if (!(err instanceof S3Error) || err.code !== 'AccessDenied' || !bucket) return err;
    const versionId = this.query.get('versionId');
    const facts = { ...this.facts(), query: new URLSearchParams({ prefix: key }) };
    const action = versionId !== null ? 's3:ListBucketVersions' : 's3:ListBucket';
    const listing = decide(this.principal, bucket, action, null, facts, this.env.settings.publicAccessBlock);
    if (!listing.allowed || (await this.storedObject(bucket, key, versionId))) return err;
    return versionId !== null ? s3Errors.noSuchVersion(key, versionId) : s3Errors.noSuchKey(key);
  }

  /**
   * After `requireBucket(…, {objectAcl: true})`: the object's ACL decides what the bucket could
   * not, and alone for an object another account owns. A missing object is refused as the bucket
   * refused (AWS answers AccessDenied, not NoSuchKey).
   */
  async checkObjectAcl<T extends { acl: string | null }>(find: () => Promise<T>): Promise<T> {
    const pending = this.pendingObjectCheck ?? ALLOWED;
    this.pendingObjectCheck = null;
    const bucket = this.bucket;
    const action = this.objectAclAction;
    if (!bucket || !action) throw new Error('checkObjectAcl without requireBucket({objectAcl: true})');
    return objectOpenedByAcl(pending, find, this.objectJudge(bucket, action));
  }
  private pendingObjectCheck: Decision | null = null;
  private objectAclAction: string | null = null;

  /** What `objectOpenedByAcl` needs to judge an object another account owns. */
  objectJudge(bucket: BucketRecord, action: string): ObjectJudge {
    return { principal: this.principal, bucket, action, operator: this.env.settings.publicAccessBlock };
  }

  facts(): RequestFacts {
    return {
      sourceIp: this.req.socket.remoteAddress ?? '',
      secure: Boolean((this.req.socket as { encrypted?: boolean }).encrypted),
      nowMs: this.env.clock.nowMs(),
      query: this.query,
      header: (n) => this.header(n),
    };
  }
  private existing: { bucketId: string; key: string; tags: Record<string, string> | null } | null = null;

  send(status: number, headers: Record<string, string | number> = {}, body?: string | Buffer): void {
    const res = this.res;
    res.statusCode = status;
    for (const k in this.corsHeaders) res.setHeader(k, this.corsHeaders[k]!);
    for (const k in headers) res.setHeader(k, headers[k]!);
    if (body === undefined) {
      if (!res.hasHeader('content-length') && this.req.method !== 'HEAD') res.setHeader('content-length', 0);
      res.end();
      return;
    }
    const buf = typeof body === 'string' ? Buffer.from(body) : body;
    res.setHeader('content-length', buf.length);
    res.end(this.req.method === 'HEAD' ? undefined : buf);
  }

  xml(status: number, root: string, inner: string, headers: Record<string, string | number> = {}): void {
    this.send(status, { 'content-type': 'application/xml', ...headers }, doc(root, inner));
  }

  /** A request body for the server to take in (and check) whole: XML documents, form fields. */
  async readSmallBody(limit = 2 * 1024 * 1024, options: BodyChecksumOptions = {}): Promise<Buffer> {
    if (
      this.req.headers['content-length'] === undefined &&
      this.req.headers['transfer-encoding'] === undefined
    ) {
      return Buffer.alloc(0);
    }
    const body = this.bodyReader(limit, options);
    const chunks: Buffer[] = [];
    for await (const c of body.chunks()) chunks.push(c);
    body.verify();
    return Buffer.concat(chunks);
  }

  /**
   * `Expect: 100-continue`: the client waits for a go-ahead before it sends the body. It gets one
   * only here, when a handler is about to read the body — after authentication and the bucket's
   * authorisation — so a refused request is answered without its body ever being sent.
   */
  continueIfExpected(): void {
    if (this.continued || !/^100-continue$/i.test(String(this.req.headers['expect'] ?? ''))) return;
    this.continued = true;
    this.res.writeContinue();
  }
  private continued = false;

  /** The request body, de-framed and checked against what its signature declares. */
  bodyReader(limit: number, options: BodyChecksumOptions = {}): BodyReader {
    const p = this.principal;
    // Made first: a body its headers already refuse (size, checksum type) is never asked for.
    const reader = new BodyReader(
      this.req,
      p.kind === 'key' ? p.credential : null,
      p.kind === 'key' ? p.key.secretKey : null,
      limit,
      options,
    );
    this.continueIfExpected();
    return reader;
  }
}

const ALLOWED: Decision = { allowed: true };

/**
 * The object `find` returns, if the bucket's decision `d` allows it or the object's own ACL lifts
 * its refusal; a missing object is refused as the bucket refused (AWS answers AccessDenied, not
 * NoSuchKey, to who may not list). With ACLs on, an object another account owns (ObjectWriter) is
 * judged by its ACL alone, as AWS's object context: the bucket's owner reads it only if granted.
 */
export async function objectOpenedByAcl<T extends { acl: string | null }>(
  d: Decision,
  find: () => Promise<T>,
  judge: ObjectJudge,
): Promise<T> {
  const { bucket } = judge;
  const aclsOn = bucket.objectOwnership !== 'BucketOwnerEnforced';
  if (d.allowed && !aclsOn) return find();
  if (!d.allowed && !d.objectCheck) throw d.error;
  let row: T;
  try {
    row = await find();
  } catch (err) {
    if (!d.allowed && err instanceof S3Error && err.status < 500) throw d.error;
    throw err;
  }
  const acl = decodeObjectAcl(row.acl, bucket.customerId);
  if (acl.owner !== bucket.customerId) {
    if (!foreignObjectAllows(judge, acl)) throw d.allowed ? s3Errors.accessDenied() : d.error;
    return row;
  }
  if (d.allowed) return row;
  // The owner's keys are judged by their own grants, never by the ACL's grant to their account.
  if (!d.objectCheck!(acl.grants.filter((g) => !grantsTo(g, bucket.customerId)))) throw d.error;
  return row;
}
