import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifyService } from '../../src/areas/verify/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { codeIn, plainTextOf, startSmtpSink } from './verify-support/smtp.js';

let t: TestFjord;
let a: TestCustomer;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
let n = 0;
/** A fresh address per test, so the per-recipient pumping guard stays out of the way. */
const email = () => `user${++n}@example.test`;

beforeAll(async () => {
  smtp = await startSmtpSink();
  t = await TestFjord.create({
    FJORD_SMTP_URL: smtp.url,
    FJORD_MAIL_FROM: 'Fjord Test <no-reply@fjord.test>',
  });
  a = await t.customer();
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const req = (method: string, url: string, body?: unknown, key = a.pat) =>
  t.request(method, url, { key, body });
const start = (body: Record<string, unknown>, key = a.pat) => req('POST', '/v1/verify/start', body, key);
const check = (session_id: string, code: string, extra: Record<string, unknown> = {}) =>
  req('POST', '/v1/verify/check', { session_id, code, ...extra });
const status = (id: string) => req('GET', `/v1/verify/status/${id}`);
const wrong = (code: string) => (code[0] === '9' ? '0' : '9') + code.slice(1);

async function emailSession(body: Record<string, unknown> = {}) {
  const recipient = (body['recipient'] as string | undefined) ?? email();
  const r = await start({ channel: 'email', recipient, ...body });
  expect(r.status, r.text).toBe(200);
  const mail = smtp.lastTo(recipient);
  expect(mail, 'the SMTP server received the code').toBeDefined();
  return { id: r.body.session_id as string, code: codeIn(mail!.raw), start: r.body, mail: mail! };
}

describe('start by e-mail through a real SMTP server', () => {
  it('sends the code from the default no-reply address and verifies with it', async () => {
    const { id, code, start: s, mail } = await emailSession({ client_reference: 'signup-42' });
    expect(s).toEqual({
      session_id: id,
      status: 'delivered',
      channel: 'email',
      expires_at: expect.any(String),
      created_at: expect.any(String),
    });
    expect(Date.parse(s.expires_at) - Date.parse(s.created_at)).toBe(300_000);
    expect(code).toMatch(/^\d{6}$/);
    expect(mail.from).toBe('no-reply@fjord.test');
    expect(mail.raw).toMatch(/^Subject: Your verification code: \d{6}/m);
    const ok = await check(id, code);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      status: 'verified',
      verified_at: expect.any(String),
      error: null,
      attempts_remaining: 4,
    });
    const view = await status(id);
    expect(view.body).toMatchObject({
      session_id: id,
      channel: 'email',
      status: 'verified',
      attempt_count: 1,
      max_attempts: 5,
      client_reference: 'signup-42',
      error_message: null,
      verified_at: ok.body.verified_at,
    });
    expect(view.body.delivered_at).toEqual(expect.any(String));
  });

  it('sends from the customer’s verified e-mail domain when there is one', async () => {
    const svc = t.fjord.areas.get('verify')!.service as VerifyService;
    svc.delivery.senderDomains = { emailDomainsOf: async (c) => (c === a.id ? ['shop.example'] : []) };
    try {
      const { mail } = await emailSession();
      expect(mail.from).toBe('no-reply@shop.example');
    } finally {
      svc.delivery.senderDomains = { emailDomainsOf: async () => [] };
    }
  });

  it('writes in the session’s locale and honours code_length and ttl_seconds', async () => {
    const { code, mail, start: s } = await emailSession({ locale: 'sv', code_length: 4, ttl_seconds: 60 });
    expect(code).toMatch(/^\d{4}$/);
    expect(plainTextOf(mail.raw)).toContain('Din verifieringskod är');
    expect(Date.parse(s.expires_at) - Date.parse(s.created_at)).toBe(60_000);
    const nb = await emailSession({ locale: 'nb', code_length: 8 });
    expect(nb.code).toMatch(/^\d{8}$/);
    expect(plainTextOf(nb.mail.raw)).toContain('Din bekreftelseskode er');
  });

  it('keeps only a salted SHA-256 of the code', async () => {
    const { id, code } = await emailSession();
    const row = await t.kernel.store.db
      .selectFrom('verify_sessions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(code);
    expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.code_salt).toMatch(/^[0-9a-f]{32}$/);
    const again = await emailSession({ recipient: row.recipient.replace('@', '+x@') });
    const other = await t.kernel.store.db
      .selectFrom('verify_sessions')
      .select('code_salt')
      .where('id', '=', again.id)
      .executeTakeFirstOrThrow();
    expect(other.code_salt).not.toBe(row.code_salt);
  });
});

describe('check', () => {
  it('counts wrong codes, then fails and locks the session after five', async () => {
    const { id, code } = await emailSession();
    for (let left = 4; left >= 1; left--) {
      const r = await check(id, wrong(code));
      expect(r.body).toEqual({
        status: 'pending',
        verified_at: null,
        error: 'invalid_code',
        attempts_remaining: left,
      });
    }
    const fifth = await check(id, wrong(code));
    expect(fifth.body).toEqual({
      status: 'failed',
      verified_at: null,
      error: 'max_attempts_exceeded',
      attempts_remaining: 0,
    });
    const locked = await check(id, code);
    expect(locked.status).toBe(200);
    expect(locked.body.error).toBe('max_attempts_exceeded');
    expect((await status(id)).body).toMatchObject({ status: 'failed', attempt_count: 5 });
  });

  it('never lets concurrent wrong checks take more than five attempts', async () => {
    const { id, code } = await emailSession();
    const answers = await Promise.all(Array.from({ length: 12 }, () => check(id, wrong(code))));
    const invalid = answers.filter((r) => r.body.error === 'invalid_code').length;
    expect(invalid).toBe(4);
    expect((await status(id)).body.attempt_count).toBe(5);
    expect((await check(id, code)).body.status).toBe('failed');
  });

  it('expires on the clock: status and check show it after t.advance', async () => {
    t.freezeClock(); // Checked at 119 of 120 seconds.
    const { id, code } = await emailSession({ ttl_seconds: 120 });
    await t.advance(119);
    expect((await status(id)).body.status).toBe('delivered');
    await t.advance(1);
    expect((await status(id)).body.status).toBe('expired');
    const r = await check(id, code);
    expect(r.body).toEqual({
      status: 'expired',
      verified_at: null,
      error: 'session_expired',
      attempts_remaining: 5,
    });
  });

  it('answers 404 session_not_found for unknown, verified and cancelled sessions', async () => {
    const unknown = await check('vs_nope', '123456');
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail.code).toBe('session_not_found');
    const { id, code } = await emailSession();
    expect((await check(id, code)).body.status).toBe('verified');
    const replay = await check(id, code);
    expect(replay.status).toBe(404);
    expect(replay.body.detail.code).toBe('session_not_found');
  });

  it('adds ip_risk when client_ip is given', async () => {
    const { id, code } = await emailSession();
    const r = await check(id, wrong(code), { client_ip: '10.1.2.3' });
    expect(r.body.ip_risk).toEqual({
      ip: '10.1.2.3',
      score: 50,
      level: 'medium',
      is_private: true,
      range: 'private',
      country: null,
      reasons: [expect.stringContaining('private')],
      source: 'ip-intelligence',
    });
    const pub = await check(id, code, { client_ip: '2a00:1450:4001:82b::200e' });
    // Google's network: no reports, but a data centre's rather than an access network's address.
    expect(pub.body.ip_risk).toMatchObject({
      score: 30,
      level: 'medium',
      is_private: false,
      range: null,
      reasons: [expect.stringContaining('data centre')],
    });
    expect((await check('vs_nope', '1', { client_ip: 'not-an-ip' })).status).toBe(422);
  });

  it('scores a client_ip by what IP intelligence knows: its abuse reports raise ip_risk', async () => {
    const ip = '198.51.7.9'; // a public address no list flags
    const before = await start({ channel: 'email', recipient: email(), client_ip: ip });
    expect(before.body.ip_risk).toMatchObject({ ip, score: 0, level: 'low', reasons: [] });
    for (const categories of [
      [22, 18],
      [4, 15],
    ]) {
      const reported = await req('POST', '/v1/ip/report', { ip, categories });
      expect(reported.status, reported.text).toBe(201);
      await t.advance(16 * 60); // one report per address and reporter in 15 minutes
    }
    const after = await start({ channel: 'email', recipient: email(), client_ip: ip });
    expect(after.body.ip_risk.score).toBeGreaterThan(0);
    expect(after.body.ip_risk.reasons).toEqual([expect.stringContaining('2 abuse reports')]);
    expect(after.body.ip_risk.source).toBe('ip-intelligence');
  });
});

describe('start', () => {
  it('answers ip_risk only when client_ip is given, and keeps it on the session', async () => {
    const r = await start({
      channel: 'email',
      recipient: email(),
      client_ip: '127.0.0.1',
      metadata: { plan: 'pro' },
    });
    expect(r.body.ip_risk).toMatchObject({ range: 'loopback', is_private: true, level: 'medium' });
    const view = await status(r.body.session_id);
    expect(view.body.ip_risk).toEqual(r.body.ip_risk);
    expect(view.body.metadata).toEqual({ plan: 'pro' });
    const plain = await start({ channel: 'email', recipient: email() });
    expect(plain.body).not.toHaveProperty('ip_risk');
    expect((await status(plain.body.session_id)).body).not.toHaveProperty('ip_risk');
  });

  it.each([
    [{ channel: 'email', recipient: email(), code_length: 3 }, '/body/code_length'],
    [{ channel: 'email', recipient: email(), code_length: 9 }, '/body/code_length'],
    [{ channel: 'email', recipient: email(), ttl_seconds: 59 }, '/body/ttl_seconds'],
    [{ channel: 'email', recipient: email(), ttl_seconds: 901 }, '/body/ttl_seconds'],
    [{ channel: 'email', recipient: email(), locale: 'de' }, '/body/locale'],
    [{ channel: 'fax', recipient: email() }, '/body/channel'],
    [{ channel: 'email' }, '/body/recipient'],
    [{ channel: 'email', recipient: 'not-an-address' }, '/body/recipient'],
    [{ channel: 'voice', recipient: '12345678' }, '/body/recipient'],
    [{ channel: 'voice', recipient: '+4712345' }, '/body/recipient'],
    [{ channel: 'voice', recipient: '+4791234567', locale: 'nb' }, '/body/locale'],
    [{ channel: 'email', recipient: email(), client_ip: '999.1.1.1' }, '/body/client_ip'],
    [{ channel: 'email', recipient: email(), surprise: 1 }, '/body/surprise'],
    [{ channel: 'email', recipient: email(), metadata: { note: 'x'.repeat(5000) } }, '/body/metadata'],
    [{ channel: 'email', recipient: email(), metadata: 'text' }, '/body/metadata'],
  ])('refuses %j with 422 at %s', async (body, path) => {
    const r = await start(body);
    expect(r.status, r.text).toBe(422);
    expect(r.body.detail.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('guards against pumping: per recipient, and per number prefix', async () => {
    const recipient = email();
    for (let i = 0; i < 5; i++) expect((await start({ channel: 'email', recipient })).status).toBe(200);
    const sixth = await start({ channel: 'email', recipient });
    expect(sixth.status).toBe(429);
    expect(sixth.headers['retry-after']).toBeDefined();
    expect(sixth.body.error.message).toContain('this recipient');
    // Another customer is not held back by A's traffic.
    const b = await t.customer();
    expect((await start({ channel: 'email', recipient }, b.pat)).status).toBe(200);
  });

  it('bills the session fee and the (included) e-mail delivery', async () => {
    const { id } = await emailSession();
    const svc = t.fjord.areas.get('verify')!.service as VerifyService;
    const lines = await svc.charges(a.id, id);
    expect(lines.map((l) => [l.item, l.channel, l.amount_minor, l.currency])).toEqual([
      ['session', 'email', 50, 'NOK'],
      ['delivery', 'email', 0, 'NOK'],
    ]);
  });
});

describe('cancel', () => {
  it('cancels an open session once; the answer is the session', async () => {
    const { id, code } = await emailSession();
    const r = await req('DELETE', `/v1/verify/sessions/${id}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ session_id: id, status: 'cancelled' });
    expect((await req('DELETE', `/v1/verify/sessions/${id}`)).status).toBe(409);
    expect((await check(id, code)).status).toBe(404);
    expect((await req('DELETE', '/v1/verify/sessions/vs_nope')).status).toBe(404);
  });
});
