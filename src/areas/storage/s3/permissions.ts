import type { AclGrant, BucketRecord, PublicAccessBlock } from '../data-plane-contract.js';
import { aclPermits, bucketPermissionFor, objectPermissionFor } from './acl.js';
import { keyAllows, type Principal } from './auth.js';
import { type S3Error, s3Errors } from './errors.js';
import type { ObjectAcl } from './object-acl.js';
import { type BucketPolicy, EXISTING_TAG_KEY, parsePolicy, REQUEST_TAG_KEY } from './policy.js';
import { evaluatePolicy, isPublicPolicy } from './policy-eval.js';

/**
 * Who may do what to a bucket, as AWS decides it: an explicit Deny of the bucket policy wins;
 * then the key's grants (its identity policy, for keys of the bucket's owner), an Allow of the
 * bucket policy, and the ACLs (off under `BucketOwnerEnforced`), each filtered by the public
 * access block.
 */

/** What the request brings to a policy's conditions. */
export interface RequestFacts {
  sourceIp: string;
  secure: boolean;
  nowMs: number;
  query: URLSearchParams;
  header(name: string): string | undefined;
  /** The tags of the object the request acts on, when a policy asks (`s3:ExistingObjectTag/…`). */
  existingTags?: Record<string, string> | null;
}

/** Actions anyone may take on a bucket made public through the control API (`is_public`, ACLs off). */
const PUBLIC_ACTIONS = new Set(['s3:GetObject', 's3:ListBucket', 's3:GetBucketLocation']);
/** What a bucket ACL's AllUsers READ allows (ACLs on): listing, never the objects' bytes. */
const PUBLIC_BUCKET_ACL_ACTIONS = new Set([
  's3:ListBucket',
  's3:ListBucketVersions',
  's3:ListBucketMultipartUploads',
  's3:GetBucketLocation',
]);

/** The bucket owner's keys can always manage the policy, so a Deny cannot lock the owner out (as AWS's root). */
const POLICY_ADMIN = new Set(['s3:GetBucketPolicy', 's3:PutBucketPolicy', 's3:DeleteBucketPolicy']);

const NO_BLOCK: PublicAccessBlock = {
  blockPublicAcls: false,
  ignorePublicAcls: false,
  blockPublicPolicy: false,
  restrictPublicBuckets: false,
};

export function operatorBlock(switches: string[]): PublicAccessBlock {
  return {
    blockPublicAcls: switches.includes('BlockPublicAcls'),
    ignorePublicAcls: switches.includes('IgnorePublicAcls'),
    blockPublicPolicy: switches.includes('BlockPublicPolicy'),
    restrictPublicBuckets: switches.includes('RestrictPublicBuckets'),
  };
}

/** The bucket's switches or the operator's: either one turns a switch on. */
export function effectiveBlock(
  bucket: BucketRecord,
  operator: PublicAccessBlock | undefined,
): PublicAccessBlock {
  const b = bucket.publicAccessBlock ?? NO_BLOCK;
  const o = operator ?? NO_BLOCK;
  return {
    blockPublicAcls: b.blockPublicAcls || o.blockPublicAcls,
    ignorePublicAcls: b.ignorePublicAcls || o.ignorePublicAcls,
    blockPublicPolicy: b.blockPublicPolicy || o.blockPublicPolicy,
    restrictPublicBuckets: b.restrictPublicBuckets || o.restrictPublicBuckets,
  };
}

const parsed = new Map<string, BucketPolicy>();
/**
 * The bucket's policy, parsed once per text. It was checked when it was stored; one a later Fjord
 * can no longer read (a rule tightened since) fails closed: it denies every principal but the
 * bucket's owner, who can still read, replace or delete it, rather than vanishing with its Denies.
 */
export function policyOf(bucket: BucketRecord): BucketPolicy | null {
  if (!bucket.policy) return null;
  const key = `${bucket.name}\n${bucket.policy}`;
  let p = parsed.get(key);
  if (p === undefined) {
    try {
      p = parsePolicy(bucket.policy, bucket.name);
    } catch {
      p = parsePolicy(ownerOnly(bucket), bucket.name);
    }
    if (parsed.size > 1000) parsed.clear();
    parsed.set(key, p);
  }
  return p;
}

const ownerOnly = (bucket: BucketRecord) =>
  JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Deny',
        NotPrincipal: { AWS: bucket.customerId },
        Action: 's3:*',
        Resource: [`arn:aws:s3:::${bucket.name}`, `arn:aws:s3:::${bucket.name}/*`],
      },
    ],
  });

export type Decision =
  | { allowed: true }
  | {
      allowed: false;
      error: S3Error;
      /** The object's own ACL may still allow it (GetObject, Get/PutObjectAcl with ACLs on). */
      objectCheck: ((acl: AclGrant[]) => boolean) | null;
    };

export function decide(
  principal: Principal,
  bucket: BucketRecord,
  action: string,
  key: string | null,
  facts: RequestFacts | null,
  operator: PublicAccessBlock | undefined,
): Decision {
  const owner = principal.kind === 'key' && principal.key.customerId === bucket.customerId;
  const block = effectiveBlock(bucket, operator);
  const policy = policyOf(bucket);
  let verdict: 'allow' | 'deny' | 'none' = 'none';
  if (policy) {
    verdict = evaluatePolicy(policy, {
      principal:
        principal.kind === 'key'
          ? { accessKeyId: principal.key.accessKeyId, accountId: principal.key.customerId }
          : null,
      action,
      resource: `arn:aws:s3:::${bucket.name}${key !== null ? `/${key}` : ''}`,
      context: conditionContext(principal, action, facts),
    });
    if (verdict === 'deny' && !(owner && POLICY_ADMIN.has(action)))
      return { allowed: false, error: s3Errors.accessDenied(), objectCheck: null };
    // RestrictPublicBuckets: a public policy lets in only the owner's own keys.
    if (verdict === 'allow' && !owner && block.restrictPublicBuckets && isPublicPolicy(policy))
      verdict = 'none';
  }
  if (owner && keyAllows(principal.key, bucket.name, action)) return { allowed: true };
  if (verdict === 'allow') return { allowed: true };
  const ignorePublic = block.ignorePublicAcls;
  const aclsOn = bucket.objectOwnership !== 'BucketOwnerEnforced';
  // With ACLs off, `is_public` is the control API's public bucket: anyone reads its objects. With
  // ACLs on it is the bucket ACL's AllUsers READ, which lets anyone list the bucket and nothing
  // more, as on AWS: each object's own ACL decides who reads it.
  const publicActions = aclsOn ? PUBLIC_BUCKET_ACL_ACTIONS : PUBLIC_ACTIONS;
  if (bucket.isPublic && !ignorePublic && publicActions.has(action)) return { allowed: true };
  const bucketPermission = bucketPermissionFor(action);
  if (aclsOn && bucketPermission && aclPermits(bucket.acl, principal, bucketPermission, ignorePublic))
    return { allowed: true };
  const objectPermission = aclsOn ? objectPermissionFor(action) : undefined;
  // Another customer's bucket that nothing can open (no policy, not public, ACLs off) is
  // NoSuchBucket to a key: nothing confirms it exists.
  const hidden = principal.kind === 'key' && !owner && !bucket.isPublic && !bucket.policy && !aclsOn;
  const error = hidden ? s3Errors.noSuchBucket(bucket.name) : s3Errors.accessDenied();
  return {
    allowed: false,
    error,
    objectCheck: objectPermission
      ? (acl) => aclPermits(acl, principal, objectPermission, ignorePublic)
      : null,
  };
}

/** Who asks for an object, in which bucket, for what: enough to judge it by the object's ACL. */
export interface ObjectJudge {
  principal: Principal;
  bucket: BucketRecord;
  action: string;
  operator: PublicAccessBlock | undefined;
}

/**
 * Whether an object another account owns (written under ObjectWriter) opens to the principal, as
 * AWS's object context decides: its owner always reads and writes its ACL (READ_ACP and WRITE_ACP
 * are implicit for an owner) and reads it through its own key's grants or the ACL; anyone else,
 * the bucket's owner included, only through the ACL's grants, and the owner's keys only within
 * their own grants as well. A Deny of the bucket policy was applied before.
 */
export function foreignObjectAllows(judge: ObjectJudge, acl: ObjectAcl): boolean {
  const { principal, bucket, action } = judge;
  const permission = objectPermissionFor(action);
  const ignorePublic = effectiveBlock(bucket, judge.operator).ignorePublicAcls;
  const account = principal.kind === 'key' ? principal.key.customerId : null;
  if (principal.kind === 'key' && account === acl.owner)
    return (
      permission === 'READ_ACP' ||
      permission === 'WRITE_ACP' ||
      keyAllows(principal.key, bucket.name, action) ||
      (permission !== undefined && aclPermits(acl.grants, principal, permission, ignorePublic))
    );
  // An action no ACL permission stands for (GetObjectTagging …) is its owner's alone.
  if (!permission) return false;
  if (
    principal.kind === 'key' &&
    account === bucket.customerId &&
    !keyAllows(principal.key, bucket.name, action)
  )
    return false;
  return aclPermits(acl.grants, principal, permission, ignorePublic);
}

/** The condition keys of a request (lower-cased names), for bucket policies. */
function conditionContext(
  principal: Principal,
  action: string,
  facts: RequestFacts | null,
): Record<string, string[]> {
  const ctx: Record<string, string[]> = {};
  const set = (k: string, v: string | undefined | null) => {
    if (v !== undefined && v !== null) ctx[k] = [v];
  };
  if (principal.kind === 'key') {
    set('aws:principaltype', 'User');
    set('aws:principalaccount', principal.key.customerId);
    set('aws:userid', principal.key.accessKeyId);
    set('s3:signatureversion', principal.credential.version === 2 ? 'AWS' : 'AWS4-HMAC-SHA256');
    set('s3:authtype', principal.credential.kind === 'query' ? 'REST-QUERY-STRING' : 'REST-HEADER');
  } else {
    set('aws:principaltype', 'Anonymous');
  }
  if (!facts) return ctx;
  set('aws:sourceip', facts.sourceIp.replace(/^::ffff:(?=\d+\.)/, ''));
  set('aws:securetransport', String(facts.secure));
  set('aws:currenttime', new Date(facts.nowMs).toISOString());
  set('aws:epochtime', String(Math.floor(facts.nowMs / 1000)));
  set('aws:useragent', facts.header('user-agent'));
  set('aws:referer', facts.header('referer'));
  if (action === 's3:ListBucket' || action === 's3:ListBucketVersions') {
    set('s3:prefix', facts.query.get('prefix') ?? '');
    set('s3:delimiter', facts.query.get('delimiter'));
    set('s3:max-keys', facts.query.get('max-keys'));
  }
  set('s3:versionid', facts.query.get('versionId'));
  set('s3:x-amz-acl', facts.header('x-amz-acl'));
  set('s3:x-amz-server-side-encryption', facts.header('x-amz-server-side-encryption'));
  set('s3:x-amz-content-sha256', facts.header('x-amz-content-sha256'));
  set('s3:object-lock-mode', facts.header('x-amz-object-lock-mode'));
  set('s3:object-lock-legal-hold', facts.header('x-amz-object-lock-legal-hold'));
  for (const h of [
    'x-amz-metadata-directive',
    'x-amz-server-side-encryption-aws-kms-key-id',
    'x-amz-server-side-encryption-customer-algorithm',
    'x-amz-grant-read',
    'x-amz-grant-write',
    'x-amz-grant-read-acp',
    'x-amz-grant-write-acp',
    'x-amz-grant-full-control',
  ])
    set(`s3:${h}`, facts.header(h));
  set('s3:x-amz-copy-source', copySourceCondition(facts.header('x-amz-copy-source')));
  const tagging = facts.header('x-amz-tagging');
  if (tagging !== undefined) {
    const tags = [...new URLSearchParams(tagging)];
    ctx['s3:requestobjecttagkeys'] = tags.map(([k]) => k);
    for (const [k, v] of tags) set(`${REQUEST_TAG_KEY}${k.toLowerCase()}`, v);
  }
  for (const [k, v] of Object.entries(facts.existingTags ?? {}))
    set(`${EXISTING_TAG_KEY}${k.toLowerCase()}`, v);
  return ctx;
}

/** `x-amz-copy-source` as policies name it: `bucket/key`, decoded, without a leading slash or version. */
function copySourceCondition(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const path = v.replace(/^\//, '').replace(/\?versionId=.*$/, '');
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
