import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp } from '../../kernel/http/common-schemas.js';

export const CONTACT_TYPES = ['person', 'company'] as const;
export type ContactType = (typeof CONTACT_TYPES)[number];

export const LIMITS = {
  name: 200,
  companyName: 200,
  email: 254,
  notes: 10_000,
  tag: 50,
  tags: 50,
  groupName: 100,
  groupDescription: 1000,
  bulkMembers: 1000,
} as const;

const ContactTypeSchema = Type.Union(
  CONTACT_TYPES.map((t) => Type.Literal(t)),
  { description: '`person` or `company`' },
);

export const Contact = Type.Object(
  {
    id: Type.String(),
    type: ContactTypeSchema,
    name: Type.String(),
    company_name: Nullable(Type.String()),
    phone_number: Nullable(Type.String({ description: 'E.164' })),
    email: Nullable(Type.String()),
    tags: Type.Array(Type.String()),
    notes: Nullable(Type.String()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'Contact' },
);

export const ContactSummary = Type.Object(
  {
    id: Type.String(),
    type: ContactTypeSchema,
    name: Type.String(),
    company_name: Nullable(Type.String()),
    phone_number: Nullable(Type.String({ description: 'E.164' })),
    email: Nullable(Type.String()),
    added_at: Timestamp('When the contact joined the group'),
  },
  { title: 'ContactSummary' },
);

export const Group = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    member_count: Type.Integer({ description: 'Active (not deleted) contacts in the group' }),
    created_at: Timestamp(),
  },
  { title: 'ContactGroup' },
);

const Name = Type.String({ minLength: 1, maxLength: LIMITS.name, pattern: '\\S' });
const CompanyName = Type.String({ maxLength: LIMITS.companyName });
const PhoneNumber = Type.String({
  minLength: 1,
  maxLength: 32,
  description: 'International form with a leading "+"; stored and answered in E.164',
});
const Email = Type.String({ format: 'email', maxLength: LIMITS.email });
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.tag, pattern: '\\S' }), {
  maxItems: LIMITS.tags,
});
const Notes = Type.String({ maxLength: LIMITS.notes });

export const CreateContactBody = Type.Object(
  {
    name: Name,
    type: Type.Optional(ContactTypeSchema),
    company_name: Type.Optional(Nullable(CompanyName)),
    phone_number: Type.Optional(Nullable(PhoneNumber)),
    email: Type.Optional(Nullable(Email)),
    tags: Type.Optional(Nullable(Tags)),
    notes: Type.Optional(Nullable(Notes)),
  },
  { additionalProperties: false },
);

export const UpdateContactBody = Type.Object(
  {
    name: Type.Optional(Name),
    type: Type.Optional(ContactTypeSchema),
    company_name: Type.Optional(Nullable(CompanyName)),
    phone_number: Type.Optional(Nullable(PhoneNumber)),
    email: Type.Optional(Nullable(Email)),
    tags: Type.Optional(Nullable(Tags)),
    notes: Type.Optional(Nullable(Notes)),
  },
  { additionalProperties: false },
);

export const ListContactsQuery = Type.Object({
  type: Type.Optional(ContactTypeSchema),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Text found in the name, company name, e-mail or phone number (case-insensitive)',
    }),
  ),
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Same as `q`' })),
  tags: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1000,
      description: 'Comma-separated tags; a contact must carry all of them (case-insensitive)',
    }),
  ),
  sort: Type.Optional(
    Type.Union(
      ['name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at'].map((s) => Type.Literal(s)),
      { default: 'name', description: 'Order; a leading "-" reverses it' },
    ),
  ),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
});

export const ContactList = Type.Object({
  contacts: Type.Array(Contact),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});

export const ContactIdParams = Type.Object({ contact_id: Type.String({ minLength: 1, maxLength: 100 }) });
export const GroupIdParams = Type.Object({ group_id: Type.String({ minLength: 1, maxLength: 100 }) });
export const MemberParams = Type.Object({
  group_id: Type.String({ minLength: 1, maxLength: 100 }),
  contact_id: Type.String({ minLength: 1, maxLength: 100 }),
});

export const DeletedContact = Type.Object(
  { id: Type.String(), deleted: Type.Literal(true), deleted_at: Timestamp() },
  { title: 'DeletedContact' },
);

export const GdprDeleteBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S' }) },
  { additionalProperties: false },
);

export const AnonymizedContact = Type.Object(
  {
    id: Type.String(),
    status: Type.Literal('anonymized'),
    anonymized_at: Timestamp(),
    groups_removed: Type.Integer({ description: 'Group memberships removed by this erasure' }),
  },
  { title: 'AnonymizedContact' },
);

export const GroupList = Type.Object({ groups: Type.Array(Group) });

export const CreateGroupBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: LIMITS.groupName, pattern: '\\S' }),
    description: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.groupDescription }))),
  },
  { additionalProperties: false },
);

export const UpdateGroupBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.groupName, pattern: '\\S' })),
    description: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.groupDescription }))),
  },
  { additionalProperties: false },
);

export const DeletedGroup = Type.Object(
  {
    id: Type.String(),
    deleted: Type.Literal(true),
    members_removed: Type.Integer({ description: 'Memberships dropped; the contacts themselves stay' }),
  },
  { title: 'DeletedGroup' },
);

export const MembersQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 1000 })),
});

export const MemberList = Type.Object({
  members: Type.Array(ContactSummary),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});

export const AddMembersBody = Type.Object(
  {
    contact_ids: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: LIMITS.bulkMembers,
    }),
  },
  { additionalProperties: false },
);

export const AddedMembers = Type.Object({
  added: Type.Integer({ description: 'Contacts newly added; those already in the group are not counted' }),
});

export const RemovedMember = Type.Object(
  { group_id: Type.String(), contact_id: Type.String(), removed: Type.Literal(true) },
  { title: 'RemovedMember' },
);
