import { defineRoute } from '../../kernel/http/route.js';
import { contactsAccess, TAG } from './access.js';
import { groupRoutes } from './routes-groups.js';
import {
  AnonymizedContact,
  Contact,
  ContactIdParams,
  ContactList,
  CreateContactBody,
  DeletedContact,
  GdprDeleteBody,
  ListContactsQuery,
  UpdateContactBody,
} from './schemas.js';
import type { ContactsService } from './service.js';

export function contactsRoutes(contacts: ContactsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/contacts',
      operationId: 'listContacts',
      tag: TAG,
      summary: 'List contacts, filtered by type, search text and tags',
      description:
        '`q` (or `search`) finds text in the name, company name, e-mail and phone number, case-insensitively; `tags` is a comma-separated list and a contact must carry every one. Deleted contacts are not listed.',
      access: contactsAccess(false),
      query: ListContactsQuery,
      response: { 200: ContactList },
      handler: async ({ principal, query }) =>
        contacts.listContacts(principal.customerId, {
          type: query.type,
          text: query.q ?? query.search,
          tags: query.tags,
          sort: query.sort,
          page: query.page ?? 1,
          perPage: query.per_page ?? 50,
        }),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/contacts',
      operationId: 'createContact',
      tag: TAG,
      summary: 'Create a contact',
      description:
        '`type` defaults to `person`. `phone_number` must be a valid number in international form; it is stored in E.164 ("+47 912 34 567" becomes "+4791234567"). Tags are trimmed and de-duplicated case-insensitively.',
      access: contactsAccess(true),
      body: CreateContactBody,
      response: { 201: Contact },
      handler: async ({ principal, body }) =>
        contacts.createContact(principal.customerId, principal.credential, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/contacts/:contact_id',
      operationId: 'getContact',
      tag: TAG,
      summary: 'Get a contact',
      access: contactsAccess(false),
      params: ContactIdParams,
      response: { 200: Contact },
      errors: [404],
      handler: async ({ principal, params }) => contacts.getContact(principal.customerId, params.contact_id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/contacts/:contact_id',
      operationId: 'updateContact',
      tag: TAG,
      summary: 'Change the fields sent; the others stay as they are',
      description: '`null` clears `company_name`, `phone_number`, `email`, `notes` or `tags`.',
      access: contactsAccess(true),
      params: ContactIdParams,
      body: UpdateContactBody,
      response: { 200: Contact },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        contacts.updateContact(principal.customerId, principal.credential, params.contact_id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/contacts/:contact_id',
      operationId: 'deleteContact',
      tag: TAG,
      summary: 'Delete a contact (soft delete)',
      description:
        'The contact leaves lists, groups and sending at once; its data is kept until it is erased with `gdpr-delete`.',
      access: contactsAccess(true),
      params: ContactIdParams,
      response: { 200: DeletedContact },
      errors: [404],
      handler: async ({ principal, params }) =>
        contacts.deleteContact(principal.customerId, principal.credential, params.contact_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/contacts/:contact_id/gdpr-delete',
      operationId: 'gdprDeleteContact',
      tag: TAG,
      summary: 'Erase a contact permanently (GDPR): irreversible anonymisation',
      description:
        'Name, company name, phone number, e-mail, notes and tags are erased, group memberships removed, and the phone number is masked in the SMS history. Works on deleted contacts too; repeating it answers the first erasure.',
      access: contactsAccess(true),
      params: ContactIdParams,
      body: GdprDeleteBody,
      response: { 200: AnonymizedContact },
      errors: [404, 503],
      handler: async ({ principal, params, body }) =>
        contacts.gdprDelete(principal.customerId, principal.credential, params.contact_id, body.reason),
    }),
    ...groupRoutes(contacts),
  ];
}
