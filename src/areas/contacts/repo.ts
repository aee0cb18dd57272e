import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { StoreKind } from '../../kernel/store/store.js';
import type { AnyDb, UnitDb } from '../../kernel/store/unit-of-work.js';
import type { ContactGroupsTable, ContactsTable, ContactsTables } from './migrations.js';

type Db = Kysely<ContactsTables>;
type ContactPatch = Partial<Omit<ContactsTable, 'id' | 'customer_id' | 'created_at'>>;

export interface ContactFilter {
  type?: string;
  /** Lower-cased search text. */
  text?: string;
  /** Lower-cased tags; a contact must carry all of them. */
  tagKeys: string[];
}

export type SortColumn = 'sort_name' | 'created_at' | 'updated_at';

/** An active contact: neither deleted nor anonymised. */
const active = (eb: ExpressionBuilder<ContactsTables, 'contacts'>) =>
  eb.and([eb('contacts.deleted_at', 'is', null), eb('contacts.anonymized_at', 'is', null)]);

/** `%`, `_` and `\` are literal in a search. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export type GroupRow = ContactGroupsTable & { member_count: number };

const IN_CHUNK = 1000;

const isForeignKeyViolation = (err: unknown) => {
  const code = (err as { code?: string } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
};

/**
 * Every query of contacts and groups. Bound to the store for reads or to a unit's transaction
 * (`ContactsRepo.over`); the writes of several rows that must land together are run in a unit by
 * the service, never opened here.
 */
export class ContactsRepo {
  /** PostgreSQL sorts text by the database's locale; "C" gives code-point order, as SQLite does. */
  constructor(
    private readonly db: UnitDb<ContactsTables>,
    private readonly byCodePoint: boolean,
  ) {}

  /** Binds repos to the store or a unit's transaction on a store of this kind. */
  static on(kind: StoreKind): (db: AnyDb) => ContactsRepo {
    return (db) => new ContactsRepo(db, kind === 'postgres');
  }

  /** An ORDER BY expression; text columns sort by code point on both engines. */
  private textOrder(column: string, isText: boolean) {
    return this.byCodePoint && isText ? sql`${sql.ref(column)} COLLATE "C"` : sql.ref(column);
  }

  async insertContact(row: ContactsTable, tagKeys: string[]): Promise<void> {
    const trx = this.db;
    await trx.insertInto('contacts').values(row).execute();
    await this.writeTags(trx, row.customer_id, row.id, tagKeys);
  }

  /** Changes the given columns of an active contact; tags are rewritten when `tagKeys` is given. */
  async updateContact(
    customerId: string,
    id: string,
    patch: ContactPatch,
    tagKeys: string[] | undefined,
  ): Promise<boolean> {
    const trx = this.db;
    const r = await trx
      .updateTable('contacts')
      .set(patch)
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .where(active)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    if (tagKeys) {
      await trx.deleteFrom('contact_tags').where('contact_id', '=', id).execute();
      await this.writeTags(trx, customerId, id, tagKeys);
    }
    return true;
  }

  private async writeTags(trx: Db, customerId: string, contactId: string, tagKeys: string[]) {
    if (tagKeys.length === 0) return;
    await trx
      .insertInto('contact_tags')
      .values(tagKeys.map((tag_key) => ({ contact_id: contactId, customer_id: customerId, tag_key })))
      .execute();
  }

  activeContact(customerId: string, id: string) {
    return this.db
      .selectFrom('contacts')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .where(active)
      .executeTakeFirst();
  }

  /** Any contact of the customer, deleted or anonymised too (erasure must reach deleted ones). */
  anyContact(customerId: string, id: string) {
    return this.db
      .selectFrom('contacts')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** Active contacts among `ids`, read in chunks so a long list stays within the engines' parameter limits. */
  async activeContacts(customerId: string, ids: string[]): Promise<ContactsTable[]> {
    const out: ContactsTable[] = [];
    for (let i = 0; i < ids.length; i += IN_CHUNK) {
      const rows = await this.db
        .selectFrom('contacts')
        .selectAll()
        .where('customer_id', '=', customerId)
        .where('id', 'in', ids.slice(i, i + IN_CHUNK))
        .where(active)
        .execute();
      out.push(...rows);
    }
    return out;
  }

  /** The oldest active contact with this phone number. */
  contactByPhone(customerId: string, phone: string) {
    return this.db
      .selectFrom('contacts')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('phone_number', '=', phone)
      .where(active)
      .orderBy('created_at')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
  }

  async listContacts(
    customerId: string,
    filter: ContactFilter,
    sort: { column: SortColumn; desc: boolean },
    limit: number,
    offset: number,
  ): Promise<{ rows: ContactsTable[]; total: number }> {
    let base = this.db.selectFrom('contacts').where('customer_id', '=', customerId).where(active);
    if (filter.type) base = base.where('type', '=', filter.type);
    if (filter.text) {
      base = base.where(sql<boolean>`search_text LIKE ${likePattern(filter.text)} ESCAPE '\\'`);
    }
    for (const tagKey of filter.tagKeys) {
      base = base.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('contact_tags')
            .select('contact_tags.contact_id')
            .whereRef('contact_tags.contact_id', '=', 'contacts.id')
            .where('contact_tags.tag_key', '=', tagKey),
        ),
      );
    }
    const dir = sort.desc ? 'desc' : 'asc';
    const [rows, count] = await Promise.all([
      base
        .selectAll()
        .orderBy(this.textOrder(sort.column, sort.column === 'sort_name'), dir)
        .orderBy('id', dir)
        .limit(limit)
        .offset(offset)
        .execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  async softDelete(customerId: string, id: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('contacts')
      .set({ deleted_at: now, updated_at: now })
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .where(active)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Erases every personal field of a contact, its tags and its group memberships in one
   * transaction. Answers the number of memberships removed, or null when it was already erased.
   */
  async anonymize(customerId: string, id: string, now: number): Promise<number | null> {
    const trx = this.db;
    const r = await trx
      .updateTable('contacts')
      .set({
        name: null,
        company_name: null,
        phone_number: null,
        email: null,
        notes: null,
        tags: '[]',
        search_text: '',
        sort_name: '',
        anonymized_at: now,
        updated_at: now,
        deleted_at: sql<number>`COALESCE(deleted_at, ${now})`,
      })
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .where('anonymized_at', 'is', null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return null;
    await trx.deleteFrom('contact_tags').where('contact_id', '=', id).execute();
    const m = await trx.deleteFrom('contact_group_members').where('contact_id', '=', id).executeTakeFirst();
    return Number(m.numDeletedRows);
  }

  // Groups

  insertGroup(row: ContactGroupsTable) {
    return this.db.insertInto('contact_groups').values(row).execute();
  }

  private groupsWithCounts(customerId: string) {
    return this.db
      .selectFrom('contact_groups as g')
      .selectAll('g')
      .select((eb) =>
        eb
          .selectFrom('contact_group_members as m')
          .innerJoin('contacts', 'contacts.id', 'm.contact_id')
          .whereRef('m.group_id', '=', 'g.id')
          .where(active)
          .select((e) => e.fn.countAll<number>().as('n'))
          .as('member_count'),
      )
      .where('g.customer_id', '=', customerId);
  }

  async group(customerId: string, id: string): Promise<GroupRow | undefined> {
    const row = await this.groupsWithCounts(customerId).where('g.id', '=', id).executeTakeFirst();
    return row ? { ...row, member_count: Number(row.member_count ?? 0) } : undefined;
  }

  async groups(customerId: string): Promise<GroupRow[]> {
    const rows = await this.groupsWithCounts(customerId)
      .orderBy(this.textOrder('g.name_key', true))
      .orderBy('g.id')
      .execute();
    return rows.map((r) => ({ ...r, member_count: Number(r.member_count ?? 0) }));
  }

  async groupsByIds(customerId: string, ids: string[]) {
    if (ids.length === 0) return [];
    return this.db
      .selectFrom('contact_groups')
      .select(['id'])
      .where('customer_id', '=', customerId)
      .where('id', 'in', ids)
      .execute();
  }

  async updateGroup(
    customerId: string,
    id: string,
    patch: Partial<Pick<ContactGroupsTable, 'name' | 'name_key' | 'description' | 'updated_at'>>,
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('contact_groups')
      .set(patch)
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Deletes a group and its memberships; the contacts stay. Null when there was no such group. */
  async deleteGroup(customerId: string, id: string): Promise<number | null> {
    const trx = this.db;
    const g = await trx
      .selectFrom('contact_groups')
      .select('id')
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!g) return null;
    const m = await trx.deleteFrom('contact_group_members').where('group_id', '=', id).executeTakeFirst();
    await trx.deleteFrom('contact_groups').where('id', '=', id).execute();
    return Number(m.numDeletedRows);
  }

  async members(groupId: string, limit: number, offset: number) {
    const base = this.db
      .selectFrom('contact_group_members as m')
      .innerJoin('contacts', 'contacts.id', 'm.contact_id')
      .where('m.group_id', '=', groupId)
      .where(active);
    const [rows, count] = await Promise.all([
      base
        .selectAll('contacts')
        .select('m.added_at')
        .orderBy('m.added_at')
        .orderBy('contacts.id')
        .limit(limit)
        .offset(offset)
        .execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  /** Adds memberships, skipping those that exist; answers how many were new. */
  /**
   * Adds memberships, skipping those that exist; answers how many were new, or null when the
   * group was deleted meanwhile. The contacts are re-read as part of the insert, so a contact
   * deleted or erased since the caller looked is not added.
   */
  async addMembers(
    customerId: string,
    groupId: string,
    contactIds: string[],
    now: number,
  ): Promise<number | null> {
    if (contactIds.length === 0) return 0;
    try {
      const r = await this.db
        .insertInto('contact_group_members')
        .columns(['group_id', 'contact_id', 'customer_id', 'added_at'])
        .expression((eb) =>
          eb
            .selectFrom('contacts')
            .select([
              sql<string>`CAST(${groupId} AS TEXT)`.as('group_id'),
              'contacts.id',
              'contacts.customer_id',
              sql<number>`CAST(${now} AS BIGINT)`.as('added_at'),
            ])
            .where('contacts.customer_id', '=', customerId)
            .where('contacts.id', 'in', contactIds)
            .where(active),
        )
        .onConflict((oc) => oc.columns(['group_id', 'contact_id']).doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0);
    } catch (err) {
      if (isForeignKeyViolation(err)) return null;
      throw err;
    }
  }

  async removeMember(groupId: string, contactId: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('contact_group_members')
      .where('group_id', '=', groupId)
      .where('contact_id', '=', contactId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Active members of the groups with a phone number, in group order then joining order. */
  async phonesOfGroups(customerId: string, groupIds: string[]) {
    if (groupIds.length === 0) return [];
    return this.db
      .selectFrom('contact_group_members as m')
      .innerJoin('contacts', 'contacts.id', 'm.contact_id')
      .select(['m.group_id', 'contacts.id', 'contacts.phone_number', 'm.added_at'])
      .where('m.customer_id', '=', customerId)
      .where('m.group_id', 'in', groupIds)
      .where('contacts.phone_number', 'is not', null)
      .where(active)
      .orderBy('m.added_at')
      .orderBy('contacts.id')
      .execute();
  }
}
