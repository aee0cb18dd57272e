import { defineRoute } from '../../kernel/http/route.js';
import { contactsAccess, TAG } from './access.js';
import {
  AddedMembers,
  AddMembersBody,
  CreateGroupBody,
  DeletedGroup,
  Group,
  GroupIdParams,
  GroupList,
  MemberList,
  MemberParams,
  MembersQuery,
  RemovedMember,
  UpdateGroupBody,
} from './schemas.js';
import type { ContactsService } from './service.js';

export function groupRoutes(contacts: ContactsService) {
  const groups = contacts.groups;
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/contacts/groups',
      operationId: 'listContactGroups',
      tag: TAG,
      summary: 'List contact groups with their member counts',
      access: contactsAccess(false),
      response: { 200: GroupList },
      handler: async ({ principal }) => groups.list(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/contacts/groups',
      operationId: 'createContactGroup',
      tag: TAG,
      summary: 'Create a contact group',
      description: 'Group names are unique per account, compared case-insensitively.',
      access: contactsAccess(true),
      body: CreateGroupBody,
      response: { 201: Group },
      errors: [409],
      handler: async ({ principal, body }) => groups.create(principal.customerId, principal.credential, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/contacts/groups/:group_id',
      operationId: 'getContactGroup',
      tag: TAG,
      summary: 'Get a contact group',
      access: contactsAccess(false),
      params: GroupIdParams,
      response: { 200: Group },
      errors: [404],
      handler: async ({ principal, params }) => groups.get(principal.customerId, params.group_id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/contacts/groups/:group_id',
      operationId: 'updateContactGroup',
      tag: TAG,
      summary: 'Rename a contact group or change its description',
      access: contactsAccess(true),
      params: GroupIdParams,
      body: UpdateGroupBody,
      response: { 200: Group },
      errors: [404, 409],
      handler: async ({ principal, params, body }) =>
        groups.update(principal.customerId, principal.credential, params.group_id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/contacts/groups/:group_id',
      operationId: 'deleteContactGroup',
      tag: TAG,
      summary: 'Delete a contact group; its contacts stay',
      access: contactsAccess(true),
      params: GroupIdParams,
      response: { 200: DeletedGroup },
      errors: [404],
      handler: async ({ principal, params }) =>
        groups.delete(principal.customerId, principal.credential, params.group_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/contacts/groups/:group_id/members',
      operationId: 'listContactGroupMembers',
      tag: TAG,
      summary: 'List the members of a contact group, in the order they joined',
      description:
        '`{members}` holds contact summaries. Pages of up to 1000 members (`page`, `per_page`); `total` counts them all.',
      access: contactsAccess(false),
      params: GroupIdParams,
      query: MembersQuery,
      response: { 200: MemberList },
      errors: [404],
      handler: async ({ principal, params, query }) =>
        groups.members(principal.customerId, params.group_id, query.page ?? 1, query.per_page ?? 1000),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/contacts/groups/:group_id/members',
      operationId: 'addContactGroupMembers',
      tag: TAG,
      summary: 'Add up to 1000 contacts to a group at once',
      description:
        '`added` counts the contacts that were not in the group yet. An unknown or deleted contact id is a 404 naming it, and then nothing is added.',
      access: contactsAccess(true),
      params: GroupIdParams,
      body: AddMembersBody,
      response: { 200: AddedMembers },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        groups.addMembers(principal.customerId, principal.credential, params.group_id, body.contact_ids),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/contacts/groups/:group_id/members/:contact_id',
      operationId: 'removeContactGroupMember',
      tag: TAG,
      summary: 'Remove one contact from a group (the contact stays)',
      access: contactsAccess(true),
      params: MemberParams,
      response: { 200: RemovedMember },
      errors: [404],
      handler: async ({ principal, params }) =>
        groups.removeMember(principal.customerId, principal.credential, params.group_id, params.contact_id),
    }),
  ];
}
