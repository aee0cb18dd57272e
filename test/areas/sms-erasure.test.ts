import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertDestination, SubmitError } from '../../src/areas/sms/drivers/driver.js';
import type { SmsTables } from '../../src/areas/sms/migrations.js';
import type { KernelTables } from '../../src/kernel/store/kernel-tables.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { HttpsReceiver } from '../helpers/https-receiver.js';

let t: TestFjord;
let hooks: HttpsReceiver;

beforeAll(async () => {
  hooks = new HttpsReceiver();
  await hooks.listen();
  t = await TestFjord.create(
    { FJORD_SMS_SANDBOX_DELIVERY_SECONDS: '5', FJORD_WEBHOOK_ALLOW_PRIVATE: '1' },
    { fetchImpl: hooks.fetch },
  );
});
afterAll(async () => {
  await t.close();
  await hooks.close();
});

async function customerWithContact(phone: string) {
  const c = await t.customer();
  const p = await t.request('POST', '/v1/sms/sender-profiles', {
    key: c.pat,
    body: { name: 'n', sender_id: '+4791000031' },
  });
  expect(p.status).toBe(201);
  const k = await t.request('POST', '/v1/contacts', {
    key: c.pat,
    body: { name: 'Kari', phone_number: phone },
  });
  expect(k.status).toBe(201);
  return { c, contactId: k.body.id as string };
}
const erase = (c: TestCustomer, id: string) =>
  t.request('POST', `/v1/contacts/${id}/gdpr-delete`, { key: c.pat, body: { reason: 'asked' } });
const get = async (c: TestCustomer, id: string) =>
  (await t.request('GET', `/v1/sms/messages/${id}`, { key: c.pat })).body;

describe('erasing a contact with messages still waiting', () => {
  it('cancels QUEUED and SCHEDULED messages to them (with webhooks) before masking, so none is sent', async () => {
    const { c, contactId } = await customerWithContact('+4791120001');
    const callback_url = `${hooks.base}/erasure`;
    const queued = await t.request('POST', '/v1/sms/send', {
      key: c.pat,
      body: { to_contacts: [contactId], message: 'now', callback_url },
    });
    const at = new Date(t.kernel.clock.nowMs() + 3600_000).toISOString();
    const scheduled = await t.request('POST', '/v1/sms/send', {
      key: c.pat,
      body: { to: ['+4791120001'], message: 'later', scheduled_at: at, callback_url },
    });
    const other = await t.request('POST', '/v1/sms/send', {
      key: c.pat,
      body: { to: ['+4791120002'], message: 'someone else' },
    });
    expect([queued.status, scheduled.status, other.status]).toEqual([201, 201, 201]);
    expect((await get(c, queued.body.sms_message_id)).status).toBe('QUEUED');

    expect((await erase(c, contactId)).status).toBeLessThan(300);
    for (const id of [queued.body.sms_message_id, scheduled.body.sms_message_id]) {
      const m = await get(c, id);
      expect(m).toMatchObject({ status: 'CANCELLED', to_number: '+47********', sent_at: null });
      expect(m.error_message).toMatch(/erased/);
    }
    await t.advance(0);
    await t.advance(3700);
    for (const id of [queued.body.sms_message_id, scheduled.body.sms_message_id]) {
      expect((await get(c, id)).status).toBe('CANCELLED');
    }
    // The message to another number is untouched and goes out.
    expect((await get(c, other.body.sms_message_id)).status).toBe('DELIVERED');
    // Each cancelled message told its callback, and the number is gone from what was sent since.
    const got = hooks.to('/erasure');
    expect(got.map((h) => h.json.message_status).sort()).toEqual(['CANCELLED', 'CANCELLED']);
    for (const h of got) expect(h.json.to_number).toBe('+47********');
  });

  it('leaves the number in no stored webhook payload of the customer', async () => {
    const { c, contactId } = await customerWithContact('+4791120011');
    const s = await t.request('POST', '/v1/sms/send', {
      key: c.pat,
      body: { to: ['+4791120011'], message: 'tracked', callback_url: `${hooks.base}/erasure-log` },
    });
    await t.advance(0);
    await t.advance(5);
    await t.advance(0);
    expect((await get(c, s.body.sms_message_id)).status).toBe('DELIVERED');
    const kdb = t.kernel.store.typed<KernelTables>();
    const payloads = async () =>
      (await kdb.selectFrom('webhook_deliveries').select('payload').where('customer_id', '=', c.id).execute())
        .map((r) => r.payload)
        .join('\n');
    expect(await payloads()).toContain('+4791120011');
    expect((await erase(c, contactId)).status).toBeLessThan(300);
    const after = await payloads();
    expect(after).not.toContain('+4791120011');
    expect(after).toContain('+47********');
  });

  it('fails a message whose submission is retried after its number was masked, without submitting it', async () => {
    const { c, contactId } = await customerWithContact('+4791120021');
    const s = await t.request('POST', '/v1/sms/send', {
      key: c.pat,
      body: { to: ['+4791120021'], message: 'x' },
    });
    // As if an attempt had moved it to SENDING and died before submitting: the retry finds it so.
    const db = t.kernel.store.typed<SmsTables>();
    await db
      .updateTable('sms_messages')
      .set({ status: 'SENDING' })
      .where('id', '=', s.body.sms_message_id)
      .execute();
    expect((await erase(c, contactId)).status).toBeLessThan(300);
    await t.advance(0);
    const m = await get(c, s.body.sms_message_id);
    expect(m).toMatchObject({ status: 'FAILED', to_number: '+47********', sent_at: null });
    expect(m.error_message).toMatch(/not a valid E\.164/);
    const parts = await db
      .selectFrom('sms_parts')
      .select('smsc_message_id')
      .where('message_id', '=', m.id)
      .execute();
    expect(parts).toEqual([]);
  });
});

describe('the driver’s own check', () => {
  it('refuses a destination that is not a valid E.164 number, permanently', () => {
    for (const bad of ['+47********', '4791234567', '+4712', '', '+47 912 34 567']) {
      expect(() => assertDestination(bad), bad).toThrow(SubmitError);
      try {
        assertDestination(bad);
      } catch (err) {
        expect((err as SubmitError).permanent).toBe(true);
      }
    }
    expect(() => assertDestination('+4791234567')).not.toThrow();
  });
});
