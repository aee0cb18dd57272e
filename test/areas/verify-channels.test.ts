import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedVoiceDriver } from '../../src/areas/verify/drivers/voice.js';
import type { VerifyService } from '../../src/areas/verify/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { codeIn } from './verify-support/smtp.js';

const BUSY = '+4791111111';
const NO_ANSWER = '+4792222222';
const SMS_FAILS = '+4793333333';

let t: TestFjord;
let a: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_VOICE_SIMULATED_BUSY: BUSY,
    FJORD_VOICE_SIMULATED_NO_ANSWER: NO_ANSWER,
    FJORD_SMS_DRIVER: 'sandbox',
    FJORD_SMS_SANDBOX_DELIVERY_SECONDS: '3',
    FJORD_SMS_SANDBOX_FAIL_NUMBERS: SMS_FAILS,
  });
  a = await t.customer();
});
afterAll(() => t?.close());

const req = (method: string, url: string, body?: unknown, key = a.pat) =>
  t.request(method, url, { key, body });
const start = (body: Record<string, unknown>, key = a.pat) => req('POST', '/v1/verify/start', body, key);
const check = (session_id: string, code: string) => req('POST', '/v1/verify/check', { session_id, code });
const status = async (id: string) => (await req('GET', `/v1/verify/status/${id}`)).body;
const service = () => t.fjord.areas.get('verify')!.service as VerifyService;
const voice = () => service().delivery.voice as SimulatedVoiceDriver;

/** The VERIFY message the SMS area holds for `to`, read through the SMS API. */
async function verifyMessageTo(to: string, key = a.pat) {
  const r = await t.request('GET', '/v1/sms/messages', {
    key,
    query: { message_type: 'VERIFY', recipient: to },
  });
  expect(r.status, r.text).toBe(200);
  expect(r.body.messages.length).toBeGreaterThan(0);
  return r.body.messages[0];
}

describe('sms through the SMS pipeline and the sandbox SMSC', () => {
  it('needs a sender profile on the account', async () => {
    const b = await t.customer();
    const r = await start({ recipient: '+4791234567' }, b.pat);
    expect(r.status).toBe(400);
    expect(r.body.detail.code).toBe('sender_profile_required');
  });

  it('sends the code as a VERIFY message, becomes delivered with the SMS, and verifies', async () => {
    const profile = await req('POST', '/v1/sms/sender-profiles', { name: 'Main', sender_id: '+4790000001' });
    expect(profile.status, profile.text).toBeLessThan(300);
    const r = await start({ recipient: '+47 912 34 567'.replaceAll(' ', ''), locale: 'da' });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ status: 'pending', channel: 'sms' });
    const id = r.body.session_id;

    const sms = await verifyMessageTo('+4791234567');
    expect(sms).toMatchObject({ message_type: 'VERIFY', from_number: '+4790000001', direction: 'OUTBOUND' });
    expect(sms.body).toMatch(/^Din bekræftelseskode er \d{6}\. Den er gyldig i 5 min\.$/);
    expect((await status(id)).status).toBe('pending');

    await t.advance(0); // the pipeline submits to the sandbox SMSC…
    await t.advance(3); // …which reports delivery 3 s later
    const delivered = await status(id);
    expect(delivered.status).toBe('delivered');
    expect(delivered.delivered_at).toEqual(expect.any(String));

    const ok = await check(id, codeIn(sms.body));
    expect(ok.body).toMatchObject({ status: 'verified', error: null, attempts_remaining: 4 });
    const lines = await service().charges(a.id, id);
    expect(lines.map((l) => [l.item, l.quantity, l.amount_minor, l.currency])).toEqual([
      ['session', 1, 50, 'NOK'],
      ['delivery', 1, 99, 'NOK'],
    ]);
  });

  it('ends the session when the SMS cannot be delivered', async () => {
    const r = await start({ recipient: SMS_FAILS });
    expect(r.status, r.text).toBe(200);
    await t.advance(0);
    await t.advance(3);
    const s = await status(r.body.session_id);
    expect(s.status).toBe('failed');
    expect(s.error_message).toMatch(/SMS could not be delivered/);
    const c = await check(r.body.session_id, '000000');
    expect(c.body).toMatchObject({ status: 'failed', error: null, attempts_remaining: 5 });
  });

  it('expires an SMS session on the clock', async () => {
    const r = await start({ recipient: '+4741234567', ttl_seconds: 60 });
    await t.advance(60);
    expect((await status(r.body.session_id)).status).toBe('expired');
    const code = codeIn((await verifyMessageTo('+4741234567')).body);
    expect((await check(r.body.session_id, code)).body.error).toBe('session_expired');
  });
});

describe('voice through the simulated driver', () => {
  it('reads the code twice in the session’s locale and is delivered once read', async () => {
    const r = await start({ channel: 'voice', recipient: '+4798765432', locale: 'no', code_length: 5 });
    expect(r.status, r.text).toBe(200);
    expect(r.body.status).toBe('pending');
    const [call] = voice().callsTo('+4798765432');
    expect(call).toMatchObject({ callerId: '+4721000000', locale: 'no', outcome: 'answered' });
    const first = /^Din bekreftelseskode er: ((?:\d, ){4}\d)\.$/.exec(call!.script[0]!);
    expect(first, call!.script[0]).not.toBeNull();
    expect(call!.script[1]).toBe(`Jeg gjentar: ${first![1]}.`);
    const code = first![1]!.replaceAll(', ', '');

    await t.advance(60);
    const s = await status(r.body.session_id);
    expect(s.status).toBe('delivered');
    expect((await check(r.body.session_id, code)).body.status).toBe('verified');
    const lines = await service().charges(a.id, r.body.session_id);
    expect(lines.map((l) => [l.item, l.quantity, l.amount_minor])).toEqual([
      ['session', 1, 50],
      ['delivery', 1, 150],
    ]);
  });

  it('answers voice_busy for a busy line', async () => {
    const r = await start({ channel: 'voice', recipient: BUSY });
    await t.advance(2);
    const s = await status(r.body.session_id);
    expect(s).toMatchObject({ status: 'failed', error_message: 'The line was busy.' });
    const c = await check(r.body.session_id, '123456');
    expect(c.status).toBe(200);
    expect(c.body).toEqual({
      status: 'failed',
      verified_at: null,
      error: 'voice_busy',
      attempts_remaining: 5,
    });
  });

  it('answers voice_no_answer once the call rang out', async () => {
    t.freezeClock(); // Checked at 29 of 30 seconds.
    const r = await start({ channel: 'voice', recipient: NO_ANSWER });
    await t.advance(29);
    expect((await status(r.body.session_id)).status).toBe('pending');
    await t.advance(1);
    expect((await status(r.body.session_id)).status).toBe('failed');
    const c = await check(r.body.session_id, '123456');
    expect(c.body).toEqual({
      status: 'failed',
      verified_at: null,
      error: 'voice_no_answer',
      attempts_remaining: 5,
    });
    expect(await service().charges(a.id, r.body.session_id)).toHaveLength(1);
  });

  it('guards number prefixes against pumping', async () => {
    const limited = await TestFjord.create({
      FJORD_RATE_LIMITS: JSON.stringify({ 'verify.prefix': { points: 3, duration: 3600 } }),
    });
    try {
      const c = await limited.customer();
      const go = (to: string) =>
        limited.request('POST', '/v1/verify/start', {
          key: c.pat,
          body: { channel: 'voice', recipient: to },
        });
      for (const to of ['+4791200001', '+4791200002', '+4791200003']) expect((await go(to)).status).toBe(200);
      const fourth = await go('+4791200004');
      expect(fourth.status).toBe(429);
      expect(fourth.body.error.message).toContain('+479120');
      expect((await go('+4741200004')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('e-mail hand-over failure', () => {
  it('answers 502 delivery_failed when the SMTP server cannot be reached, and ends the session', async () => {
    // A port that was just free: nothing listens there.
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    const down = await TestFjord.create({ FJORD_SMTP_URL: `smtp://127.0.0.1:${port}` });
    try {
      const c = await down.customer();
      const r = await down.request('POST', '/v1/verify/start', {
        key: c.pat,
        body: { channel: 'email', recipient: 'someone@example.test' },
      });
      expect(r.status).toBe(502);
      expect(r.body.detail.code).toBe('delivery_failed');
      const rows = await down.kernel.store.db.selectFrom('verify_sessions').selectAll().execute();
      expect(rows.map((x) => [x.status, x.error_message])).toEqual([
        ['failed', 'The e-mail could not be handed over for delivery.'],
      ]);
    } finally {
      await down.close();
    }
  });
});
