import type {
  AclGrant,
  BucketRecord,
  ObjectOwnership,
  PublicAccessBlock,
} from '../../data-plane-contract.js';
import {
  accountGrant,
  aclXml,
  bucketGrants,
  cannedGrants,
  isPublicGrant,
  parseAccessControlPolicy,
  requestedAcl,
  splitBucketAcl,
} from '../acl.js';
import type { S3Call } from '../context.js';
import { fromAppError, S3Error, s3Errors } from '../errors.js';
import { decodeObjectAcl, encodeObjectAcl, grantsToOthers, type ObjectAcl } from '../object-acl.js';
import { effectiveBlock } from '../permissions.js';
import { asText, el, parseXml } from '../xml.js';
import { findObject } from './object-lookup.js';

/** Bucket and object ACLs, ownership controls and the public access block. */

const OWNERSHIPS: ObjectOwnership[] = ['BucketOwnerEnforced', 'BucketOwnerPreferred', 'ObjectWriter'];

async function viaDirectory(call: S3Call, bucket: BucketRecord, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (err) {
    throw fromAppError(err, bucket.name) ?? err;
  }
  call.env.cache.forgetBucket(bucket.name);
}

/** An account's display name: its own keys see their name, anyone else the id (as listings show). */
const nameOf = (call: S3Call, accountId: string) =>
  call.principal.kind === 'key' && call.principal.key.customerId === accountId
    ? call.principal.key.customerDisplayName
    : accountId;

const aclsOn = (bucket: BucketRecord) => bucket.objectOwnership !== 'BucketOwnerEnforced';

/**
 * Refuses grants the resource does not take: grants to others with ACLs off (BucketOwnerEnforced),
 * public ones under the block, and grants to an account that does not exist (AWS: InvalidArgument,
 * "Invalid id"). `owner` owns the resource (an object's writer under ObjectWriter).
 */
export async function checkGrants(
  call: S3Call,
  bucket: BucketRecord,
  grants: AclGrant[],
  owner: string = bucket.customerId,
): Promise<void> {
  const others = grantsToOthers(grants, owner, bucket.customerId);
  if (others.length === 0) return;
  if (!aclsOn(bucket)) throw s3Errors.aclNotSupported();
  if (
    others.some(isPublicGrant) &&
    effectiveBlock(bucket, call.env.settings.publicAccessBlock).blockPublicAcls
  )
    throw s3Errors.publicAclBlocked();
  const exists = call.env.directory.accountExists?.bind(call.env.directory);
  if (!exists) return;
  for (const g of others) {
    if (g.grantee.type !== 'CanonicalUser') continue;
    if (!(await exists(g.grantee.id)))
      throw s3Errors.invalidArgument('Invalid id', 'CanonicalUser/ID', g.grantee.id);
  }
}

/**
 * Who owns an object a write stores, as AWS decides: the bucket's owner with ACLs off, or under
 * BucketOwnerPreferred when the writer sends `bucket-owner-full-control`; else the writer's account
 * (ObjectWriter, and buckets whose ownership controls were deleted). Anonymous writes belong to
 * the bucket's owner.
 */
function ownerOfWrite(call: S3Call, bucket: BucketRecord, canned: string | undefined): string {
  const writer = call.principal.kind === 'key' ? call.principal.key.customerId : bucket.customerId;
  if (!aclsOn(bucket)) return bucket.customerId;
  if (bucket.objectOwnership === 'BucketOwnerPreferred' && canned?.trim() === 'bucket-owner-full-control')
    return bucket.customerId;
  return writer;
}

/**
 * The ACL an upload stores (its owner and `x-amz-acl`/`x-amz-grant-*`, or the POST form's `acl`),
 * checked, in the column's shape (object-acl.ts); null for the bucket owner's private object.
 * Opening it to others needs s3:PutObjectAcl, as on AWS.
 */
export async function aclForWrite(
  call: S3Call,
  bucket: BucketRecord,
  key: string,
  formCanned?: string,
): Promise<string | null> {
  const canned = formCanned ?? call.header('x-amz-acl');
  const owner = ownerOfWrite(call, bucket, canned);
  const grants =
    formCanned !== undefined
      ? cannedGrants(formCanned.trim(), owner, bucket.customerId)
      : (requestedAcl(call, owner, bucket.customerId) ?? [accountGrant(owner, 'FULL_CONTROL')]);
  await checkGrants(call, bucket, grants, owner);
  if (!aclsOn(bucket)) return null;
  if (grantsToOthers(grants, owner, bucket.customerId).length > 0 && formCanned === undefined)
    call.authorize(bucket, 's3:PutObjectAcl', key);
  return encodeObjectAcl({ owner, grants }, bucket.customerId);
}

/** The grants a PutBucketAcl/PutObjectAcl request carries: headers or the document, not both. */
async function grantsOfRequest(call: S3Call, bucket: BucketRecord, owner: string): Promise<AclGrant[]> {
  const fromHeaders = requestedAcl(call, owner, bucket.customerId);
  const body = (await call.readSmallBody()).toString('utf8').trim();
  if (fromHeaders !== null && body)
    throw new S3Error('UnexpectedContent', 400, 'This request does not support content');
  if (fromHeaders !== null) return fromHeaders;
  if (!body) throw s3Errors.malformedAcl();
  return parseAccessControlPolicy(body, owner);
}

export async function getBucketAcl(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  // With ACLs off, AWS shows the owner's FULL_CONTROL (and Fjord the public READ of `is_public`).
  const grants = aclsOn(bucket)
    ? bucketGrants(bucket)
    : bucketGrants({ ...bucket, acl: [], ownerPermissions: undefined });
  call.xml(200, 'AccessControlPolicy', aclXml(bucket.customerId, nameOf(call, bucket.customerId), grants));
}

export async function putBucketAcl(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const grants = await grantsOfRequest(call, bucket, bucket.customerId);
  await checkGrants(call, bucket, grants);
  // With ACLs off only the owner's FULL_CONTROL is taken, and it is what the bucket already has.
  const change = aclsOn(bucket)
    ? splitBucketAcl(grants, bucket.customerId)
    : { ...splitBucketAcl([], bucket.customerId), ownerPermissions: undefined };
  await viaDirectory(call, bucket, () => call.env.directory.putBucketAccess(bucket.name, change));
  call.send(200);
}

/** The object's ACL as it stands: with ACLs off, the bucket's owner owns it with FULL_CONTROL. */
function objectAclOf(bucket: BucketRecord, row: { acl: string | null }): ObjectAcl {
  if (aclsOn(bucket)) return decodeObjectAcl(row.acl, bucket.customerId);
  return { owner: bucket.customerId, grants: [accountGrant(bucket.customerId, 'FULL_CONTROL')] };
}

export async function getObjectAcl(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket({
    objectAcl: true,
  });
  const row = await call.checkObjectAcl(() =>
    findObject(call, bucket, call.key!, call.query.get('versionId')),
  );
  const acl = objectAclOf(bucket, row);
  // With ACLs off, a bucket made public through the control API shows its objects as public-read
  // (anyone reads them); with ACLs on, an object's ACL is its own, whatever the bucket's says.
  const grants = !aclsOn(bucket) && bucket.isPublic ? bucketGrants({ ...bucket, acl: [] }) : acl.grants;
  const headers: Record<string, string> =
    row.version_id !== 'null' ? { 'x-amz-version-id': row.version_id } : {};
  call.xml(200, 'AccessControlPolicy', aclXml(acl.owner, nameOf(call, acl.owner), grants), headers);
}

export async function putObjectAcl(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket({
    objectAcl: true,
  });
  const row = await call.checkObjectAcl(() =>
    findObject(call, bucket, call.key!, call.query.get('versionId')),
  );
  const { owner } = objectAclOf(bucket, row);
  const grants = await grantsOfRequest(call, bucket, owner);
  await checkGrants(call, bucket, grants, owner);
  const stored = aclsOn(bucket) ? encodeObjectAcl({ owner, grants }, bucket.customerId) : null;
  await call.env.objects.repo.updateAcl(row.id, stored);
  call.send(200, row.version_id !== 'null' ? { 'x-amz-version-id': row.version_id } : {});
}

// Ownership controls

export async function getOwnershipControls(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.objectOwnership) throw s3Errors.noOwnershipControls(bucket.name);
  call.xml(200, 'OwnershipControls', `<Rule>${el('ObjectOwnership', bucket.objectOwnership)}</Rule>`);
}

export async function putOwnershipControls(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'OwnershipControls');
  const rules = Array.isArray(doc.Rule) ? doc.Rule : [];
  const value = asText(rules[0]?.ObjectOwnership) as ObjectOwnership | undefined;
  if (rules.length !== 1 || !value || !OWNERSHIPS.includes(value)) throw s3Errors.malformedXml();
  // AWS refuses to turn ACLs off while the bucket's ACL still grants to others (public-read too).
  const aclGrantsOthers = bucket.acl.length > 0 || (aclsOn(bucket) && bucket.isPublic);
  if (value === 'BucketOwnerEnforced' && aclGrantsOthers)
    throw new S3Error(
      'InvalidBucketAclWithObjectOwnership',
      400,
      "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting",
    );
  await viaDirectory(call, bucket, () =>
    call.env.directory.putBucketAccess(bucket.name, { objectOwnership: value }),
  );
  call.send(200);
}

export async function deleteOwnershipControls(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  await viaDirectory(call, bucket, () =>
    call.env.directory.putBucketAccess(bucket.name, { objectOwnership: null }),
  );
  call.send(204);
}

// Public access block

const BLOCK_FIELDS: [keyof PublicAccessBlock, string][] = [
  ['blockPublicAcls', 'BlockPublicAcls'],
  ['ignorePublicAcls', 'IgnorePublicAcls'],
  ['blockPublicPolicy', 'BlockPublicPolicy'],
  ['restrictPublicBuckets', 'RestrictPublicBuckets'],
];

export async function getPublicAccessBlock(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const block = bucket.publicAccessBlock;
  if (!block) throw s3Errors.noPublicAccessBlock(bucket.name);
  call.xml(
    200,
    'PublicAccessBlockConfiguration',
    BLOCK_FIELDS.map(([field, name]) => el(name, block[field])).join(''),
  );
}

export async function putPublicAccessBlock(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'PublicAccessBlockConfiguration');
  const block = {} as PublicAccessBlock;
  for (const [field, name] of BLOCK_FIELDS) {
    const v = asText(doc[name]);
    if (v !== undefined && !/^(true|false)$/i.test(v)) throw s3Errors.malformedXml();
    block[field] = v?.toLowerCase() === 'true';
  }
  await viaDirectory(call, bucket, () =>
    call.env.directory.putBucketAccess(bucket.name, { publicAccessBlock: block }),
  );
  call.send(200);
}

export async function deletePublicAccessBlock(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  await viaDirectory(call, bucket, () =>
    call.env.directory.putBucketAccess(bucket.name, { publicAccessBlock: null }),
  );
  call.send(204);
}
