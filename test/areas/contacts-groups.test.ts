import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContactsService } from '../../src/areas/contacts/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer();
});
afterAll(() => t.close());

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const req = (method: string, url: string, body?: unknown, key = a.pat) =>
  t.request(method, url, { key, body });
const contact = async (name: string, extra: Record<string, unknown> = {}, key = a.pat) => {
  const r = await req('POST', '/v1/contacts', { name, ...extra }, key);
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; name: string };
};
const group = async (name: string, description?: string | null, key = a.pat) => {
  const r = await req(
    'POST',
    '/v1/contacts/groups',
    { name, ...(description !== undefined ? { description } : {}) },
    key,
  );
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; name: string };
};
const addMembers = (groupId: string, contact_ids: string[], key = a.pat) =>
  req('POST', `/v1/contacts/groups/${groupId}/members`, { contact_ids }, key);

describe('groups', () => {
  it('creates a group with the spec fields', async () => {
    const r = await req('POST', '/v1/contacts/groups', { name: 'Kunder', description: 'Alle kunder' });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      name: 'Kunder',
      description: 'Alle kunder',
      member_count: 0,
      created_at: expect.stringMatching(ISO),
    });
    expect((await req('GET', `/v1/contacts/groups/${r.body.id}`)).body).toEqual(r.body);
  });

  it('validates the name and keeps names unique, case-insensitively', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: '  ' },
      { name: 'x'.repeat(101) },
      { name: 'ok', extra: 1 },
    ]) {
      expect((await req('POST', '/v1/contacts/groups', body)).status, JSON.stringify(body)).toBe(422);
    }
    await group('Unique Name');
    const dup = await req('POST', '/v1/contacts/groups', { name: ' unique name ' });
    expect(dup.status).toBe(409);
    expect(dup.body.detail.code).toBe('group_name_taken');
  });

  it('lists {groups} by name with member counts', async () => {
    const c = await t.customer();
    const g1 = await group('Beta', null, c.pat);
    const g2 = await group('alpha', 'first', c.pat);
    const x = await contact('X', {}, c.pat);
    const y = await contact('Y', {}, c.pat);
    expect((await addMembers(g1.id, [x.id, y.id], c.pat)).body).toEqual({ added: 2 });
    const r = await req('GET', '/v1/contacts/groups', undefined, c.pat);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      groups: [
        {
          id: g2.id,
          name: 'alpha',
          description: 'first',
          member_count: 0,
          created_at: expect.stringMatching(ISO),
        },
        {
          id: g1.id,
          name: 'Beta',
          description: null,
          member_count: 2,
          created_at: expect.stringMatching(ISO),
        },
      ],
    });
  });

  it('changes only the fields sent, and refuses a taken name', async () => {
    const g = await group('Rename Me', 'keep');
    const r = await req('PATCH', `/v1/contacts/groups/${g.id}`, { name: 'Renamed' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: g.id, name: 'Renamed', description: 'keep' });
    const d = await req('PATCH', `/v1/contacts/groups/${g.id}`, { description: null });
    expect(d.body).toMatchObject({ name: 'Renamed', description: null });
    // Its own name in another case is not a conflict with itself.
    expect((await req('PATCH', `/v1/contacts/groups/${g.id}`, { name: 'RENAMED' })).status).toBe(200);
    await group('Taken');
    const clash = await req('PATCH', `/v1/contacts/groups/${g.id}`, { name: 'taken' });
    expect(clash.status).toBe(409);
    expect((await req('GET', `/v1/contacts/groups/${g.id}`)).body.name).toBe('RENAMED');
    expect((await req('PATCH', `/v1/contacts/groups/${g.id}`, { name: '' })).status).toBe(422);
    expect((await req('PATCH', '/v1/contacts/groups/nope', { name: 'x' })).status).toBe(404);
  });

  it('deletes a group and keeps its contacts', async () => {
    const g = await group('Short Lived');
    const c1 = await contact('Stays One');
    const c2 = await contact('Stays Two');
    await addMembers(g.id, [c1.id, c2.id]);
    const r = await req('DELETE', `/v1/contacts/groups/${g.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: g.id, deleted: true, members_removed: 2 });
    expect((await req('GET', `/v1/contacts/groups/${g.id}`)).status).toBe(404);
    expect((await req('GET', `/v1/contacts/groups/${g.id}/members`)).status).toBe(404);
    expect((await req('DELETE', `/v1/contacts/groups/${g.id}`)).status).toBe(404);
    for (const c of [c1, c2]) expect((await req('GET', `/v1/contacts/${c.id}`)).status).toBe(200);
    // The name is free again.
    await group('Short Lived');
  });

  it('answers group_not_found for an unknown group', async () => {
    const r = await req('GET', '/v1/contacts/groups/unknown');
    expect(r.status).toBe(404);
    expect(r.body.detail.code).toBe('group_not_found');
  });
});

describe('members', () => {
  it('adds in bulk, counting only the contacts that were not members yet', async () => {
    const g = await group('Bulk');
    const cs = [];
    for (let i = 0; i < 5; i++) cs.push(await contact(`Member ${i}`, { phone_number: `+479000010${i}` }));
    expect((await addMembers(g.id, [cs[0]!.id, cs[1]!.id, cs[0]!.id])).body).toEqual({ added: 2 });
    const again = await addMembers(
      g.id,
      cs.map((c) => c.id),
    );
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ added: 3 });
    expect((await addMembers(g.id, [cs[4]!.id])).body).toEqual({ added: 0 });
    expect((await req('GET', `/v1/contacts/groups/${g.id}`)).body.member_count).toBe(5);
  });

  it('adds the most ids one request takes (1000) and sends to all of them', async () => {
    const contacts = t.fjord.areas.get('contacts')!.service as ContactsService;
    const actor = { kind: 'pat' as const, id: 'bulk-test', scopes: [], expiresAt: null };
    const ids: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const phone = `+4795${String(i).padStart(6, '0')}`;
      ids.push((await contacts.createContact(a.id, actor, { name: `Bulk ${i}`, phone_number: phone })).id);
    }
    const g = await group('Thousand');
    const r = await addMembers(g.id, ids);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ added: 1000 });
    expect((await req('GET', `/v1/contacts/groups/${g.id}`)).body.member_count).toBe(1000);
    const members = await req('GET', `/v1/contacts/groups/${g.id}/members`);
    expect(members.body.members).toHaveLength(1000);
    const recipients = await contacts.resolveRecipients(a.id, ids.slice(0, 1500), [g.id]);
    expect(recipients).toHaveLength(1000);
    expect(new Set(recipients.map((x) => x.phone)).size).toBe(1000);
  });

  it('adds nothing when one id is unknown, and names it', async () => {
    const g = await group('Atomic');
    const c = await contact('Known');
    const other = await t.customer();
    const foreign = await contact('Foreign', {}, other.pat);
    for (const bad of ['no-such-contact', foreign.id]) {
      const r = await addMembers(g.id, [c.id, bad]);
      expect(r.status).toBe(404);
      expect(r.body.detail.code).toBe('contact_not_found');
      expect(r.body.detail.message).toContain(bad);
    }
    expect((await req('GET', `/v1/contacts/groups/${g.id}`)).body.member_count).toBe(0);
  });

  it('refuses a deleted contact, an empty list and more than 1000 ids', async () => {
    const g = await group('Limits');
    const c = await contact('Deleted Member');
    await req('DELETE', `/v1/contacts/${c.id}`);
    expect((await addMembers(g.id, [c.id])).status).toBe(404);
    expect((await addMembers(g.id, [])).status).toBe(422);
    expect(
      (
        await addMembers(
          g.id,
          Array.from({ length: 1001 }, (_, i) => `id${i}`),
        )
      ).status,
    ).toBe(422);
    expect((await req('POST', `/v1/contacts/groups/${g.id}/members`, {})).status).toBe(422);
    expect((await addMembers('unknown-group', [c.id])).status).toBe(404);
  });

  it('lists {members} as contact summaries in joining order', async () => {
    const g = await group('Listing');
    const first = await contact('Zed First', {
      phone_number: '+4790000201',
      email: 'z@example.test',
      notes: 'n',
    });
    await t.advance(1);
    const second = await contact('Adam Second', { type: 'company', company_name: 'Adam AS' });
    await addMembers(g.id, [first.id]);
    await t.advance(1);
    await addMembers(g.id, [second.id]);
    const r = await req('GET', `/v1/contacts/groups/${g.id}/members`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      members: [
        {
          id: first.id,
          type: 'person',
          name: 'Zed First',
          company_name: null,
          phone_number: '+4790000201',
          email: 'z@example.test',
          added_at: expect.stringMatching(ISO),
        },
        {
          id: second.id,
          type: 'company',
          name: 'Adam Second',
          company_name: 'Adam AS',
          phone_number: null,
          email: null,
          added_at: expect.stringMatching(ISO),
        },
      ],
      total: 2,
      page: 1,
      per_page: 1000,
    });
    const p2 = await t.request('GET', `/v1/contacts/groups/${g.id}/members`, {
      key: a.pat,
      query: { per_page: '1', page: '2' },
    });
    expect(p2.body.members.map((m: { id: string }) => m.id)).toEqual([second.id]);
    expect(p2.body.total).toBe(2);
  });

  it('removes members one by one; the contact stays', async () => {
    const g = await group('Removal');
    const c = await contact('Removable');
    await addMembers(g.id, [c.id]);
    const r = await req('DELETE', `/v1/contacts/groups/${g.id}/members/${c.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ group_id: g.id, contact_id: c.id, removed: true });
    expect((await req('GET', `/v1/contacts/groups/${g.id}`)).body.member_count).toBe(0);
    expect((await req('GET', `/v1/contacts/${c.id}`)).status).toBe(200);
    const again = await req('DELETE', `/v1/contacts/groups/${g.id}/members/${c.id}`);
    expect(again.status).toBe(404);
    expect(again.body.detail.code).toBe('member_not_found');
    expect((await req('DELETE', `/v1/contacts/groups/unknown/members/${c.id}`)).status).toBe(404);
  });

  it('hides deleted contacts from members and counts, and erasure removes the membership', async () => {
    const g = await group('Hidden');
    const kept = await contact('Kept');
    const deleted = await contact('Deleted');
    const erased = await contact('Erased');
    await addMembers(g.id, [kept.id, deleted.id, erased.id]);
    await req('DELETE', `/v1/contacts/${deleted.id}`);
    await req('POST', `/v1/contacts/${erased.id}/gdpr-delete`, { reason: 'asked' });
    const r = await req('GET', `/v1/contacts/groups/${g.id}/members`);
    expect(r.body.members.map((m: { id: string }) => m.id)).toEqual([kept.id]);
    expect(r.body.total).toBe(1);
    expect((await req('GET', `/v1/contacts/groups/${g.id}`)).body.member_count).toBe(1);
  });
});
