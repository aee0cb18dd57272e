import type { AclGrant } from './data-plane-contract.js';

/**
 * A bucket's S3 ACL as the `acl` column holds it. Two shapes, so rows written before ACLs were
 * stored exactly keep their meaning:
 * - null or a JSON array (the first shape): the owner holds FULL_CONTROL, the array lists the
 *   grants beyond it and beyond the public READ that `is_public` stands for;
 * - `{"v":2,"owner":[…permissions],"grants":[…]}`: the owner's own grants as sent (possibly none).
 * Writes use the first shape whenever it says the same thing.
 */
type Permission = AclGrant['permission'];

export function decodeBucketAcl(text: string | null): { acl: AclGrant[]; ownerPermissions?: Permission[] } {
  if (!text) return { acl: [] };
  const stored = JSON.parse(text) as AclGrant[] | { v: 2; owner: Permission[]; grants: AclGrant[] };
  if (Array.isArray(stored)) return { acl: stored };
  return { acl: stored.grants, ownerPermissions: stored.owner };
}

export function encodeBucketAcl(acl: AclGrant[], ownerPermissions: Permission[] | undefined): string | null {
  const owner = ownerPermissions ?? ['FULL_CONTROL'];
  if (owner.length === 1 && owner[0] === 'FULL_CONTROL') return acl.length ? JSON.stringify(acl) : null;
  return JSON.stringify({ v: 2, owner, grants: acl });
}
