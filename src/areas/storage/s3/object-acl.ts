import type { AclGrant } from '../data-plane-contract.js';
import { accountGrant, grantsTo } from './acl.js';

/**
 * An object version's ACL as its `acl` column holds it. Two shapes, so rows written before ACLs
 * were stored exactly keep their meaning:
 * - null or a JSON array (the first shape): the bucket's owner owns the object and holds
 *   FULL_CONTROL; the array lists the grants beyond that one;
 * - `{"v":2,"owner":id,"grants":[…]}`: the owning account and the grants exactly as given.
 * Writes use the first shape whenever it says the same thing, so a private object of the bucket's
 * owner (the common case) still stores null.
 */
export interface ObjectAcl {
  /** The account that owns the object: its writer under ObjectWriter, else the bucket's owner. */
  owner: string;
  grants: AclGrant[];
}

export function decodeObjectAcl(text: string | null, bucketOwner: string): ObjectAcl {
  const own = accountGrant(bucketOwner, 'FULL_CONTROL');
  if (!text) return { owner: bucketOwner, grants: [own] };
  const stored = JSON.parse(text) as AclGrant[] | { v: 2; owner: string; grants: AclGrant[] };
  if (Array.isArray(stored)) return { owner: bucketOwner, grants: [own, ...stored] };
  return { owner: stored.owner, grants: stored.grants };
}

export function encodeObjectAcl(acl: ObjectAcl, bucketOwner: string): string | null {
  const [first, ...rest] = acl.grants;
  const firstShape =
    acl.owner === bucketOwner &&
    first !== undefined &&
    grantsTo(first, bucketOwner) &&
    first.permission === 'FULL_CONTROL' &&
    !rest.some((g) => grantsTo(g, bucketOwner));
  if (firstShape) return rest.length ? JSON.stringify(rest) : null;
  return JSON.stringify({ v: 2, owner: acl.owner, grants: acl.grants });
}

/** The grants that open the resource to someone other than its owner and the bucket's owner. */
export function grantsToOthers(grants: AclGrant[], owner: string, bucketOwner: string): AclGrant[] {
  return grants.filter((g) => !grantsTo(g, owner) && !grantsTo(g, bucketOwner));
}
