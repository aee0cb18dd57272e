import { describe, expect, it } from 'vitest';
import { decodeBucketAcl, encodeBucketAcl } from '../bucket-acl.js';
import type { AclGrant } from '../data-plane-contract.js';
import { decodeObjectAcl, encodeObjectAcl } from './object-acl.js';

const user = (id: string, permission: AclGrant['permission']): AclGrant => ({
  grantee: { type: 'CanonicalUser', id },
  permission,
});
const allUsersRead: AclGrant = { grantee: { type: 'Group', group: 'AllUsers' }, permission: 'READ' };

describe('stored object ACLs', () => {
  it('read rows of the first shape as the bucket owner FULL_CONTROL plus the listed grants', () => {
    expect(decodeObjectAcl(null, 'own')).toEqual({ owner: 'own', grants: [user('own', 'FULL_CONTROL')] });
    expect(decodeObjectAcl(JSON.stringify([allUsersRead]), 'own')).toEqual({
      owner: 'own',
      grants: [user('own', 'FULL_CONTROL'), allUsersRead],
    });
  });

  it('keep the first shape when it says the same, and the exact one otherwise', () => {
    expect(encodeObjectAcl({ owner: 'own', grants: [user('own', 'FULL_CONTROL')] }, 'own')).toBeNull();
    expect(
      encodeObjectAcl({ owner: 'own', grants: [user('own', 'FULL_CONTROL'), allUsersRead] }, 'own'),
    ).toBe(JSON.stringify([allUsersRead]));
    for (const acl of [
      { owner: 'own', grants: [allUsersRead] },
      { owner: 'own', grants: [] },
      { owner: 'own', grants: [user('own', 'READ')] },
      { owner: 'own', grants: [user('own', 'FULL_CONTROL'), user('own', 'READ')] },
      { owner: 'writer', grants: [user('writer', 'FULL_CONTROL')] },
    ]) {
      const text = encodeObjectAcl(acl, 'own');
      expect(text).toContain('"v":2');
      expect(decodeObjectAcl(text, 'own')).toEqual(acl);
    }
  });
});

describe('stored bucket ACLs', () => {
  it('read rows of the first shape with the owner FULL_CONTROL left implicit', () => {
    expect(decodeBucketAcl(null)).toEqual({ acl: [] });
    expect(decodeBucketAcl(JSON.stringify([user('b', 'WRITE')]))).toEqual({ acl: [user('b', 'WRITE')] });
  });

  it('write the exact shape only when the owner holds something other than FULL_CONTROL', () => {
    expect(encodeBucketAcl([], undefined)).toBeNull();
    expect(encodeBucketAcl([], ['FULL_CONTROL'])).toBeNull();
    expect(encodeBucketAcl([user('b', 'WRITE')], ['FULL_CONTROL'])).toBe(
      JSON.stringify([user('b', 'WRITE')]),
    );
    const exact = encodeBucketAcl([user('b', 'WRITE')], ['READ_ACP']);
    expect(decodeBucketAcl(exact)).toEqual({ acl: [user('b', 'WRITE')], ownerPermissions: ['READ_ACP'] });
    expect(decodeBucketAcl(encodeBucketAcl([], []))).toEqual({ acl: [], ownerPermissions: [] });
  });
});
