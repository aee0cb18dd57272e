import type { BucketRecord } from '../data-plane-contract.js';
import { defaultRetention, type LockMode, type ObjectLock, parseLock, protectedBy } from '../objects/lock.js';
import type { ObjectRow } from '../objects/tables.js';
import { keyAllows } from './auth.js';
import type { S3Call } from './context.js';
import { s3Errors } from './errors.js';

/** Object lock as requests carry it (headers on writes) and answers show it. */

export const missingLockConfiguration = () =>
  s3Errors.invalidRequest('Bucket is missing Object Lock Configuration');

export const lockDenied = () =>
  s3Errors.accessDenied('Access Denied because object protected by object lock.');

const MODES = new Set(['GOVERNANCE', 'COMPLIANCE']);

function may(call: S3Call, bucket: BucketRecord, action: string): boolean {
  const p = call.principal;
  return p.kind === 'key' && keyAllows(p.key, bucket.name, action);
}

/** An ISO 8601 retain-until date that lies ahead of the server's clock. */
export function retainUntil(call: S3Call, text: string, argument: string): number {
  const t = Date.parse(text);
  if (Number.isNaN(t))
    throw s3Errors.invalidArgument(
      'The retain until date must be provided in ISO 8601 format',
      argument,
      text,
    );
  if (t <= call.env.clock.nowMs())
    throw s3Errors.invalidArgument('The retain until date must be in the future!', argument, text);
  return t;
}

export function lockMode(text: string | undefined, argument: string): LockMode {
  if (!text || !MODES.has(text))
    throw s3Errors.invalidArgument('Unknown wormMode directive.', argument, text);
  return text as LockMode;
}

/**
 * The lock a new version gets: the `x-amz-object-lock-*` headers when present (each needs its
 * permission, as on S3), else the bucket's default retention. Null outside lock buckets.
 */
export function lockForWrite(call: S3Call, bucket: BucketRecord): ObjectLock | null {
  const mode = call.header('x-amz-object-lock-mode');
  const until = call.header('x-amz-object-lock-retain-until-date');
  const hold = call.header('x-amz-object-lock-legal-hold');
  const asked = mode !== undefined || until !== undefined || hold !== undefined;
  if (!bucket.objectLockEnabled) {
    if (asked) throw missingLockConfiguration();
    return null;
  }
  const now = call.env.clock.nowMs();
  if (!asked) return defaultRetention(bucket.objectLockDefault, now);
  if ((mode === undefined) !== (until === undefined))
    throw s3Errors.invalidArgument(
      'x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied',
    );
  const lock = defaultRetention(bucket.objectLockDefault, now) ?? {
    mode: null,
    until: null,
    legalHold: false,
  };
  if (mode !== undefined && until !== undefined) {
    if (!may(call, bucket, 's3:PutObjectRetention')) throw s3Errors.accessDenied();
    lock.mode = lockMode(mode, 'x-amz-object-lock-mode');
    lock.until = retainUntil(call, until, 'x-amz-object-lock-retain-until-date');
  }
  if (hold !== undefined) {
    if (hold !== 'ON' && hold !== 'OFF')
      throw s3Errors.invalidArgument(
        "Legal Hold must be either of 'ON' or 'OFF'",
        'x-amz-object-lock-legal-hold',
        hold,
      );
    if (!may(call, bucket, 's3:PutObjectLegalHold')) throw s3Errors.accessDenied();
    lock.legalHold = hold === 'ON';
  }
  return lock;
}

/**
 * `x-amz-bypass-governance-retention: true`: honoured only for a key allowed
 * s3:BypassGovernanceRetention; asking without that permission is refused outright.
 */
export function bypassesGovernance(call: S3Call, bucket: BucketRecord): boolean {
  if ((call.header('x-amz-bypass-governance-retention') ?? '').toLowerCase() !== 'true') return false;
  if (!may(call, bucket, 's3:BypassGovernanceRetention')) throw s3Errors.accessDenied();
  return true;
}

/** Refuses to delete a version its retention or legal hold protects (403 AccessDenied, as S3). */
export function guardVersionDelete(
  call: S3Call,
  bucket: BucketRecord,
  row: Pick<ObjectRow, 'object_lock'> | undefined,
): void {
  const lock = parseLock(row?.object_lock);
  if (!lock) return;
  if (protectedBy(lock, call.env.clock.nowMs(), bypassesGovernance(call, bucket))) throw lockDenied();
}

/** `x-amz-object-lock-*` of a GET/HEAD answer, for callers allowed to read them. */
export function lockHeaders(call: S3Call, bucket: BucketRecord, row: ObjectRow): Record<string, string> {
  const lock = parseLock(row.object_lock);
  if (!lock) return {};
  const h: Record<string, string> = {};
  if (lock.mode && lock.until !== null && may(call, bucket, 's3:GetObjectRetention')) {
    h['x-amz-object-lock-mode'] = lock.mode;
    h['x-amz-object-lock-retain-until-date'] = new Date(lock.until).toISOString();
  }
  if (may(call, bucket, 's3:GetObjectLegalHold'))
    h['x-amz-object-lock-legal-hold'] = lock.legalHold ? 'ON' : 'OFF';
  return h;
}
