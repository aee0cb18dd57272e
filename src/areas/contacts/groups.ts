import type { Credential } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import { insertUnique } from '../../kernel/store/dialect.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import { contactsErrors } from './errors.js';
import type { ContactGroupsTable } from './migrations.js';
import type { ContactsRepo, GroupRow } from './repo.js';
import { fold, iso } from './views.js';

export type AuditRecorder = (
  customerId: string,
  actor: Credential,
  action: string,
  resourceType: string,
  resourceId: string,
  details?: Record<string, unknown>,
) => Promise<void>;

export interface GroupView {
  id: string;
  name: string;
  description: string | null;
  member_count: number;
  created_at: string;
}

const groupView = (g: GroupRow): GroupView => ({
  id: g.id,
  name: g.name,
  description: g.description,
  member_count: g.member_count,
  created_at: iso(g.created_at),
});

/**
 * Contact groups. Names are unique per customer (compared case-insensitively) so that a group
 * can be told apart by name in a picker; a group holds active contacts only — deleting a
 * contact hides it from its groups, erasing it removes the memberships, and deleting a group
 * keeps its contacts.
 */
export class ContactGroups {
  private readonly repo: ContactsRepo;
  constructor(
    private readonly data: Units<ContactsRepo>,
    private readonly clock: Clock,
    private readonly record: AuditRecorder,
  ) {
    this.repo = data.read;
  }

  async list(customerId: string) {
    return { groups: (await this.repo.groups(customerId)).map(groupView) };
  }

  async get(customerId: string, id: string): Promise<GroupView> {
    const g = await this.repo.group(customerId, id);
    if (!g) throw contactsErrors.groupNotFound();
    return groupView(g);
  }

  async create(customerId: string, actor: Credential, input: { name: string; description?: string | null }) {
    const now = this.clock.nowMs();
    const name = input.name.trim();
    const row: ContactGroupsTable = {
      id: newId(),
      customer_id: customerId,
      name,
      name_key: fold(name),
      description: input.description ?? null,
      created_at: now,
      updated_at: now,
    };
    await insertUnique(
      () => this.repo.insertGroup(row),
      () => contactsErrors.groupNameTaken(name),
    );
    await this.record(customerId, actor, 'contact_group.created', 'contact_group', row.id);
    return groupView({ ...row, member_count: 0 });
  }

  async update(
    customerId: string,
    actor: Credential,
    id: string,
    input: { name?: string; description?: string | null },
  ) {
    const patch: Parameters<ContactsRepo['updateGroup']>[2] = {};
    if (input.name !== undefined) {
      patch.name = input.name.trim();
      patch.name_key = fold(patch.name);
    }
    if (input.description !== undefined) patch.description = input.description;
    if (Object.keys(patch).length > 0) {
      patch.updated_at = this.clock.nowMs();
      const found = await insertUnique(
        () => this.repo.updateGroup(customerId, id, patch),
        () => contactsErrors.groupNameTaken(patch.name ?? ''),
      );
      if (!found) throw contactsErrors.groupNotFound();
      await this.record(customerId, actor, 'contact_group.updated', 'contact_group', id, {
        fields: Object.keys(input),
      });
    }
    return this.get(customerId, id);
  }

  async delete(customerId: string, actor: Credential, id: string) {
    const removed = await this.data.run([], (repo) => repo.deleteGroup(customerId, id));
    if (removed === null) throw contactsErrors.groupNotFound();
    await this.record(customerId, actor, 'contact_group.deleted', 'contact_group', id, {
      members_removed: removed,
    });
    return { id, deleted: true as const, members_removed: removed };
  }

  async members(customerId: string, groupId: string, page: number, perPage: number) {
    await this.get(customerId, groupId);
    const { rows, total } = await this.repo.members(groupId, perPage, (page - 1) * perPage);
    return {
      members: rows.map((r) => ({
        id: r.id,
        type: r.type as 'person' | 'company',
        name: r.name ?? '',
        company_name: r.company_name,
        phone_number: r.phone_number,
        email: r.email,
        added_at: iso(r.added_at),
      })),
      total,
      page,
      per_page: perPage,
    };
  }

  /**
   * Adds contacts to a group in one statement; contacts already in it are skipped and not
   * counted. Every id must be an active contact of the customer, else nothing is added.
   */
  async addMembers(customerId: string, actor: Credential, groupId: string, contactIds: string[]) {
    await this.get(customerId, groupId);
    const wanted = [...new Set(contactIds)];
    const found = new Set((await this.repo.activeContacts(customerId, wanted)).map((c) => c.id));
    const missing = wanted.find((id) => !found.has(id));
    if (missing !== undefined) throw contactsErrors.contactNotFound(missing);
    const added = await this.repo.addMembers(customerId, groupId, wanted, this.clock.nowMs());
    if (added === null) throw contactsErrors.groupNotFound();
    if (added > 0) {
      await this.record(customerId, actor, 'contact_group.members_added', 'contact_group', groupId, {
        added,
      });
    }
    return { added };
  }

  async removeMember(customerId: string, actor: Credential, groupId: string, contactId: string) {
    await this.get(customerId, groupId);
    const contact = await this.repo.activeContact(customerId, contactId);
    if (!contact || !(await this.repo.removeMember(groupId, contactId))) {
      throw contactsErrors.memberNotFound(groupId, contactId);
    }
    await this.record(customerId, actor, 'contact_group.member_removed', 'contact_group', groupId, {
      contact_id: contactId,
    });
    return { group_id: groupId, contact_id: contactId, removed: true as const };
  }
}
