import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeGsm7 } from '../../src/areas/sms/segmentation.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { TestSmsc } from './smpp-smsc.js';

let smsc: TestSmsc;
let t: TestFjord;
let a: TestCustomer;

/** Waits (in real time) for the asynchronous link to bring something about. */
async function until<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await probe();
    if (v) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const message = async (id: string) =>
  (await t.request('GET', `/v1/sms/messages/${id}`, { key: a.pat })).body as Record<string, unknown>;
const statusIs = (id: string, status: string) => async () => (await message(id)).status === status;

beforeAll(async () => {
  smsc = new TestSmsc();
  await smsc.listen();
  t = await TestFjord.create({
    FJORD_SMPP_URL: `smpp://fjord:s3cret@127.0.0.1:${smsc.port}`,
    FJORD_SMPP_ENQUIRE_LINK_SECONDS: '1',
    FJORD_SMPP_WINDOW: '2',
  });
  await t.fjord.start(['worker']);
  a = await t.customer();
  const p = await t.request('POST', '/v1/sms/sender-profiles', {
    key: a.pat,
    body: { name: 'Brand', sender_id: 'FjordCloud', brand_confirmation: true },
  });
  await t.operator('POST', `/admin/v1/sms/sender-profiles/${p.body.id}/approve`, {});
  await t.request('POST', '/v1/sms/sender-profiles', {
    key: a.pat,
    body: { name: 'Number', sender_id: '+4791000001', allow_reply: true },
  });
});
afterAll(async () => {
  await t.close();
  await smsc.close();
});

describe('SMPP 3.4 to a real SMSC', () => {
  it('binds as a transceiver with the configured credentials', async () => {
    await until(() => smsc.binds.length > 0, 'bind');
    expect(smsc.binds[0]).toMatchObject({
      command: 'bind_transceiver',
      system_id: 'fjord',
      interface_version: 0x34,
    });
    expect(t.kernel.registry.backends.find((b) => b.area === 'sms')).toMatchObject({
      driver: 'smpp',
      simulated: false,
    });
  });

  it('submits a GSM-7 message from the alphanumeric sender, and a receipt delivers it', async () => {
    const before = smsc.submits.length;
    const r = await t.request('POST', '/v1/sms/send', {
      key: a.pat,
      body: { to: ['+4791234567'], message: 'Hei Åse! Prisen er 100€ {inkl. mva}' },
    });
    expect(r.status, r.text).toBe(201);
    await until(() => smsc.submits.length > before, 'submit_sm');
    const pdu = smsc.submits[before]!;
    expect(pdu).toMatchObject({
      source_addr: 'FjordCloud',
      source_addr_ton: 5,
      source_addr_npi: 0,
      destination_addr: '4791234567',
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      data_coding: 0,
      esm_class: 0,
      registered_delivery: 1,
    });
    expect(pdu.short_message.message).toBe('Hei Åse! Prisen er 100€ {inkl. mva}');
    await until(statusIs(r.body.sms_message_id, 'SENT'), 'SENT');
    const resp = await smsc.receipt('smsc-1', 'DELIVRD', true);
    expect(resp.command_status).toBe(0);
    await until(statusIs(r.body.sms_message_id, 'DELIVERED'), 'DELIVERED');
  });

  it('splits UCS-2 into concatenated parts with one UDH reference, and a failed part fails the message', async () => {
    const body = `Hilsen fra Fjord 😀 ${'ж'.repeat(130)}`; // 152 UTF-16 units → 3 parts of 67
    const before = smsc.submits.length;
    const r = await t.request('POST', '/v1/sms/send', {
      key: a.pat,
      body: { to: ['+4791234568'], message: body },
    });
    expect(r.body.units_estimate).toBe(3);
    await until(() => smsc.submits.length >= before + 3, 'three submit_sm');
    const parts = smsc.submits.slice(before, before + 3);
    const udhs = parts.map((p) => [...(p.short_message.udh[0] as Buffer)]);
    const ref = udhs[0]![2];
    expect(udhs).toEqual([
      [0x00, 0x03, ref, 3, 1],
      [0x00, 0x03, ref, 3, 2],
      [0x00, 0x03, ref, 3, 3],
    ]);
    for (const p of parts) expect(p).toMatchObject({ data_coding: 8, esm_class: 0x40 });
    expect(parts.map((p) => p.short_message.message).join('')).toBe(body);
    await until(statusIs(r.body.sms_message_id, 'SENT'), 'SENT');
    const ids = parts.map((_, i) => `smsc-${before + i + 1}`);
    await smsc.receipt(ids[0]!, 'DELIVRD', false); // text format only, as many SMSCs send
    await smsc.receipt(ids[1]!, 'UNDELIV', false);
    await until(statusIs(r.body.sms_message_id, 'FAILED'), 'FAILED');
    expect((await message(r.body.sms_message_id)).error_message).toMatch(
      /part 2 not delivered: UNDELIV err:001/,
    );
  });

  it('keeps GSM-7 parts within 153 septets with extension characters counted twice', async () => {
    const body = `${'a'.repeat(152)}€${'b'.repeat(20)}`;
    const before = smsc.submits.length;
    await t.request('POST', '/v1/sms/send', {
      key: a.pat,
      body: { to: ['+4791234569'], message: body, sender_profile_id: undefined },
    });
    await until(() => smsc.submits.length >= before + 2, 'two submit_sm');
    const parts = smsc.submits.slice(before, before + 2);
    for (const p of parts) {
      expect(p.data_coding).toBe(0);
      expect(encodeGsm7(p.short_message.message).length).toBeLessThanOrEqual(153);
    }
    expect(parts.map((p) => p.short_message.message).join('')).toBe(body);
  });

  it('holds at most the window of submit_sm outstanding, and retries after ESME_RTHROTTLED', async () => {
    smsc.holdMs = 100;
    smsc.maxOutstanding = 0;
    smsc.throttleNext = 0x58;
    const before = smsc.submits.length;
    const r = await t.request('POST', '/v1/sms/send', {
      key: a.pat,
      body: { to: ['+4791234570'], message: 'x'.repeat(153 * 5) },
    });
    expect(r.body.units_estimate).toBe(5);
    await until(() => smsc.submits.length >= before + 5, 'five submit_sm');
    await until(statusIs(r.body.sms_message_id, 'SENT'), 'SENT');
    expect(smsc.maxOutstanding).toBe(2);
    smsc.holdMs = 0;
  });

  it('takes mobile-originated messages: a reply to an allow_reply message becomes a REPLY', async () => {
    const r = await t.request('POST', '/v1/sms/send', {
      key: a.pat,
      body: {
        to: ['+4791230002'],
        message: 'Svar JA',
        allow_reply: true,
        sender_profile_id: await numberProfile(),
      },
    });
    await until(statusIs(r.body.sms_message_id, 'SENT'), 'SENT');
    const resp = await smsc.deliver({
      source_addr: '4791230002',
      source_addr_ton: 1,
      destination_addr: '4791000001',
      dest_addr_ton: 1,
      esm_class: 0,
      data_coding: 8,
      short_message: { message: 'JA 👍' },
    });
    expect(resp.command_status).toBe(0);
    const reply = await until(async () => {
      const list = await t.request('GET', '/v1/sms/messages', {
        key: a.pat,
        query: { direction: 'INBOUND' },
      });
      return list.body.messages[0];
    }, 'the reply');
    expect(reply).toMatchObject({
      message_type: 'REPLY',
      status: 'RECEIVED',
      from_number: '+4791230002',
      to_number: '+4791000001',
      body: 'JA 👍',
      related_message_id: r.body.sms_message_id,
    });
  });

  it('joins a concatenated MO message and routes it to its keyword on the shared number', async () => {
    const kw = await t.request('POST', '/v1/sms/keywords', { key: a.pat, body: { keyword: 'Taxi' } });
    expect(kw.status).toBe(201);
    const part = (seq: number, message: string) =>
      smsc.deliver({
        source_addr: '4791230003',
        source_addr_ton: 1,
        destination_addr: '4759440000',
        dest_addr_ton: 1,
        esm_class: 0x40,
        data_coding: 0,
        short_message: { udh: Buffer.from([0x05, 0x00, 0x03, 0x2a, 2, seq]), message },
      });
    expect((await part(2, ' til Gardermoen kl 06')).command_status).toBe(0); // parts may come out of order
    expect((await part(1, 'taxi fra Majorstuen')).command_status).toBe(0);
    const got = await until(async () => {
      const k = await t.request('GET', `/v1/sms/keywords/${kw.body.id}`, { key: a.pat });
      return k.body.messages_received === 1 && k.body;
    }, 'the keyword message');
    expect(got.last_message_at).toBeTruthy();
    const list = await t.request('GET', '/v1/sms/messages', {
      key: a.pat,
      query: { direction: 'INBOUND', recipient: '+4759440000' },
    });
    expect(list.body.messages[0]).toMatchObject({
      from_number: '+4791230003',
      body: 'taxi fra Majorstuen til Gardermoen kl 06',
      status: 'RECEIVED',
    });
  });

  it('keeps the link alive with enquire_link and re-binds after a drop', async () => {
    await until(() => smsc.enquireLinks >= 1, 'an enquire_link');
    const binds = smsc.binds.length;
    smsc.sessions[0]!.destroy();
    await until(() => smsc.binds.length > binds && smsc.sessions.length === 1, 're-bind');
    const before = smsc.submits.length;
    const r = await t.request('POST', '/v1/sms/send', {
      key: a.pat,
      body: { to: ['+4791234571'], message: 'after' },
    });
    await until(() => smsc.submits.length > before, 'submit after re-bind');
    await until(statusIs(r.body.sms_message_id, 'SENT'), 'SENT');
  });
});

async function numberProfile(): Promise<string> {
  const list = await t.request('GET', '/v1/sms/sender-profiles', { key: a.pat });
  return list.body.find((p: { sender_id: string }) => p.sender_id === '+4791000001').id;
}

describe('an SMSC that refuses the bind', () => {
  it('keeps messages QUEUED (and cancellable) while the link is down', async () => {
    const wrong = await TestFjord.create({
      FJORD_SMPP_URL: `smpp://fjord:wrong@127.0.0.1:${smsc.port}`,
    });
    try {
      const c = await wrong.customer();
      await wrong.request('POST', '/v1/sms/sender-profiles', {
        key: c.pat,
        body: { name: 'n', sender_id: '+4791000001' },
      });
      const binds = smsc.binds.length;
      const r = await wrong.request('POST', '/v1/sms/send', {
        key: c.pat,
        body: { to: ['+4791234572'], message: 'x' },
      });
      await wrong.kernel.jobs.drain();
      expect(smsc.binds.length).toBeGreaterThan(binds); // it tried, and was refused
      const m = await wrong.request('GET', `/v1/sms/messages/${r.body.sms_message_id}`, { key: c.pat });
      expect(m.body.status).toBe('QUEUED');
      const jobs = await wrong.kernel.jobs.stats();
      expect(jobs['queued']).toBeGreaterThanOrEqual(1); // retried later, on the clock
      const cancel = await wrong.request('POST', `/v1/sms/messages/${r.body.sms_message_id}/cancel`, {
        key: c.pat,
      });
      expect(cancel.status).toBe(200);
    } finally {
      await wrong.close();
    }
  });
});

describe('a destination that is no longer a phone number', () => {
  it('is never submitted: a masked number (after an erasure) fails the message without a submit_sm', async () => {
    const at = new Date(t.kernel.clock.nowMs() + 3600_000).toISOString();
    const s = await t.request('POST', '/v1/sms/send', {
      key: a.pat,
      body: { to: ['+4791120031'], message: 'after erasure', scheduled_at: at },
    });
    expect(s.status).toBe(201);
    const id = s.body.sms_message_id as string;
    // As if an attempt had taken it to SENDING and the recipient was erased before its retry.
    await t.kernel.store.db
      .updateTable('sms_messages')
      .set({ status: 'SENDING', to_number: '+47********' })
      .where('id', '=', id)
      .execute();
    const before = smsc.submits.length;
    await t.advance(3601);
    await until(statusIs(id, 'FAILED'), 'FAILED');
    expect((await message(id)).error_message).toMatch(/not a valid E\.164/);
    expect(smsc.submits.slice(before).map((p) => p.destination_addr)).not.toContain('47********');
    expect(smsc.submits.slice(before).some((p) => String(p.destination_addr).includes('*'))).toBe(false);
  });
});
