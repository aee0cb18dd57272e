import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { Credential } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import { toJson } from '../../kernel/store/dialect.js';
import type { Store } from '../../kernel/store/store.js';
import { type Units, unitsOf } from '../../kernel/store/unit-of-work.js';
import { contactsErrors } from './errors.js';
import { type AuditRecorder, ContactGroups } from './groups.js';
import type { ContactsTable } from './migrations.js';
import { toE164 } from './phone.js';
import { ContactsRepo, type SortColumn } from './repo.js';
import type { ContactType } from './schemas.js';
import { type ContactView, cleanTags, contactView, derived, emptyToNull, fold, iso } from './views.js';

export { contactsErrors } from './errors.js';
export type { ContactView } from './views.js';

export interface ContactInput {
  name?: string;
  type?: ContactType;
  company_name?: string | null;
  phone_number?: string | null;
  email?: string | null;
  tags?: string[] | null;
  notes?: string | null;
}

export interface ContactErasure {
  customerId: string;
  contactId: string;
  /** The number the contact had (E.164), so other areas can mask it in what they keep. */
  phone: string | null;
}
export type ErasureListener = (event: ContactErasure) => Promise<void>;

export interface Recipient {
  phone: string;
  contactId: string;
}

/**
 * The shared contact directory and its groups. Other areas use `resolveRecipients`,
 * `findByPhone` and `onErase` (the SMS area masks erased numbers in its history).
 */
export class ContactsService {
  private readonly data: Units<ContactsRepo>;
  private readonly repo: ContactsRepo;
  private readonly erasureListeners: ErasureListener[] = [];
  /** Contact groups and their members. */
  readonly groups: ContactGroups;

  constructor(
    store: Store,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {
    const data = unitsOf(store, ContactsRepo.on(store.kind));
    this.data = data;
    this.repo = data.read;
    this.groups = new ContactGroups(data, clock, this.record);
  }

  // Interfaces for other areas

  /** Registers a listener that must forget an erased contact's data; called before the erasure. */
  onErase(listener: ErasureListener): void {
    this.erasureListeners.push(listener);
  }

  /**
   * The phone numbers behind contact and group ids: active contacts that have a number, in the
   * order given (contacts first, then each group's members in joining order), one entry per
   * number. An unknown, deleted or other customer's id is a not-found error naming it.
   */
  async resolveRecipients(
    customerId: string,
    contactIds: string[],
    groupIds: string[],
  ): Promise<Recipient[]> {
    const wantedContacts = [...new Set(contactIds)];
    const wantedGroups = [...new Set(groupIds)];
    const [contacts, groups] = await Promise.all([
      this.repo.activeContacts(customerId, wantedContacts),
      this.repo.groupsByIds(customerId, wantedGroups),
    ]);
    const byId = new Map(contacts.map((c) => [c.id, c]));
    const missingContact = wantedContacts.find((id) => !byId.has(id));
    if (missingContact !== undefined) throw contactsErrors.contactNotFound(missingContact);
    const knownGroups = new Set(groups.map((g) => g.id));
    const missingGroup = wantedGroups.find((id) => !knownGroups.has(id));
    if (missingGroup !== undefined) throw contactsErrors.groupNotFound(missingGroup);

    const out: Recipient[] = [];
    const phones = new Set<string>();
    const take = (phone: string | null, contactId: string) => {
      if (!phone || phones.has(phone)) return;
      phones.add(phone);
      out.push({ phone, contactId });
    };
    for (const id of wantedContacts) take(byId.get(id)!.phone_number, id);
    const members = await this.repo.phonesOfGroups(customerId, wantedGroups);
    for (const groupId of wantedGroups) {
      for (const m of members) if (m.group_id === groupId) take(m.phone_number, m.id);
    }
    return out;
  }

  /** The active contact with this number (the oldest when several share it), for inbound messages. */
  async findByPhone(customerId: string, phone: string): Promise<ContactView | null> {
    const e164 = toE164(phone) ?? phone;
    const row = await this.repo.contactByPhone(customerId, e164);
    return row ? contactView(row) : null;
  }

  // Contacts

  async listContacts(
    customerId: string,
    q: { type?: ContactType; text?: string; tags?: string; sort?: string; page: number; perPage: number },
  ) {
    const sortKey = q.sort ?? 'name';
    const desc = sortKey.startsWith('-');
    const field = desc ? sortKey.slice(1) : sortKey;
    const column: SortColumn = field === 'name' ? 'sort_name' : (field as SortColumn);
    const tagKeys = [...new Set((q.tags ?? '').split(',').map((t) => fold(t.trim())))].filter(Boolean);
    const text = q.text?.trim() ? fold(q.text.trim()) : undefined;
    const { rows, total } = await this.repo.listContacts(
      customerId,
      { type: q.type, text, tagKeys },
      { column, desc },
      q.perPage,
      (q.page - 1) * q.perPage,
    );
    return { contacts: rows.map(contactView), total, page: q.page, per_page: q.perPage };
  }

  async getContact(customerId: string, id: string): Promise<ContactView> {
    const row = await this.repo.activeContact(customerId, id);
    if (!row) throw contactsErrors.contactNotFound();
    return contactView(row);
  }

  async createContact(customerId: string, actor: Credential, input: ContactInput & { name: string }) {
    const now = this.clock.nowMs();
    const tags = cleanTags(input.tags);
    const base = {
      name: input.name.trim(),
      company_name: emptyToNull(input.company_name) ?? null,
      phone_number: this.phone(input.phone_number) ?? null,
      email: emptyToNull(input.email) ?? null,
    };
    const row: ContactsTable = {
      id: newId(),
      customer_id: customerId,
      type: input.type ?? 'person',
      ...base,
      notes: input.notes ?? null,
      tags: toJson(tags),
      ...derived(base),
      created_at: now,
      updated_at: now,
      deleted_at: null,
      anonymized_at: null,
    };
    await this.data.run([], (repo) => repo.insertContact(row, tags.map(fold)));
    await this.record(customerId, actor, 'contact.created', 'contact', row.id);
    return contactView(row);
  }

  /** Changes only the fields present in `input`; `null` clears a field that may be empty. */
  async updateContact(customerId: string, actor: Credential, id: string, input: ContactInput) {
    const current = await this.repo.activeContact(customerId, id);
    if (!current) throw contactsErrors.contactNotFound();
    const patch: Partial<ContactsTable> = {};
    if (input.name !== undefined) patch.name = input.name.trim();
    if (input.type !== undefined) patch.type = input.type;
    if (input.company_name !== undefined) patch.company_name = emptyToNull(input.company_name) ?? null;
    if (input.phone_number !== undefined) patch.phone_number = this.phone(input.phone_number) ?? null;
    if (input.email !== undefined) patch.email = emptyToNull(input.email) ?? null;
    if (input.notes !== undefined) patch.notes = input.notes;
    let tagKeys: string[] | undefined;
    if (input.tags !== undefined) {
      const tags = cleanTags(input.tags);
      patch.tags = toJson(tags);
      tagKeys = tags.map(fold);
    }
    if (Object.keys(patch).length === 0) return contactView(current);
    const next = { ...current, ...patch, updated_at: this.clock.nowMs() };
    Object.assign(patch, derived(next), { updated_at: next.updated_at });
    if (!(await this.data.run([], (repo) => repo.updateContact(customerId, id, patch, tagKeys))))
      throw contactsErrors.contactNotFound();
    await this.record(customerId, actor, 'contact.updated', 'contact', id, { fields: Object.keys(input) });
    return contactView(next);
  }

  /** Soft delete: the contact leaves lists, groups and sending, but its data stays until erased. */
  async deleteContact(customerId: string, actor: Credential, id: string) {
    const now = this.clock.nowMs();
    if (!(await this.repo.softDelete(customerId, id, now))) throw contactsErrors.contactNotFound();
    await this.record(customerId, actor, 'contact.deleted', 'contact', id);
    return { id, deleted: true as const, deleted_at: iso(now) };
  }

  /**
   * GDPR erasure (Art. 17): the listeners forget the number first — so that a failure leaves the
   * contact intact and the call can be repeated — then every personal field, the tags and the
   * group memberships go in one transaction. Deleted contacts can be erased too; erasing an
   * erased contact answers the first erasure again.
   */
  async gdprDelete(customerId: string, actor: Credential, id: string, reason: string) {
    const row = await this.repo.anyContact(customerId, id);
    if (!row) throw contactsErrors.contactNotFound();
    if (row.anonymized_at !== null) {
      return { id, status: 'anonymized' as const, anonymized_at: iso(row.anonymized_at), groups_removed: 0 };
    }
    for (const listener of this.erasureListeners) {
      try {
        await listener({ customerId, contactId: id, phone: row.phone_number });
      } catch (err) {
        throw contactsErrors.erasureIncomplete(err);
      }
    }
    const now = this.clock.nowMs();
    const removed = await this.data.run([], (repo) => repo.anonymize(customerId, id, now));
    if (removed === null) {
      // Erased by a concurrent call in the meantime.
      const again = await this.repo.anyContact(customerId, id);
      return {
        id,
        status: 'anonymized' as const,
        anonymized_at: iso(again?.anonymized_at ?? now),
        groups_removed: 0,
      };
    }
    // The reason is kept for the controller's records; no personal data goes into the audit entry.
    await this.record(customerId, actor, 'contact.gdpr_deleted', 'contact', id, {
      reason: reason.trim(),
      groups_removed: removed,
    });
    return { id, status: 'anonymized' as const, anonymized_at: iso(now), groups_removed: removed };
  }

  private phone(value: string | null | undefined): string | null | undefined {
    if (value === undefined || value === null) return value;
    const e164 = toE164(value);
    if (!e164) throw contactsErrors.invalidPhone(value);
    return e164;
  }

  private readonly record: AuditRecorder = async (
    customerId,
    actor,
    action,
    resourceType,
    resourceId,
    details,
  ) => {
    await this.audit.record({
      customerId,
      area: 'contacts',
      action,
      resourceType,
      resourceId,
      actor: { kind: actor.kind, id: actor.id },
      details,
    });
  };
}
