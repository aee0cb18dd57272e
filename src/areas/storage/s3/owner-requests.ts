import type { IncomingMessage, ServerResponse } from 'node:http';
import { pooledRandomBytes } from '../../../kernel/ids.js';
import type { AccessKeyRecord } from '../data-plane-contract.js';
import type { Principal } from './auth.js';
import { S3Call, type S3Env } from './context.js';
import { fromAppError, type S3Error, s3Errors } from './errors.js';
import { levelOf, s3OperationOf } from './operation-lookup.js';
import { toAmzDate, UNSIGNED_PAYLOAD } from './sigv4.js';

/** What a read-only caller (a PAT with `storage:read` only) may do through the owner's requests. */
const READ_ACTIONS = ['s3:ListBucket', 's3:ListBucketVersions', 's3:GetObject', 's3:GetObjectVersion'];

/**
 * One S3 request made by a bucket's owner through the control API (the console's object browser)
 * rather than the S3 listener: same origin as the API, no access key or signature. The caller has
 * authenticated the customer and checked that the bucket is theirs; the request then runs through
 * the S3 data plane's own handlers, so versioning, object lock, default encryption, quotas and
 * the bucket's policy apply exactly as to a request signed with the customer's account key.
 *
 * The principal is a key that exists nowhere: it cannot be presented to the S3 listener, and its
 * grants are all actions (or the reads only) on the buckets of this one customer.
 */
export async function serveOwnerRequest(
  env: S3Env,
  req: IncomingMessage,
  res: ServerResponse,
  request: {
    customerId: string;
    bucket: string;
    key: string | null;
    query: URLSearchParams;
    readOnly: boolean;
  },
): Promise<{ failed: S3Error | null }> {
  const requestId = pooledRandomBytes(8).toString('hex').toUpperCase();
  const key: AccessKeyRecord = {
    accessKeyId: `FJORDCONSOLE.${request.customerId}`,
    secretKey: '',
    customerId: request.customerId,
    customerDisplayName: request.customerId,
    kind: 'account',
    grants: [{ bucket: '*', actions: request.readOnly ? READ_ACTIONS : 'all' }],
    mayCreateBuckets: false,
    accountActions: [],
  };
  const now = env.clock.nowMs();
  const amzDate = toAmzDate(now);
  const principal: Principal = {
    kind: 'key',
    key,
    credential: {
      kind: 'header',
      accessKeyId: key.accessKeyId,
      date: amzDate.slice(0, 8),
      region: env.settings.regions[0] ?? '',
      service: 's3',
      signedHeaders: [],
      signature: '',
      amzDate,
      expiresSeconds: null,
      // The body is taken as sent: its integrity is the connection's, as for S3's unsigned payloads.
      payloadHash: UNSIGNED_PAYLOAD,
    },
  };
  const call = new S3Call(env, req, res, requestId, request.bucket, request.key, request.query, principal);
  res.setHeader('x-amz-request-id', requestId);
  // Downloads count toward the owner's bandwidth, as through the S3 listener.
  if (req.method === 'GET' && request.key !== null)
    res.once('finish', () => {
      const length = Number(res.getHeader('content-length') ?? 0);
      if (res.statusCode < 300 && Number.isFinite(length)) env.bandwidth?.add(request.customerId, length);
    });
  try {
    // The same operation table as the S3 listener: the handler and the policy action it checks.
    const op = s3OperationOf(
      req.method ?? 'GET',
      levelOf(request.bucket, request.key),
      request.query,
      (name) => call.header(name),
    );
    if (!op) throw s3Errors.methodNotAllowed();
    call.operation = op;
    await op.run(call);
    return { failed: null };
  } catch (err) {
    const s3 = fromAppError(err, undefined);
    if (!s3) throw err;
    return { failed: s3 };
  }
}
