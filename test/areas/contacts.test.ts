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
const create = (body: unknown, key = a.pat) => t.request('POST', '/v1/contacts', { key, body });
const list = (query: Record<string, string> = {}, key = a.pat) =>
  t.request('GET', '/v1/contacts', { key, query });
const service = () => t.fjord.areas.get('contacts')!.service as ContactsService;

describe('creating contacts', () => {
  it('answers the contact with every spec field, defaults filled', async () => {
    const r = await create({ name: 'Kari Nordmann' });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      type: 'person',
      name: 'Kari Nordmann',
      company_name: null,
      phone_number: null,
      email: null,
      tags: [],
      notes: null,
      created_at: expect.stringMatching(ISO),
      updated_at: r.body.created_at,
    });
  });

  it('keeps every field given, the number in E.164 and the tags de-duplicated', async () => {
    const r = await create({
      name: '  Fjordline AS ',
      type: 'company',
      company_name: 'Fjordline AS',
      phone_number: '+47 912 34 567',
      email: 'post@fjordline.example',
      tags: ['Kunde', ' kunde ', 'Bergen', 'KUNDE'],
      notes: 'Ring før kl. 16',
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({
      type: 'company',
      name: 'Fjordline AS',
      company_name: 'Fjordline AS',
      phone_number: '+4791234567',
      email: 'post@fjordline.example',
      tags: ['Kunde', 'Bergen'],
      notes: 'Ring før kl. 16',
    });
    const got = await t.request('GET', `/v1/contacts/${r.body.id}`, { key: a.pat });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
  });

  it.each([
    ['+4712345', 'too short for Norway'],
    ['4791234567', 'no leading +'],
    ['+47 CALL NOW', 'letters'],
    ['+999123456', 'no such country'],
    ['   ', 'blank'],
  ])('refuses the phone number %j (%s)', async (phone) => {
    const r = await create({ name: 'X', phone_number: phone });
    expect(r.status, r.text).toBe(422);
    expect(r.body.detail.code).toBe('invalid_phone_number');
    expect(r.body.detail.errors[0].path).toBe('/body/phone_number');
  });

  it('accepts numbers of other countries and stores them in E.164', async () => {
    for (const [input, e164] of [
      ['+1 (202) 555-0143', '+12025550143'],
      ['+46 70-123 45 67', '+46701234567'],
      ['+44 7911 123456', '+447911123456'],
    ] as const) {
      const r = await create({ name: 'Abroad', phone_number: input });
      expect(r.status, input).toBe(201);
      expect(r.body.phone_number).toBe(e164);
    }
  });

  it.each([
    [{}, '/body/name'],
    [{ name: '' }, '/body/name'],
    [{ name: '   ' }, '/body/name'],
    [{ name: 'x'.repeat(201) }, '/body/name'],
    [{ name: 'X', type: 'robot' }, '/body/type'],
    [{ name: 'X', email: 'not an address' }, '/body/email'],
    [{ name: 'X', tags: 'vip' }, '/body/tags'],
    [{ name: 'X', tags: [''] }, '/body/tags/0'],
    [{ name: 'X', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, '/body/tags'],
    [{ name: 'X', notes: 'n'.repeat(10_001) }, '/body/notes'],
    [{ name: 'X', colour: 'red' }, '/body/colour'],
    [{ name: 'X', phone_number: '' }, '/body/phone_number'],
  ])('refuses %j with a 422 naming %s', async (body, path) => {
    const r = await create(body);
    expect(r.status, r.text).toBe(422);
    expect(r.body.detail.errors.map((e: { path: string }) => e.path)).toContain(path);
  });
});

describe('retrying a creation', () => {
  it('replays the first answer for the same Idempotency-Key, making one contact', async () => {
    const send = () =>
      t.request('POST', '/v1/contacts', {
        key: a.pat,
        body: { name: 'Only Once', tags: ['idem'] },
        headers: { 'idempotency-key': 'contact-once-1' },
      });
    const first = await send();
    const second = await send();
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect((await list({ tags: 'idem' })).body.total).toBe(1);
  });
});

describe('changing contacts (PATCH)', () => {
  it('changes only the fields sent', async () => {
    const c = (
      await create({
        name: 'Per Hansen',
        phone_number: '+4798765432',
        email: 'per@example.test',
        tags: ['a'],
        notes: 'old',
      })
    ).body;
    await t.advance(60);
    const r = await t.request('PATCH', `/v1/contacts/${c.id}`, { key: a.pat, body: { notes: 'new' } });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ ...c, notes: 'new', updated_at: expect.stringMatching(ISO) });
    expect(Date.parse(r.body.updated_at) - Date.parse(c.updated_at)).toBeGreaterThanOrEqual(60_000);
    const got = await t.request('GET', `/v1/contacts/${c.id}`, { key: a.pat });
    expect(got.body).toEqual(r.body);
  });

  it('clears nullable fields with null and replaces the tags', async () => {
    const c = (
      await create({
        name: 'Clear Me',
        phone_number: '+4798765432',
        email: 'c@example.test',
        tags: ['x', 'y'],
      })
    ).body;
    const r = await t.request('PATCH', `/v1/contacts/${c.id}`, {
      key: a.pat,
      body: { email: null, phone_number: null, company_name: null, tags: ['z'], type: 'company' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      email: null,
      phone_number: null,
      tags: ['z'],
      type: 'company',
      name: 'Clear Me',
    });
    expect((await list({ tags: 'x', q: 'clear me' })).body.total).toBe(0);
    expect((await list({ tags: 'z', q: 'clear me' })).body.total).toBe(1);
  });

  it('refuses a bad value and changes nothing', async () => {
    const c = (await create({ name: 'Stays', phone_number: '+4798765432' })).body;
    for (const body of [
      { phone_number: '12345' },
      { name: null },
      { type: null },
      { name: '' },
      { email: 'x' },
    ]) {
      const r = await t.request('PATCH', `/v1/contacts/${c.id}`, { key: a.pat, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
    }
    const got = await t.request('GET', `/v1/contacts/${c.id}`, { key: a.pat });
    expect(got.body).toEqual(c);
  });

  it('answers the contact unchanged for an empty body', async () => {
    const c = (await create({ name: 'Same' })).body;
    const r = await t.request('PATCH', `/v1/contacts/${c.id}`, { key: a.pat, body: {} });
    expect(r.status).toBe(200);
    expect(r.body).toEqual(c);
  });

  it('answers 404 for an unknown contact', async () => {
    const r = await t.request('PATCH', '/v1/contacts/nope', { key: a.pat, body: { notes: 'x' } });
    expect(r.status).toBe(404);
    expect(r.body.detail.code).toBe('contact_not_found');
  });
});

describe('listing contacts', () => {
  let c: TestCustomer;
  beforeAll(async () => {
    c = await t.customer();
    const people = [
      { name: 'Øyvind Ås', phone_number: '+4741234567', tags: ['Oslo', 'vip'] },
      { name: 'Anna Berg', email: 'anna@berg.example', tags: ['bergen'] },
      { name: 'berit 100%', tags: ['vip'] },
      { name: 'Nordic Ferries', type: 'company', company_name: 'Nordic Ferries ASA', tags: ['Oslo'] },
      { name: 'Carl Dahl', phone_number: '+46701234567' },
    ];
    for (const p of people) {
      const r = await create(p, c.pat);
      expect(r.status).toBe(201);
      await t.advance(1);
    }
  });

  const names = (r: { body: { contacts: { name: string }[] } }) => r.body.contacts.map((x) => x.name);

  it('answers {contacts, total, page, per_page}, sorted by name', async () => {
    const r = await list({}, c.pat);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['contacts', 'page', 'per_page', 'total']);
    expect(r.body).toMatchObject({ total: 5, page: 1, per_page: 50 });
    expect(names(r)).toEqual(['Anna Berg', 'berit 100%', 'Carl Dahl', 'Nordic Ferries', 'Øyvind Ås']);
  });

  it('filters by type', async () => {
    expect(names(await list({ type: 'company' }, c.pat))).toEqual(['Nordic Ferries']);
    expect((await list({ type: 'person' }, c.pat)).body.total).toBe(4);
    expect((await list({ type: 'alien' }, c.pat)).status).toBe(422);
  });

  it('searches name, company, e-mail and number, case-insensitively beyond ASCII', async () => {
    expect(names(await list({ q: 'øyvind' }, c.pat))).toEqual(['Øyvind Ås']);
    expect(names(await list({ q: 'ÅS' }, c.pat))).toEqual(['Øyvind Ås']);
    expect(names(await list({ q: 'ferries asa' }, c.pat))).toEqual(['Nordic Ferries']);
    expect(names(await list({ q: 'BERG.EXAMPLE' }, c.pat))).toEqual(['Anna Berg']);
    expect(names(await list({ q: '4123' }, c.pat))).toEqual(['Øyvind Ås']);
    expect(names(await list({ q: '+4670' }, c.pat))).toEqual(['Carl Dahl']);
    expect(names(await list({ search: 'dahl' }, c.pat))).toEqual(['Carl Dahl']);
  });

  it('takes % and _ in the search text literally', async () => {
    expect(names(await list({ q: '100%' }, c.pat))).toEqual(['berit 100%']);
    expect((await list({ q: '%' }, c.pat)).body.total).toBe(1);
    expect((await list({ q: '_' }, c.pat)).body.total).toBe(0);
  });

  it('filters by tags: every tag listed, case-insensitively', async () => {
    expect(names(await list({ tags: 'vip' }, c.pat))).toEqual(['berit 100%', 'Øyvind Ås']);
    expect(names(await list({ tags: 'OSLO' }, c.pat))).toEqual(['Nordic Ferries', 'Øyvind Ås']);
    expect(names(await list({ tags: 'oslo,vip' }, c.pat))).toEqual(['Øyvind Ås']);
    expect(names(await list({ tags: 'oslo, bergen' }, c.pat))).toEqual([]);
    expect(names(await list({ tags: 'vip', q: 'berit', type: 'person' }, c.pat))).toEqual(['berit 100%']);
  });

  it('pages with page and per_page; a page past the end is empty', async () => {
    const p1 = await list({ per_page: '2' }, c.pat);
    const p2 = await list({ per_page: '2', page: '2' }, c.pat);
    const p3 = await list({ per_page: '2', page: '3' }, c.pat);
    const p9 = await list({ per_page: '2', page: '9' }, c.pat);
    expect(p1.body).toMatchObject({ total: 5, page: 1, per_page: 2 });
    expect([...names(p1), ...names(p2), ...names(p3)]).toEqual(names(await list({}, c.pat)));
    expect(p9.body).toMatchObject({ contacts: [], total: 5, page: 9 });
    expect((await list({ per_page: '201' }, c.pat)).status).toBe(422);
    expect((await list({ page: '0' }, c.pat)).status).toBe(422);
  });

  it('sorts by creation or change time when asked', async () => {
    expect(names(await list({ sort: '-created_at' }, c.pat))[0]).toBe('Carl Dahl');
    expect(names(await list({ sort: 'created_at' }, c.pat))[0]).toBe('Øyvind Ås');
    expect(names(await list({ sort: '-name' }, c.pat))[0]).toBe('Øyvind Ås');
    expect((await list({ sort: 'phone' }, c.pat)).status).toBe(422);
  });
});

describe('deleting contacts (soft delete)', () => {
  it('hides the contact everywhere but keeps its data until erased', async () => {
    const c = (await create({ name: 'Soft Gone', phone_number: '+4790000001', tags: ['soft'] })).body;
    const r = await t.request('DELETE', `/v1/contacts/${c.id}`, { key: a.pat });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ id: c.id, deleted: true, deleted_at: expect.stringMatching(ISO) });
    expect((await t.request('GET', `/v1/contacts/${c.id}`, { key: a.pat })).status).toBe(404);
    expect(
      (await t.request('PATCH', `/v1/contacts/${c.id}`, { key: a.pat, body: { notes: 'x' } })).status,
    ).toBe(404);
    expect((await t.request('DELETE', `/v1/contacts/${c.id}`, { key: a.pat })).status).toBe(404);
    expect((await list({ tags: 'soft' })).body.total).toBe(0);
    expect(await service().findByPhone(a.id, '+4790000001')).toBeNull();
    // Soft: the row and its data are still there.
    const row = await t.kernel.store.db
      .selectFrom('contacts')
      .selectAll()
      .where('id', '=', c.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name: 'Soft Gone', phone_number: '+4790000001', anonymized_at: null });
    expect(row.deleted_at).not.toBeNull();
  });
});

describe('gdpr-delete', () => {
  async function rowsOf(id: string) {
    const db = t.kernel.store.db;
    return {
      contact: await db.selectFrom('contacts').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
      tags: await db.selectFrom('contact_tags').selectAll().where('contact_id', '=', id).execute(),
      members: await db
        .selectFrom('contact_group_members')
        .selectAll()
        .where('contact_id', '=', id)
        .execute(),
    };
  }

  it('needs a reason', async () => {
    const c = (await create({ name: 'Needs Reason' })).body;
    for (const body of [undefined, {}, { reason: '' }, { reason: '  ' }, { reason: 5 }]) {
      const r = await t.request('POST', `/v1/contacts/${c.id}/gdpr-delete`, { key: a.pat, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
    }
    expect((await t.request('GET', `/v1/contacts/${c.id}`, { key: a.pat })).status).toBe(200);
  });

  it('erases every personal field, the tags and the group memberships, for good', async () => {
    const c = (
      await create({
        name: 'Erase Me',
        type: 'company',
        company_name: 'Erase AS',
        phone_number: '+4790000002',
        email: 'erase@example.test',
        tags: ['gdpr', 'vip'],
        notes: 'secret',
      })
    ).body;
    const groups = [];
    for (const name of ['Erase group 1', 'Erase group 2']) {
      const g = (await t.request('POST', '/v1/contacts/groups', { key: a.pat, body: { name } })).body;
      await t.request('POST', `/v1/contacts/groups/${g.id}/members`, {
        key: a.pat,
        body: { contact_ids: [c.id] },
      });
      groups.push(g);
    }
    const r = await t.request('POST', `/v1/contacts/${c.id}/gdpr-delete`, {
      key: a.pat,
      body: { reason: 'Data subject request #42' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      id: c.id,
      status: 'anonymized',
      anonymized_at: expect.stringMatching(ISO),
      groups_removed: 2,
    });

    const rows = await rowsOf(c.id);
    expect(rows.contact).toMatchObject({
      name: null,
      company_name: null,
      phone_number: null,
      email: null,
      notes: null,
      tags: '[]',
      search_text: '',
      sort_name: '',
    });
    expect(JSON.stringify(rows.contact)).not.toMatch(/Erase|secret|90000002|gdpr|vip/);
    expect(rows.tags).toEqual([]);
    expect(rows.members).toEqual([]);

    expect((await t.request('GET', `/v1/contacts/${c.id}`, { key: a.pat })).status).toBe(404);
    expect((await list({ q: 'erase' })).body.total).toBe(0);
    for (const g of groups) {
      const got = await t.request('GET', `/v1/contacts/groups/${g.id}`, { key: a.pat });
      expect(got.body.member_count).toBe(0);
    }
    // Nothing can bring it back: PATCH and DELETE see no contact.
    expect(
      (await t.request('PATCH', `/v1/contacts/${c.id}`, { key: a.pat, body: { name: 'Back' } })).status,
    ).toBe(404);

    // The reason is on record; the personal data is not.
    const audit = await t.kernel.store.db
      .selectFrom('audit_events')
      .selectAll()
      .where('resource_id', '=', c.id)
      .where('action', '=', 'contact.gdpr_deleted')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(audit.details)).toEqual({ reason: 'Data subject request #42', groups_removed: 2 });

    // Repeating the request answers the first erasure.
    const again = await t.request('POST', `/v1/contacts/${c.id}/gdpr-delete`, {
      key: a.pat,
      body: { reason: 'retry' },
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...r.body, groups_removed: 0 });
  });

  it('erases a soft-deleted contact too', async () => {
    const c = (await create({ name: 'Deleted First', phone_number: '+4790000003' })).body;
    await t.request('DELETE', `/v1/contacts/${c.id}`, { key: a.pat });
    const r = await t.request('POST', `/v1/contacts/${c.id}/gdpr-delete`, {
      key: a.pat,
      body: { reason: 'asked' },
    });
    expect(r.status).toBe(200);
    expect((await rowsOf(c.id)).contact).toMatchObject({ name: null, phone_number: null });
  });

  it('tells the erasure listeners the number first, and erases nothing when one fails', async () => {
    const seen: unknown[] = [];
    let fail = true;
    service().onErase(async (e) => {
      seen.push(e);
      if (fail) throw new Error('history store down');
    });
    const c = (await create({ name: 'Listener', phone_number: '+4790000004' })).body;
    const failed = await t.request('POST', `/v1/contacts/${c.id}/gdpr-delete`, {
      key: a.pat,
      body: { reason: 'asked' },
    });
    expect(failed.status).toBe(503);
    expect(failed.body.detail.code).toBe('erasure_incomplete');
    expect((await t.request('GET', `/v1/contacts/${c.id}`, { key: a.pat })).body.phone_number).toBe(
      '+4790000004',
    );

    fail = false;
    const ok = await t.request('POST', `/v1/contacts/${c.id}/gdpr-delete`, {
      key: a.pat,
      body: { reason: 'asked' },
    });
    expect(ok.status).toBe(200);
    expect(seen).toEqual([
      { customerId: a.id, contactId: c.id, phone: '+4790000004' },
      { customerId: a.id, contactId: c.id, phone: '+4790000004' },
    ]);
    // An erased contact is not erased (or announced) twice.
    await t.request('POST', `/v1/contacts/${c.id}/gdpr-delete`, { key: a.pat, body: { reason: 'asked' } });
    expect(seen).toHaveLength(2);
  });

  it('answers 404 for an unknown contact', async () => {
    const r = await t.request('POST', '/v1/contacts/unknown/gdpr-delete', {
      key: a.pat,
      body: { reason: 'x' },
    });
    expect(r.status).toBe(404);
    expect(r.body.detail.code).toBe('contact_not_found');
  });
});
