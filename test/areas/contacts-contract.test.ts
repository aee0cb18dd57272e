import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContactsService } from '../../src/areas/contacts/service.js';
import { isAppError } from '../../src/kernel/errors.js';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_RATE_LIMITS: JSON.stringify({ contacts: { points: 40, duration: 60 } }),
  });
  a = await t.customer();
  b = await t.customer();
});
afterAll(() => t.close());

const service = () => t.fjord.areas.get('contacts')!.service as ContactsService;
const req = (method: string, url: string, body?: unknown, key = a.pat) =>
  t.request(method, url, { key, body });

describe('auth', () => {
  it('refuses missing, expired, revoked and wrong credentials on every route', async () => {
    await expectAuthMatrix(t, 'Contacts');
  });

  it('takes a contacts service key for reading and writing', async () => {
    const { key } = await t.kernel.identity.createServiceKey(a.id, 'contacts', null);
    const c = await req('POST', '/v1/contacts', { name: 'By Key' }, key);
    expect(c.status).toBe(201);
    expect((await req('GET', `/v1/contacts/${c.body.id}`, undefined, key)).status).toBe(200);
    expect((await req('POST', '/v1/contacts/groups', { name: 'By Key' }, key)).status).toBe(201);
  });

  it('takes an SMS key nowhere: contacts have their own service', async () => {
    const { key } = await t.kernel.identity.createServiceKey(a.id, 'sms', null);
    expect((await req('GET', '/v1/contacts', undefined, key)).status).toBe(403);
  });

  it('lets a contacts:read PAT read but not write; contacts:write does both', async () => {
    const reader = await t.kernel.identity.createPat(a.id, ['contacts:read'], 'reader');
    const writer = await t.kernel.identity.createPat(a.id, ['contacts:write'], 'writer');
    expect((await req('GET', '/v1/contacts', undefined, reader.key)).status).toBe(200);
    expect((await req('GET', '/v1/contacts/groups', undefined, reader.key)).status).toBe(200);
    expect((await req('POST', '/v1/contacts', { name: 'No' }, reader.key)).status).toBe(403);
    expect((await req('POST', '/v1/contacts/groups', { name: 'No' }, reader.key)).status).toBe(403);
    const made = await req('POST', '/v1/contacts', { name: 'Yes' }, writer.key);
    expect(made.status).toBe(201);
    expect((await req('GET', `/v1/contacts/${made.body.id}`, undefined, writer.key)).status).toBe(200);
    const erase = await req('POST', `/v1/contacts/${made.body.id}/gdpr-delete`, { reason: 'x' }, reader.key);
    expect(erase.status).toBe(403);
  });

  it('takes the key in X-API-Key only, as the spec states', async () => {
    const r = await t.request('GET', '/v1/contacts', { bearer: a.pat });
    expect(r.status).toBe(401);
  });
});

describe('tenant isolation', () => {
  it("answers 404 to another customer for each of a customer's contacts and groups", async () => {
    const c = (await req('POST', '/v1/contacts', { name: 'Private', phone_number: '+4790000301' })).body;
    const g = (await req('POST', '/v1/contacts/groups', { name: 'Private group' })).body;
    await req('POST', `/v1/contacts/groups/${g.id}/members`, { contact_ids: [c.id] });
    await expectTenantIsolation(t, { key: a.pat }, { key: b.pat }, [
      { method: 'GET', url: `/v1/contacts/${c.id}` },
      { method: 'PATCH', url: `/v1/contacts/${c.id}`, body: { name: 'Stolen' } },
      { method: 'DELETE', url: `/v1/contacts/${c.id}` },
      { method: 'POST', url: `/v1/contacts/${c.id}/gdpr-delete`, body: { reason: 'x' } },
      { method: 'GET', url: `/v1/contacts/groups/${g.id}` },
      { method: 'PATCH', url: `/v1/contacts/groups/${g.id}`, body: { name: 'Stolen' } },
      { method: 'DELETE', url: `/v1/contacts/groups/${g.id}` },
      { method: 'GET', url: `/v1/contacts/groups/${g.id}/members` },
      { method: 'POST', url: `/v1/contacts/groups/${g.id}/members`, body: { contact_ids: [c.id] } },
      { method: 'DELETE', url: `/v1/contacts/groups/${g.id}/members/${c.id}` },
    ]);
    // B's own group cannot take A's contact either.
    const bg = (await req('POST', '/v1/contacts/groups', { name: 'B group' }, b.pat)).body;
    expect(
      (await req('POST', `/v1/contacts/groups/${bg.id}/members`, { contact_ids: [c.id] }, b.pat)).status,
    ).toBe(404);
    // Lists and searches show only one's own.
    const listed = await req('GET', '/v1/contacts', undefined, b.pat);
    expect(listed.body.contacts.map((x: { id: string }) => x.id)).not.toContain(c.id);
    const groups = await req('GET', '/v1/contacts/groups', undefined, b.pat);
    expect(groups.body.groups.map((x: { id: string }) => x.id)).toEqual([bg.id]);
    // A's data is untouched.
    expect((await req('GET', `/v1/contacts/${c.id}`)).body).toMatchObject({
      name: 'Private',
      phone_number: '+4790000301',
    });
    expect((await req('GET', `/v1/contacts/groups/${g.id}`)).body).toMatchObject({
      name: 'Private group',
      member_count: 1,
    });
  });

  it('keeps the same group name free for each customer', async () => {
    expect((await req('POST', '/v1/contacts/groups', { name: 'Shared Name' })).status).toBe(201);
    expect((await req('POST', '/v1/contacts/groups', { name: 'Shared Name' }, b.pat)).status).toBe(201);
  });
});

describe('rate limit', () => {
  it('counts contacts requests in the contacts bucket and answers 429 past it', async () => {
    const c = await t.customer();
    const first = await req('GET', '/v1/contacts', undefined, c.pat);
    expect(first.headers['x-ratelimit-limit']).toBe('40');
    let last = first;
    for (let i = 0; i < 40 && last.status !== 429; i++)
      last = await req('GET', '/v1/contacts/groups', undefined, c.pat);
    expect(last.status).toBe(429);
    expect(last.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('the service other areas use', () => {
  let ids: Record<string, string>;
  let groups: Record<string, string>;
  beforeAll(async () => {
    ids = {};
    for (const [name, phone] of [
      ['one', '+4791000001'],
      ['two', '+4791000002'],
      ['twin', '+4791000001'],
      ['nophone', null],
      ['gone', '+4791000009'],
    ] as const) {
      const r = await req('POST', '/v1/contacts', { name: `svc ${name}`, phone_number: phone });
      ids[name] = r.body.id;
    }
    groups = {};
    for (const name of ['g1', 'g2', 'empty']) {
      groups[name] = (await req('POST', '/v1/contacts/groups', { name: `svc ${name}` })).body.id;
    }
    await req('POST', `/v1/contacts/groups/${groups['g1']}/members`, {
      contact_ids: [ids['two'], ids['nophone']],
    });
    await req('POST', `/v1/contacts/groups/${groups['g2']}/members`, {
      contact_ids: [ids['twin'], ids['gone'], ids['two']],
    });
    await req('DELETE', `/v1/contacts/${ids['gone']}`);
  });

  it('resolves contacts and groups to numbers, once per number, contacts first', async () => {
    const r = await service().resolveRecipients(
      a.id,
      [ids['one']!, ids['nophone']!],
      [groups['g1']!, groups['g2']!],
    );
    expect(r).toEqual([
      { phone: '+4791000001', contactId: ids['one'] },
      { phone: '+4791000002', contactId: ids['two'] },
    ]);
    expect(await service().resolveRecipients(a.id, [], [groups['empty']!])).toEqual([]);
    // Members who joined together come in the order the contacts were made.
    expect(await service().resolveRecipients(a.id, [], [groups['g2']!])).toEqual([
      { phone: '+4791000002', contactId: ids['two'] },
      { phone: '+4791000001', contactId: ids['twin'] },
    ]);
  });

  it('names an unknown, deleted or foreign id in a not-found error', async () => {
    const foreign = (await req('POST', '/v1/contacts', { name: 'B', phone_number: '+4791000005' }, b.pat))
      .body.id;
    const foreignGroup = (await req('POST', '/v1/contacts/groups', { name: 'B svc' }, b.pat)).body.id;
    for (const [contacts, grps, named] of [
      [['missing-id'], [], 'missing-id'],
      [[ids['gone']!], [], ids['gone']!],
      [[foreign], [], foreign],
      [[], ['missing-group'], 'missing-group'],
      [[], [foreignGroup], foreignGroup],
    ] as const) {
      const err = await service()
        .resolveRecipients(a.id, [...contacts], [...grps])
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(isAppError(err), named).toBe(true);
      if (!isAppError(err)) continue;
      expect(err.kind).toBe('not_found');
      expect(err.message).toContain(named);
    }
  });

  it('finds the contact of an inbound number', async () => {
    const found = await service().findByPhone(a.id, '+47 910 00 002');
    expect(found).toMatchObject({ id: ids['two'], name: 'svc two', phone_number: '+4791000002' });
    // Two contacts share a number: the oldest answers.
    expect((await service().findByPhone(a.id, '+4791000001'))?.id).toBe(ids['one']);
    expect(await service().findByPhone(a.id, '+4791000009')).toBeNull();
    expect(await service().findByPhone(b.id, '+4791000002')).toBeNull();
    expect(await service().findByPhone(a.id, 'garbage')).toBeNull();
  });
});
