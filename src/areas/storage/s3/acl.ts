import type { AclGrant, BucketRecord } from '../data-plane-contract.js';
import type { Principal } from './auth.js';
import type { S3Call } from './context.js';
import { S3Error, s3Errors } from './errors.js';
import { asText, el, parseXml } from './xml.js';

/**
 * S3 access control lists: canned ACLs, `x-amz-grant-*` headers and the AccessControlPolicy
 * document, and what a grant lets its grantee do. As on AWS, an ACL is the list of grants as
 * given: a canned ACL stands for its documented list (the owner's FULL_CONTROL first), explicit
 * grants are kept as they are, so an owner left out of them holds no grant (only the implicit
 * READ_ACP/WRITE_ACP every resource owner keeps).
 */

const GROUPS = 'http://acs.amazonaws.com/groups/global/';
const PERMISSIONS = ['READ', 'WRITE', 'READ_ACP', 'WRITE_ACP', 'FULL_CONTROL'] as const;
type Permission = AclGrant['permission'];

const group = (g: 'AllUsers' | 'AuthenticatedUsers', permission: Permission): AclGrant => ({
  grantee: { type: 'Group', group: g },
  permission,
});

/** A grant to one account (a canonical id: a Fjord customer id). */
export const accountGrant = (id: string, permission: Permission): AclGrant => ({
  grantee: { type: 'CanonicalUser', id },
  permission,
});

/** Whether `g` names the account `id`. */
export const grantsTo = (g: AclGrant, id: string) =>
  g.grantee.type === 'CanonicalUser' && g.grantee.id === id;

/**
 * The grants a canned ACL stands for on a resource `owner` owns in a bucket of `bucketOwner`
 * (the same account for a bucket: `bucket-owner-*` on a bucket is then just `private`, as AWS
 * ignores them there).
 */
export function cannedGrants(canned: string, owner: string, bucketOwner: string = owner): AclGrant[] {
  const own = accountGrant(owner, 'FULL_CONTROL');
  switch (canned) {
    case 'private':
      return [own];
    case 'bucket-owner-read':
      return owner === bucketOwner ? [own] : [own, accountGrant(bucketOwner, 'READ')];
    case 'bucket-owner-full-control':
      return owner === bucketOwner ? [own] : [own, accountGrant(bucketOwner, 'FULL_CONTROL')];
    case 'public-read':
      return [own, group('AllUsers', 'READ')];
    case 'public-read-write':
      return [own, group('AllUsers', 'READ'), group('AllUsers', 'WRITE')];
    case 'authenticated-read':
      return [own, group('AuthenticatedUsers', 'READ')];
    case 'aws-exec-read':
    case 'log-delivery-write':
      throw s3Errors.notImplemented(`The canned ACL ${canned} is not supported.`);
    default:
      throw s3Errors.invalidArgument('Invalid canned ACL', 'x-amz-acl', canned);
  }
}

const HEADER_PERMISSIONS: Record<string, Permission> = {
  'x-amz-grant-read': 'READ',
  'x-amz-grant-write': 'WRITE',
  'x-amz-grant-read-acp': 'READ_ACP',
  'x-amz-grant-write-acp': 'WRITE_ACP',
  'x-amz-grant-full-control': 'FULL_CONTROL',
};

function grantee(type: string, value: string): AclGrant['grantee'] {
  switch (type.toLowerCase()) {
    case 'id':
      if (!value) throw s3Errors.invalidArgument('Invalid id', 'CanonicalUser/ID', value);
      return { type: 'CanonicalUser', id: value };
    case 'uri': {
      const name = value.startsWith(GROUPS) ? value.slice(GROUPS.length) : '';
      if (name === 'AllUsers' || name === 'AuthenticatedUsers') return { type: 'Group', group: name };
      throw s3Errors.invalidArgument('Invalid group uri', 'Group/URI', value);
    }
    case 'emailaddress':
      throw new S3Error(
        'UnresolvableGrantByEmailAddress',
        400,
        'The e-mail address you provided does not match any account on record; grant by canonical id (the account id) instead.',
      );
    default:
      throw s3Errors.invalidArgument('Argument format not recognized', type, value);
  }
}

/** `x-amz-grant-read: id="c1", uri="http://acs.amazonaws.com/groups/global/AllUsers"`. */
function headerGrants(call: S3Call): AclGrant[] | null {
  let out: AclGrant[] | null = null;
  for (const name of Object.keys(call.req.headers)) {
    if (!name.startsWith('x-amz-grant-')) continue;
    const permission = HEADER_PERMISSIONS[name];
    if (!permission) throw s3Errors.invalidArgument('Unknown grant header', name, call.header(name));
    out ??= [];
    for (const part of (call.header(name) ?? '').split(',')) {
      const m = /^\s*([A-Za-z]+)\s*=\s*"?([^"]*)"?\s*$/.exec(part);
      if (!m) throw s3Errors.invalidArgument('Argument format not recognized', name, part.trim());
      out.push({ grantee: grantee(m[1]!, m[2]!), permission });
    }
  }
  return out;
}

/**
 * The ACL a write asks for (`x-amz-acl` or `x-amz-grant-*`) on a resource `owner` owns in a bucket
 * of `bucketOwner`, as the full list of grants; null when it asks for none.
 */
export function requestedAcl(call: S3Call, owner: string, bucketOwner: string = owner): AclGrant[] | null {
  const canned = call.header('x-amz-acl');
  const grants = headerGrants(call);
  if (canned !== undefined && grants)
    throw s3Errors.invalidRequest('Specifying both Canned ACLs and Header Grants is not allowed');
  if (canned !== undefined) return cannedGrants(canned.trim(), owner, bucketOwner);
  return grants;
}

/** An AccessControlPolicy document (PutBucketAcl, PutObjectAcl): its grants, exactly as listed. */
export function parseAccessControlPolicy(text: string, ownerId: string): AclGrant[] {
  const doc = parseXml(text, 'AccessControlPolicy');
  const owner = asText(doc?.Owner?.ID);
  if (owner !== undefined && owner !== ownerId)
    throw s3Errors.accessDenied('The Owner of an ACL cannot be changed.');
  const list = doc?.AccessControlList?.Grant;
  const items: Record<string, unknown>[] = list === undefined ? [] : Array.isArray(list) ? list : [list];
  const grants: AclGrant[] = [];
  for (const g of items) {
    const permission = asText(g['Permission']) as Permission | undefined;
    if (!permission || !PERMISSIONS.includes(permission)) throw s3Errors.malformedAcl();
    const who = (g['Grantee'] ?? {}) as Record<string, unknown>;
    const id = asText(who['ID']);
    const uri = asText(who['URI']);
    const email = asText(who['EmailAddress']);
    const parsed =
      id !== undefined
        ? grantee('id', id)
        : uri !== undefined
          ? grantee('uri', uri)
          : email !== undefined
            ? grantee('emailAddress', email)
            : null;
    if (!parsed) throw s3Errors.malformedAcl();
    grants.push({ grantee: parsed, permission });
  }
  return grants;
}

/** Whether the grant opens to anyone (AllUsers) or to any Fjord key (AuthenticatedUsers): AWS's "public". */
export const isPublicGrant = (g: AclGrant) => g.grantee.type === 'Group';

const publicRead = (g: AclGrant) =>
  g.grantee.type === 'Group' &&
  g.grantee.group === 'AllUsers' &&
  (g.permission === 'READ' || g.permission === 'FULL_CONTROL');

/**
 * A bucket's ACL as stored: the public READ is the control API's `is_public`, the owner's own
 * grants are `ownerPermissions`, the rest is kept as grants.
 */
export function splitBucketAcl(
  grants: AclGrant[],
  ownerId: string,
): { isPublic: boolean; acl: AclGrant[]; ownerPermissions: Permission[] } {
  return {
    isPublic: grants.some(publicRead),
    acl: grants.filter((g) => !(publicRead(g) && g.permission === 'READ') && !grantsTo(g, ownerId)),
    ownerPermissions: grants.filter((g) => grantsTo(g, ownerId)).map((g) => g.permission),
  };
}

/** A bucket's ACL as GetBucketAcl shows it: the owner's grants, the public READ, then the rest. */
export function bucketGrants(bucket: BucketRecord): AclGrant[] {
  const own = (bucket.ownerPermissions ?? ['FULL_CONTROL']).map((p) => accountGrant(bucket.customerId, p));
  return [...own, ...(bucket.isPublic ? [group('AllUsers', 'READ')] : []), ...bucket.acl];
}

/** An AccessControlPolicy's body; the owner's name is shown on its own grants too. */
export function aclXml(ownerId: string, ownerName: string, grants: AclGrant[]): string {
  const owner = `${el('ID', ownerId)}${el('DisplayName', ownerName)}`;
  const xsi = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
  const one = (g: AclGrant) => {
    const who =
      g.grantee.type === 'CanonicalUser'
        ? `<Grantee ${xsi} xsi:type="CanonicalUser">${g.grantee.id === ownerId ? owner : el('ID', g.grantee.id)}</Grantee>`
        : `<Grantee ${xsi} xsi:type="Group">${el('URI', GROUPS + g.grantee.group)}</Grantee>`;
    return `<Grant>${who}${el('Permission', g.permission)}</Grant>`;
  };
  return `<Owner>${owner}</Owner><AccessControlList>${grants.map(one).join('')}</AccessControlList>`;
}

/** The ACL permission an action needs on a bucket or on an object. */
const BUCKET_PERMISSION: Record<string, Permission> = {
  's3:ListBucket': 'READ',
  's3:ListBucketVersions': 'READ',
  's3:ListBucketMultipartUploads': 'READ',
  's3:PutObject': 'WRITE',
  's3:DeleteObject': 'WRITE',
  's3:DeleteObjectVersion': 'WRITE',
  's3:AbortMultipartUpload': 'WRITE',
  's3:GetBucketAcl': 'READ_ACP',
  's3:PutBucketAcl': 'WRITE_ACP',
};
const OBJECT_PERMISSION: Record<string, Permission> = {
  's3:GetObject': 'READ',
  's3:GetObjectVersion': 'READ',
  's3:GetObjectAcl': 'READ_ACP',
  's3:PutObjectAcl': 'WRITE_ACP',
  's3:GetObjectVersionAcl': 'READ_ACP',
  's3:PutObjectVersionAcl': 'WRITE_ACP',
};

export const bucketPermissionFor = (action: string): Permission | undefined => BUCKET_PERMISSION[action];
export const objectPermissionFor = (action: string): Permission | undefined => OBJECT_PERMISSION[action];

/** Whether `grants` give `principal` the permission; `skipPublic` drops AllUsers/AuthenticatedUsers grants. */
export function aclPermits(
  grants: AclGrant[],
  principal: Principal,
  permission: Permission,
  skipPublic: boolean,
): boolean {
  return grants.some((g) => {
    if (g.permission !== permission && g.permission !== 'FULL_CONTROL') return false;
    const who = g.grantee;
    if (who.type === 'CanonicalUser') return principal.kind === 'key' && principal.key.customerId === who.id;
    if (skipPublic) return false;
    return who.group === 'AllUsers' || principal.kind === 'key';
  });
}
