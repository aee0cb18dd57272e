import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_SMS_SANDBOX_DELIVERY_SECONDS: '5',
    FJORD_SMS_SANDBOX_FAIL_NUMBERS: '+4799999999',
    FJORD_SMS_CURRENCY: 'NOK',
  });
  a = await t.customer();
  b = await t.customer();
});
afterAll(() => t.close());

const profile = async (c: TestCustomer, body: Record<string, unknown>) =>
  t.request('POST', '/v1/sms/sender-profiles', { key: c.pat, body });

describe('SMS send, the sandbox SMSC and the clock', () => {
  it('sends to a number and moves QUEUED → SENT → DELIVERED on the clock', async () => {
    const p = await profile(a, { name: 'Main', sender_id: '+4791000001' });
    expect(p.status).toBe(201);
    expect(p.body).toMatchObject({ is_default: true, approval_status: 'approved', is_custom_sender: false });
    const r = await t.request('POST', '/v1/sms/send', {
      key: a.pat,
      body: { to: ['+4791234567', '+4791234567'], message: 'Hei Åse, møte kl 10', customer_ref: 'ref-1' },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({
      to: ['+4791234567'],
      status: 'QUEUED',
      scheduled_at: null,
      units_estimate: 1,
      customer_ref: 'ref-1',
    });
    const id = r.body.sms_message_id;
    await t.advance(0);
    let m = await t.request('GET', `/v1/sms/messages/${id}`, { key: a.pat });
    expect(m.body.status).toBe('SENT');
    expect(m.body.sent_at).toBeTruthy();
    await t.advance(5);
    m = await t.request('GET', `/v1/sms/messages/${id}`, { key: a.pat });
    expect(m.body).toMatchObject({ status: 'DELIVERED', direction: 'OUTBOUND', message_type: 'PLAIN', units_count: 1 });
  });
});

describe('contracts', () => {
  it('has the auth matrix', async () => {
    await expectAuthMatrix(t, 'SMS');
    await expectAuthMatrix(t, 'SMS keywords');
  });
  it('isolates tenants', async () => {
    const r = await t.request('POST', '/v1/sms/send', { key: a.pat, body: { to: ['+4791234568'], message: 'x' } });
    await expectTenantIsolation(t, { key: a.pat }, { key: b.pat }, [
      { method: 'GET', url: `/v1/sms/messages/${r.body.sms_message_id}` },
      { method: 'POST', url: `/v1/sms/messages/${r.body.sms_message_id}/cancel` },
    ]);
  });
});
