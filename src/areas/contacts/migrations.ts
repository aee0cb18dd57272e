import type { Kysely, Migration } from 'kysely';

export const contactsMigrations: Record<string, Migration> = {
  '2026-11-22-0500-contacts': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('contacts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('type', 'text', (c) => c.notNull())
        // Null only once the contact is anonymised (gdpr-delete).
        .addColumn('name', 'text')
        .addColumn('company_name', 'text')
        .addColumn('phone_number', 'text')
        .addColumn('email', 'text')
        .addColumn('notes', 'text')
        .addColumn('tags', 'text', (c) => c.notNull())
        // Lower-cased in JavaScript so search and sorting agree on SQLite and PostgreSQL, and for
        // letters beyond ASCII (SQLite's lower() folds ASCII only).
        .addColumn('search_text', 'text', (c) => c.notNull())
        .addColumn('sort_name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .addColumn('anonymized_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('contacts_customer_sort')
        .on('contacts')
        .columns(['customer_id', 'sort_name', 'id'])
        .execute();
      await db.schema
        .createIndex('contacts_customer_phone')
        .on('contacts')
        .columns(['customer_id', 'phone_number'])
        .execute();

      // One row per tag, so the tag filter is an indexed join on both engines.
      await db.schema
        .createTable('contact_tags')
        .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('tag_key', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('contact_tags_pk', ['contact_id', 'tag_key'])
        .execute();
      await db.schema
        .createIndex('contact_tags_customer_tag')
        .on('contact_tags')
        .columns(['customer_id', 'tag_key', 'contact_id'])
        .execute();

      await db.schema
        .createTable('contact_groups')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('name_key', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('contact_groups_customer_name', ['customer_id', 'name_key'])
        .execute();

      await db.schema
        .createTable('contact_group_members')
        .addColumn('group_id', 'text', (c) => c.notNull().references('contact_groups.id').onDelete('cascade'))
        .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('added_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('contact_group_members_pk', ['group_id', 'contact_id'])
        .execute();
      await db.schema
        .createIndex('contact_group_members_contact')
        .on('contact_group_members')
        .columns(['contact_id'])
        .execute();
    },
  },
};

export interface ContactsTable {
  id: string;
  customer_id: string;
  type: string;
  name: string | null;
  company_name: string | null;
  phone_number: string | null;
  email: string | null;
  notes: string | null;
  /** JSON array of the tags as written. */
  tags: string;
  search_text: string;
  sort_name: string;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  anonymized_at: number | null;
}

export interface ContactTagsTable {
  contact_id: string;
  customer_id: string;
  tag_key: string;
}

export interface ContactGroupsTable {
  id: string;
  customer_id: string;
  name: string;
  name_key: string;
  description: string | null;
  created_at: number;
  updated_at: number;
}

export interface ContactGroupMembersTable {
  group_id: string;
  contact_id: string;
  customer_id: string;
  added_at: number;
}

export interface ContactsTables {
  contacts: ContactsTable;
  contact_tags: ContactTagsTable;
  contact_groups: ContactGroupsTable;
  contact_group_members: ContactGroupMembersTable;
}
