import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/** The emulator inbox: one-time codes sent by the simulated e-mail and voice drivers can be read. */
let t: TestFjord;
let a: TestCustomer;
beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer();
});
afterAll(() => t?.close());

it('shows the e-mail and the call a code went out in, newest first, filtered by recipient', async () => {
  const mail = await t.request('POST', '/v1/verify/start', {
    key: a.pat,
    body: { channel: 'email', recipient: 'inbox@example.test' },
  });
  expect(mail.status, mail.text).toBe(200);
  const call = await t.request('POST', '/v1/verify/start', {
    key: a.pat,
    body: { channel: 'voice', recipient: '+4791234567' },
  });
  expect(call.status, call.text).toBe(200);

  const all = await t.operator('GET', '/admin/v1/emulator/inbox');
  expect(all.status, all.text).toBe(200);
  expect(all.body.messages.map((m: { kind: string }) => m.kind).sort()).toEqual(['email', 'voice']);

  const inbox = await t.operator('GET', '/admin/v1/emulator/inbox?to=inbox@example.test');
  expect(inbox.body.messages).toHaveLength(1);
  const code = /\b(\d{6})\b/.exec(inbox.body.messages[0].text)?.[1];
  expect(code).toBeDefined();
  const ok = await t.request('POST', '/v1/verify/check', {
    key: a.pat,
    body: { session_id: mail.body.session_id, code },
  });
  expect(ok.body.status).toBe('verified');

  const voice = await t.operator('GET', '/admin/v1/emulator/inbox?kind=voice&to=%2B4791234567');
  expect(voice.body.messages[0]).toMatchObject({ kind: 'voice', to: '+4791234567', subject: null });
  expect(voice.body.messages[0].text).toMatch(/\d/);
  expect((await t.request('GET', '/admin/v1/emulator/inbox', { key: a.pat })).status).toBe(401);
});
