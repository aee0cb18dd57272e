import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink } from '../areas/verify-support/smtp.js';
import { TestFjord } from '../helpers/fjord.js';
import { TinyDns } from '../helpers/tiny-dns.js';

/** Code verification sends e-mail from a domain the customer verified for `email`. */
let t: TestFjord;
let dns: TinyDns;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;

beforeAll(async () => {
  dns = await TinyDns.start();
  smtp = await startSmtpSink();
  t = await TestFjord.create({ FJORD_RESOLVER: dns.address, FJORD_SMTP_URL: smtp.url });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
  await dns.close();
});

describe('verification e-mail and verified sender domains', () => {
  it('sends from the default address until an e-mail domain is verified, then from that domain', async () => {
    const c = await t.customer();
    const start = (recipient: string) =>
      t.request('POST', '/v1/verify/start', { key: c.pat, body: { channel: 'email', recipient } });

    expect((await start('first@example.test')).status).toBeLessThan(300);
    const before = smtp.lastTo('first@example.test');
    expect(before?.from).not.toMatch(/@mail-sender\.test$/);

    const d = (
      await t.request('POST', '/v1/domain-verification/domains', {
        key: c.pat,
        body: { domain: 'mail-sender.test', purpose: 'email' },
      })
    ).body;
    dns.txt.set('_fjord.mail-sender.test', [d.instructions.record_value]);
    const v = await t.request('POST', `/v1/domain-verification/domains/${d.id}/verify`, { key: c.pat });
    expect(v.body.verified).toBe(true);

    expect((await start('second@example.test')).status).toBeLessThan(300);
    expect(smtp.lastTo('second@example.test')?.from).toBe('no-reply@mail-sender.test');
  });
});
