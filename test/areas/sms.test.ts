import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmsService } from '../../src/areas/sms/service.js';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { HttpsReceiver, signatureValid } from '../helpers/https-receiver.js';

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let hooks: HttpsReceiver;
const FAILING = '+4799999999';

beforeAll(async () => {
  hooks = new HttpsReceiver();
  await hooks.listen();
  t = await TestFjord.create(
    {
      FJORD_SMS_SANDBOX_DELIVERY_SECONDS: '5',
      FJORD_SMS_SANDBOX_FAIL_NUMBERS: FAILING,
      FJORD_SMS_CURRENCY: 'NOK',
      FJORD_WEBHOOK_ALLOW_PRIVATE: '1',
    },
    { fetchImpl: hooks.fetch },
  );
  a = await t.customer();
  b = await t.customer();
  const p = await t.request('POST', '/v1/sms/sender-profiles', {
    key: a.pat,
    body: { name: 'Main', sender_id: '+4791000001', allow_reply: true },
  });
  expect(p.status).toBe(201);
});
afterAll(async () => {
  await t.close();
  await hooks.close();
});

const send = (c: TestCustomer, body: Record<string, unknown>) =>
  t.request('POST', '/v1/sms/send', { key: c.pat, body });
const get = async (c: TestCustomer, id: string) =>
  (await t.request('GET', `/v1/sms/messages/${id}`, { key: c.pat })).body;
/** Submission, then the sandbox's delivery receipt five seconds later on the clock. */
const settle = async () => {
  await t.advance(0);
  await t.advance(5);
};
const inject = (body: Record<string, unknown>) => t.operator('POST', '/admin/v1/sms/inbound', body);

describe('sending through the sandbox SMSC on the clock', () => {
  it('de-duplicates recipients and moves QUEUED → SENT → DELIVERED', async () => {
    const r = await send(a, {
      to: ['+4791234567', '+47 912 34 567', '+4791234568'],
      message: 'Hei Åse, møte kl 10',
      customer_ref: 'ref-1',
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({
      to: ['+4791234567', '+4791234568'],
      status: 'QUEUED',
      scheduled_at: null,
      units_estimate: 2,
      customer_ref: 'ref-1',
    });
    expect(r.body.messages).toHaveLength(2);
    const id = r.body.sms_message_id;
    expect(r.body.messages[0].sms_message_id).toBe(id);
    expect((await get(a, id)).status).toBe('QUEUED');
    await t.advance(0);
    const sent = await get(a, id);
    expect(sent).toMatchObject({ status: 'SENT', from_number: '+4791000001', to_number: '+4791234567' });
    expect(sent.sent_at).toBeTruthy();
    await t.advance(5);
    expect(await get(a, id)).toMatchObject({
      status: 'DELIVERED',
      direction: 'OUTBOUND',
      message_type: 'PLAIN',
      units_count: 1,
      encoding: 'GSM-7',
      customer_ref: 'ref-1',
    });
  });

  it('sends once for a repeated Idempotency-Key, answering the first answer again', async () => {
    const first = await t.request('POST', '/v1/sms/send', {
      key: a.pat,
      headers: { 'idempotency-key': 'sms-once-1' },
      body: { to: ['+4791234599'], message: 'only once' },
    });
    const again = await t.request('POST', '/v1/sms/send', {
      key: a.pat,
      headers: { 'idempotency-key': 'sms-once-1' },
      body: { to: ['+4791234599'], message: 'only once' },
    });
    expect(again.status).toBe(first.status);
    expect(again.body.sms_message_id).toBe(first.body.sms_message_id);
    const list = await t.request('GET', '/v1/sms/messages', {
      key: a.pat,
      query: { recipient: '+4791234599' },
    });
    expect(list.body.total).toBe(1);
  });

  it('counts units: parts × recipients, UCS-2 for emoji', async () => {
    const r = await send(a, { to: ['+4791234567', '+4791234568'], message: `${'x'.repeat(69)}😀` });
    expect(r.body.units_estimate).toBe(4); // 71 units → 2 parts of UCS-2, × 2 recipients
    const m = await get(a, r.body.sms_message_id);
    expect(m).toMatchObject({ units_count: 2, encoding: 'UCS-2' });
  });

  it('fails messages to a number the network cannot reach', async () => {
    const r = await send(a, { to: [FAILING], message: 'hello' });
    await settle();
    const m = await get(a, r.body.sms_message_id);
    expect(m.status).toBe('FAILED');
    expect(m.error_message).toMatch(/UNDELIV/);
  });

  it('refuses bad input with clear 4xx errors', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ message: 'x' }, 422, 'no_recipients'],
      [{ to: [], message: 'x' }, 422, 'no_recipients'],
      [{ to: ['4791234567'], message: 'x' }, 422, 'invalid_phone_number'],
      [{ to: ['+12'], message: 'x' }, 422, 'invalid_phone_number'],
      [{ to: ['+4791234567'], message: 'a'.repeat(1531) }, 422, 'message_too_long'],
      [{ to: ['+4791234567'], message: 'a'.repeat(1601) }, 422, 'validation_error'],
      [{ to: ['+4791234567'], message: '   ' }, 422, 'empty_message'],
      [
        { to: ['+4791234567'], message: 'x', callback_url: 'http://example.com/cb' },
        422,
        'invalid_callback_url',
      ],
      [
        { to: ['+4791234567'], message: 'x', scheduled_at: '2020-01-01T00:00:00Z' },
        422,
        'scheduled_at_in_past',
      ],
      [{ to: ['+4791234567'], message: 'x', scheduled_at: 'soon' }, 422, 'invalid_scheduled_at'],
      [{ to: ['+4791234567'], message: 'x', timezone: 'Mars/Olympus' }, 422, 'invalid_timezone'],
      [{ to: ['+4791234567'], message: 'x', sender_profile_id: 'nope' }, 404, 'not_found'],
      [{ to: ['+4791234567'], message: 'x', surprise: 1 }, 422, 'validation_error'],
    ];
    for (const [body, status, code] of cases) {
      const r = await send(a, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(r.body.detail.code, JSON.stringify(body).slice(0, 80)).toBe(code);
    }
    const far = new Date(t.kernel.clock.nowMs() + 31 * 86400_000).toISOString();
    const r = await send(a, { to: ['+4791234567'], message: 'x', scheduled_at: far });
    expect(r.body.detail.code).toBe('scheduled_at_too_far');
    const none = await send(b, { to: ['+4791234567'], message: 'x' });
    expect(none.status).toBe(409);
    expect(none.body.detail.code).toBe('no_sender_profile');
  });
});

describe('scheduling and cancelling', () => {
  it('holds a scheduled message until its time in the given timezone', async () => {
    const now = t.kernel.clock.nowMs();
    const target = new Date(Math.ceil((now + 2 * 3600_000) / 60_000) * 60_000); // whole minute, ~2 h ahead
    const local = new Intl.DateTimeFormat('sv-SE', {
      timeZone: 'Asia/Tokyo',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .format(target)
      .replace(' ', 'T');
    const r = await send(a, {
      to: ['+4791234567'],
      message: 'later',
      scheduled_at: local,
      timezone: 'Asia/Tokyo',
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.status).toBe('SCHEDULED');
    expect(r.body.scheduled_at).toBe(target.toISOString());
    const id = r.body.sms_message_id;
    await t.advance((target.getTime() - t.kernel.clock.nowMs()) / 1000 - 60);
    expect((await get(a, id)).status).toBe('SCHEDULED');
    await t.advance(61);
    expect((await get(a, id)).status).toBe('SENT');
    await t.advance(5);
    expect((await get(a, id)).status).toBe('DELIVERED');
  });

  it('cancels from SCHEDULED or QUEUED only, and a cancelled message is never sent', async () => {
    const at = new Date(t.kernel.clock.nowMs() + 3600_000).toISOString();
    const s = await send(a, { to: ['+4791234567'], message: 'x', scheduled_at: at });
    const c = await t.request('POST', `/v1/sms/messages/${s.body.sms_message_id}/cancel`, { key: a.pat });
    expect(c.status).toBe(200);
    expect(c.body).toEqual({ message: 'Message cancelled.', message_id: s.body.sms_message_id });
    const q = await send(a, { to: ['+4791234567'], message: 'x' });
    expect(
      (await t.request('POST', `/v1/sms/messages/${q.body.sms_message_id}/cancel`, { key: a.pat })).status,
    ).toBe(200);
    await t.advance(3700);
    expect((await get(a, s.body.sms_message_id)).status).toBe('CANCELLED');
    expect((await get(a, q.body.sms_message_id)).status).toBe('CANCELLED');
    const again = await t.request('POST', `/v1/sms/messages/${q.body.sms_message_id}/cancel`, { key: a.pat });
    expect(again.status).toBe(409);
    const d = await send(a, { to: ['+4791234567'], message: 'x' });
    await settle();
    const late = await t.request('POST', `/v1/sms/messages/${d.body.sms_message_id}/cancel`, { key: a.pat });
    expect(late.status).toBe(409);
    expect(late.body.detail).toMatchObject({ code: 'cannot_cancel', status: 'DELIVERED' });
    expect((await get(a, d.body.sms_message_id)).status).toBe('DELIVERED');
  });
});

describe('status webhooks', () => {
  it('posts a signed callback for every status change, like Twilio’s status callbacks', async () => {
    const r = await send(a, {
      to: ['+4791234569'],
      message: 'tracked',
      callback_url: `${hooks.base}/status`,
      customer_ref: 'order-7',
    });
    await t.advance(0);
    await t.advance(5);
    await t.advance(0);
    const got = hooks.to('/status').filter((h) => h.json.sms_message_id === r.body.sms_message_id);
    expect(got.map((h) => h.json.message_status)).toEqual(['SENDING', 'SENT', 'DELIVERED']);
    const secret = await t.kernel.webhooks.secretFor(a.id);
    for (const h of got) {
      expect(signatureValid(h, secret)).toBe(true);
      expect(h.headers['fjord-event-type']).toBe('sms.status');
    }
    expect(got[2]!.json).toMatchObject({
      event: 'sms.status',
      previous_status: 'SENT',
      to_number: '+4791234569',
      from_number: '+4791000001',
      customer_ref: 'order-7',
      units_count: 1,
      error_message: null,
    });
    expect(got[2]!.json.delivered_at).toBeTruthy();
  });
});

describe('replies and inbound messages', () => {
  it('files a reply to a message sent with allow_reply as REPLY with related_message_id', async () => {
    const r = await send(a, { to: ['+4791230001'], message: 'Reply YES to confirm', allow_reply: true });
    await settle();
    const routed = await inject({ from: '+4791230001', to: '+4791000001', message: 'YES' });
    expect(routed.status).toBe(200);
    expect(routed.body).toMatchObject({
      routed: 'reply',
      customer_id: a.id,
      related_message_id: r.body.sms_message_id,
    });
    const m = await get(a, routed.body.message_id);
    expect(m).toMatchObject({
      direction: 'INBOUND',
      message_type: 'REPLY',
      status: 'RECEIVED',
      from_number: '+4791230001',
      body: 'YES',
      related_message_id: r.body.sms_message_id,
    });
    expect(
      (await t.request('GET', `/v1/sms/messages/${routed.body.message_id}`, { key: b.pat })).status,
    ).toBe(404);
  });

  it('drops an inbound message that matches nothing', async () => {
    const routed = await inject({ from: '+4791239999', message: 'who is this' });
    expect(routed.body).toEqual({ routed: 'none', message_id: null, customer_id: null });
  });
});

describe('sender profiles', () => {
  it('validates sender ids and holds custom senders for operator approval', async () => {
    const c = await t.customer();
    const create = (body: Record<string, unknown>) =>
      t.request('POST', '/v1/sms/sender-profiles', { key: c.pat, body });
    expect(
      (await create({ name: 'x', sender_id: 'FjordÅS', brand_confirmation: true })).body.detail.code,
    ).toBe('invalid_sender_id');
    expect((await create({ name: 'x', sender_id: 'TwelveChars1', brand_confirmation: true })).status).toBe(
      422,
    );
    expect((await create({ name: 'x', sender_id: '12345', brand_confirmation: true })).status).toBe(422);
    expect((await create({ name: 'x', sender_id: 'Fjord' })).body.detail.code).toBe(
      'brand_confirmation_required',
    );
    const custom = await create({ name: 'Brand', sender_id: 'FjordCloud', brand_confirmation: true });
    expect(custom.status).toBe(201);
    expect(custom.body).toMatchObject({
      sender_id: 'FjordCloud',
      is_default: true,
      is_custom_sender: true,
      approval_status: 'pending',
      monthly_price: 99,
    });
    const blocked = await send(c, { to: ['+4791234567'], message: 'x' });
    expect(blocked.status).toBe(409);
    expect(blocked.body.detail.code).toBe('sender_not_approved');
    const pending = await t.operator('GET', '/admin/v1/sms/sender-profiles?approval_status=pending');
    expect(pending.body.sender_profiles.map((p: { id: string }) => p.id)).toContain(custom.body.id);
    const ok = await t.operator('POST', `/admin/v1/sms/sender-profiles/${custom.body.id}/approve`, {});
    expect(ok.status).toBe(200);
    expect(ok.body.approval_status).toBe('approved');
    expect((await send(c, { to: ['+4791234567'], message: 'x' })).status).toBe(201);
    await t.advance(0);
    const list = await t.request('GET', '/v1/sms/messages', { key: c.pat });
    expect(list.body.messages[0].from_number).toBe('FjordCloud');
    const rejected = await t.operator('POST', `/admin/v1/sms/sender-profiles/${custom.body.id}/reject`, {
      note: 'brand not verified',
    });
    expect(rejected.body).toMatchObject({ approval_status: 'rejected', review_note: 'brand not verified' });
    expect((await send(c, { to: ['+4791234567'], message: 'x' })).body.detail.code).toBe(
      'sender_not_approved',
    );
  });

  it('fails a scheduled message whose sender was rejected before its time', async () => {
    const c = await t.customer();
    const p = await t.request('POST', '/v1/sms/sender-profiles', {
      key: c.pat,
      body: { name: 'Brand', sender_id: 'Kafe Nord', brand_confirmation: true },
    });
    await t.operator('POST', `/admin/v1/sms/sender-profiles/${p.body.id}/approve`, {});
    const at = new Date(t.kernel.clock.nowMs() + 600_000).toISOString();
    const r = await send(c, { to: ['+4791234567'], message: 'x', scheduled_at: at });
    expect(r.status).toBe(201);
    await t.operator('POST', `/admin/v1/sms/sender-profiles/${p.body.id}/reject`, {});
    await t.advance(600);
    const m = await get(c, r.body.sms_message_id);
    expect(m).toMatchObject({
      status: 'FAILED',
      error_message: 'the sender profile is rejected',
      sent_at: null,
    });
  });

  it('keeps exactly one default; the only default cannot be deleted', async () => {
    const c = await t.customer();
    const create = (body: Record<string, unknown>) =>
      t.request('POST', '/v1/sms/sender-profiles', { key: c.pat, body });
    const first = (await create({ name: 'One', sender_id: '+4791000011' })).body;
    const del1 = await t.request('DELETE', `/v1/sms/sender-profiles/${first.id}`, { key: c.pat });
    expect(del1.status).toBe(409);
    expect(del1.body.detail.code).toBe('cannot_delete_only_default');
    const second = (await create({ name: 'Two', sender_id: '+4791000012', is_default: true })).body;
    expect(second.is_default).toBe(true);
    let list = (await t.request('GET', '/v1/sms/sender-profiles', { key: c.pat })).body;
    expect(
      list.filter((p: { is_default: boolean }) => p.is_default).map((p: { id: string }) => p.id),
    ).toEqual([second.id]);
    const del2 = await t.request('DELETE', `/v1/sms/sender-profiles/${second.id}`, { key: c.pat });
    expect(del2.status).toBe(200);
    list = (await t.request('GET', '/v1/sms/sender-profiles', { key: c.pat })).body;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: first.id, is_default: true });
  });
});

describe('keywords', () => {
  it('reserves case-insensitively, uniquely on the shared number, and routes inbound to a signed webhook with auto-reply', async () => {
    const r = await t.request('POST', '/v1/sms/keywords', {
      key: a.pat,
      body: {
        keyword: 'Pizza',
        description: 'orders',
        webhook_url: `${hooks.base}/kw`,
        auto_reply_message: 'Takk! Vi ringer deg.',
      },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({
      keyword: 'PIZZA',
      is_active: true,
      auto_reply_enabled: true,
      messages_received: 0,
      last_message_at: null,
    });
    const id = r.body.id;
    expect((await t.request('GET', '/v1/sms/keywords/check/pIzZa', { key: b.pat })).body).toEqual({
      keyword: 'PIZZA',
      available: false,
    });
    expect((await t.request('GET', '/v1/sms/keywords/check/STOP', { key: b.pat })).body.available).toBe(
      false,
    );
    expect((await t.request('GET', '/v1/sms/keywords/check/burger', { key: b.pat })).body.available).toBe(
      true,
    );
    expect((await t.request('GET', '/v1/sms/keywords/check/no%20way', { key: b.pat })).status).toBe(422);
    const taken = await t.request('POST', '/v1/sms/keywords', { key: b.pat, body: { keyword: 'PIZZA' } });
    expect(taken.status).toBe(409);
    expect(taken.body.detail.code).toBe('keyword_unavailable');
    expect(
      (await t.request('POST', '/v1/sms/keywords', { key: b.pat, body: { keyword: 'help' } })).status,
    ).toBe(409);

    const routed = await inject({ from: '+4791231111', message: 'pizza large pepperoni' });
    expect(routed.body).toMatchObject({ routed: 'keyword', customer_id: a.id, keyword_id: id });
    await t.advance(0);
    const kw = (await t.request('GET', `/v1/sms/keywords/${id}`, { key: a.pat })).body;
    expect(kw.messages_received).toBe(1);
    expect(kw.last_message_at).toBeTruthy();
    const hook = hooks.to('/kw').at(-1)!;
    expect(signatureValid(hook, await t.kernel.webhooks.secretFor(a.id))).toBe(true);
    expect(hook.json).toMatchObject({
      event: 'sms.keyword.received',
      keyword: 'PIZZA',
      from_number: '+4791231111',
      body: 'pizza large pepperoni',
      text: 'large pepperoni',
    });
    const replies = await t.request('GET', '/v1/sms/messages', {
      key: a.pat,
      query: { recipient: '+4791231111', direction: 'OUTBOUND' },
    });
    expect(replies.body.messages[0]).toMatchObject({
      message_type: 'REPLY',
      body: 'Takk! Vi ringer deg.',
      from_number: '+4759440000',
      related_message_id: routed.body.message_id,
      status: 'SENT',
    });

    const off = await t.request('PATCH', `/v1/sms/keywords/${id}`, {
      key: a.pat,
      body: { is_active: false },
    });
    expect(off.body).toMatchObject({ is_active: false, description: 'orders', auto_reply_enabled: true });
    expect((await inject({ from: '+4791231112', message: 'PIZZA' })).body.routed).toBe('none');
    expect(
      (await t.request('PATCH', `/v1/sms/keywords/${id}`, { key: b.pat, body: { is_active: true } })).status,
    ).toBe(404);
    expect((await t.request('DELETE', `/v1/sms/keywords/${id}`, { key: b.pat })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/sms/keywords/${id}`, { key: a.pat })).status).toBe(200);
    expect((await t.request('GET', '/v1/sms/keywords/check/pizza', { key: b.pat })).body.available).toBe(
      true,
    );
    expect((await t.request('GET', '/v1/sms/keywords', { key: a.pat })).body).toEqual([]);
  });
});

describe('contacts, groups and erasure', () => {
  it('sends to contacts and groups, de-duplicated, and masks an erased contact’s number', async () => {
    const c = await t.customer();
    await t.request('POST', '/v1/sms/sender-profiles', {
      key: c.pat,
      body: { name: 'n', sender_id: '+4791000021' },
    });
    const contact = async (name: string, phone: string) =>
      (await t.request('POST', '/v1/contacts', { key: c.pat, body: { name, phone_number: phone } })).body.id;
    const k1 = await contact('Kari', '+4791110001');
    const k2 = await contact('Ola', '+4791110002');
    const group = (await t.request('POST', '/v1/contacts/groups', { key: c.pat, body: { name: 'team' } }))
      .body.id;
    await t.request('POST', `/v1/contacts/groups/${group}/members`, {
      key: c.pat,
      body: { contact_ids: [k1, k2] },
    });
    const r = await send(c, { to: ['+4791110002'], to_contacts: [k1], to_groups: [group], message: 'Hei' });
    expect(r.status, r.text).toBe(201);
    expect(r.body.to).toEqual(['+4791110002', '+4791110001']);
    expect(r.body.units_estimate).toBe(2);
    const other = await send(b, { to_contacts: [k1], message: 'x' });
    expect(other.status).toBe(404);

    const erase = await t.request('POST', `/v1/contacts/${k1}/gdpr-delete`, {
      key: c.pat,
      body: { reason: 'asked' },
    });
    expect(erase.status).toBeLessThan(300);
    const list = (await t.request('GET', '/v1/sms/messages', { key: c.pat })).body.messages;
    const numbers = list.map((m: { to_number: string }) => m.to_number).sort();
    expect(numbers).toEqual(['+47********', '+4791110002']);
    const masked = list.find((m: { to_number: string }) => m.to_number.includes('*'));
    expect(masked.contact_id).toBeNull();
  });
});

describe('listing, status, usage and stats', () => {
  it('lists with filters and paging', async () => {
    const c = await t.customer();
    await t.request('POST', '/v1/sms/sender-profiles', {
      key: c.pat,
      body: { name: 'n', sender_id: '+4791000031' },
    });
    for (let i = 0; i < 3; i++)
      await send(c, { to: [`+479122000${i}`], message: `m${i}`, customer_ref: `r${i % 2}` });
    await t.advance(0);
    const page1 = await t.request('GET', '/v1/sms/messages', { key: c.pat, query: { page_size: '2' } });
    expect(page1.body).toMatchObject({ total: 3, page: 1, page_size: 2, has_more: true });
    expect(page1.body.messages.map((m: { body: string }) => m.body)).toEqual(['m2', 'm1']);
    const page2 = await t.request('GET', '/v1/sms/messages', {
      key: c.pat,
      query: { page_size: '2', page: '2' },
    });
    expect(page2.body).toMatchObject({ total: 3, has_more: false });
    const byRef = await t.request('GET', '/v1/sms/messages', { key: c.pat, query: { customer_ref: 'r0' } });
    expect(byRef.body.total).toBe(2);
    const byRecipient = await t.request('GET', '/v1/sms/messages', {
      key: c.pat,
      query: { recipient: '+4791220001' },
    });
    expect(byRecipient.body.messages.map((m: { body: string }) => m.body)).toEqual(['m1']);
    const byStatus = await t.request('GET', '/v1/sms/messages', {
      key: c.pat,
      query: { status: 'DELIVERED' },
    });
    expect(byStatus.body.total).toBe(0);
    const future = new Date(t.kernel.clock.nowMs() + 60_000).toISOString();
    const byDate = await t.request('GET', '/v1/sms/messages', { key: c.pat, query: { date_from: future } });
    expect(byDate.body.total).toBe(0);
    const bad = await t.request('GET', '/v1/sms/messages', { key: c.pat, query: { status: 'LOST' } });
    expect(bad.status).toBe(422);
  });

  it('computes status, usage (units × price) and stats from the messages', async () => {
    const c = await t.customer();
    let st = (await t.request('GET', '/v1/sms/status', { key: c.pat })).body;
    expect(st).toEqual({
      active: false,
      has_sender_profiles: false,
      has_api_key: false,
      default_sender: null,
      messages_today: 0,
      messages_this_month: 0,
      messages_sent_30d: 0,
      messages_received_30d: 0,
    });
    await t.request('POST', '/v1/sms/sender-profiles', {
      key: c.pat,
      body: { name: 'n', sender_id: '+4791000041', allow_reply: true },
    });
    const key = await t.request('POST', '/v1/account/api-keys/service', {
      key: c.pat,
      body: { service: 'sms' },
    });
    await send(c, { to: ['+4791330001'], message: 'a'.repeat(200) }); // 2 units
    await send(c, { to: [FAILING], message: 'b' }); // 1 unit, fails
    await send(c, {
      to: ['+4791330001'],
      message: 'c',
      scheduled_at: new Date(t.kernel.clock.nowMs() + 86400_000 * 20).toISOString(),
    });
    await settle();
    await inject({ from: '+4791330001', to: '+4791000041', message: 'svar' });
    st = (await t.request('GET', '/v1/sms/status', { key: key.body.key })).body;
    expect(st).toMatchObject({
      active: true,
      has_sender_profiles: true,
      has_api_key: true,
      default_sender: '+4791000041',
      messages_sent_30d: 2,
      messages_received_30d: 1,
    });
    expect(st.messages_today + 0).toBeGreaterThanOrEqual(0);
    const now = t.kernel.clock.now();
    const period = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    const usage = (await t.request('GET', '/v1/sms/usage', { key: c.pat, query: { period } })).body;
    expect(usage).toMatchObject({
      period,
      messages_sent: 2,
      messages_received: 1,
      messages_failed: 1,
      units_used: 3,
      cost: 2.97,
      currency: 'NOK',
      price_per_unit: 0.99,
      outbound_cost: 2.97,
      inbound_cost: 0,
    });
    expect(usage.period_start).toBe(`${period}-01T00:00:00.000Z`);
    const empty = (await t.request('GET', '/v1/sms/usage', { key: c.pat, query: { period: '2020-01' } }))
      .body;
    expect(empty).toMatchObject({
      messages_sent: 0,
      units_used: 0,
      cost: 0,
      period_end: '2020-01-31T23:59:59.999Z',
    });
    expect(
      (await t.request('GET', '/v1/sms/usage', { key: c.pat, query: { period: '2020-13' } })).status,
    ).toBe(422);
    const stats = (await t.request('GET', '/v1/sms/stats', { key: c.pat })).body;
    expect(stats.last_30_days).toEqual({
      messages_sent: 2,
      messages_received: 1,
      units_used: 3,
      delivery_rate: 50,
    });
    expect(stats.status_breakdown).toEqual({ DELIVERED: 1, FAILED: 1, SCHEDULED: 1, RECEIVED: 1 });
  });
});

describe('the interface for the verify area', () => {
  it('sends a VERIFY message through the pipeline and reports units and cost', async () => {
    const sms = t.fjord.areas.get('sms')!.service as SmsService;
    expect(await sms.defaultSenderProfile(b.id)).toBeNull();
    const def = await sms.defaultSenderProfile(a.id);
    expect(def).toMatchObject({ sender_id: '+4791000001' });
    const sent = await sms.sendSystemMessage({
      customerId: a.id,
      to: '+4791234560',
      message: 'Your code is 123456',
      kind: 'VERIFY',
    });
    expect(sent).toMatchObject({ units: 1, cost: { amount: 0.99, currency: 'NOK' } });
    await settle();
    expect(await get(a, sent.messageId)).toMatchObject({ message_type: 'VERIFY', status: 'DELIVERED' });
  });
});

describe('contracts', () => {
  it('answers the auth matrix on every SMS and keyword route', async () => {
    await expectAuthMatrix(t, 'SMS');
    await expectAuthMatrix(t, 'SMS keywords');
  });

  it('lists SMS in the account’s services, with its simulated SMSC marked', async () => {
    const services = await t.request('GET', '/v1/account/services', { key: a.pat });
    expect(services.body.find((x: { service_type: string }) => x.service_type === 'sms')).toMatchObject({
      id: `sms-${a.id}`,
      status: 'active',
      metadata: { driver: 'sandbox', simulated: true, shared_number: '+4759440000' },
    });
    const none = await t.request('GET', '/v1/account/services', { key: b.pat });
    expect(none.body.some((x: { service_type: string }) => x.service_type === 'sms')).toBe(false);
  });

  it('accepts an sms service key and refuses other services', async () => {
    const k = await t.kernel.identity.createServiceKey(a.id, 'sms', null);
    expect((await t.request('GET', '/v1/sms/keywords', { key: k.key })).status).toBe(200);
    expect((await t.request('GET', '/v1/sms/status', { key: k.key })).status).toBe(200);
  });

  it('isolates tenants', async () => {
    const r = await send(a, { to: ['+4791234568'], message: 'x' });
    const profiles = (await t.request('GET', '/v1/sms/sender-profiles', { key: a.pat })).body;
    const kw = await t.request('POST', '/v1/sms/keywords', { key: a.pat, body: { keyword: 'isolated' } });
    await expectTenantIsolation(t, { key: a.pat }, { key: b.pat }, [
      { method: 'GET', url: `/v1/sms/messages/${r.body.sms_message_id}` },
      { method: 'POST', url: `/v1/sms/messages/${r.body.sms_message_id}/cancel` },
      { method: 'DELETE', url: `/v1/sms/sender-profiles/${profiles[0].id}` },
      {
        method: 'POST',
        url: '/v1/sms/send',
        body: { to: ['+4791234568'], message: 'x', sender_profile_id: profiles[0].id },
      },
      { method: 'GET', url: `/v1/sms/keywords/${kw.body.id}` },
      { method: 'PATCH', url: `/v1/sms/keywords/${kw.body.id}`, body: { is_active: false } },
      { method: 'DELETE', url: `/v1/sms/keywords/${kw.body.id}` },
    ]);
    const listB = await t.request('GET', '/v1/sms/messages', { key: b.pat });
    expect(listB.body.messages.every((m: { id: string }) => m.id !== r.body.sms_message_id)).toBe(true);
    expect((await t.request('GET', '/v1/sms/keywords', { key: b.pat })).body).toEqual([]);
  });
});
