import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import { fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KernelTables } from '../../src/kernel/store/kernel-tables.js';
import {
  assertSafeTarget,
  isPrivateAddress,
  publicOnlyDispatcher,
  UnsafeTargetError,
} from '../../src/kernel/webhooks/ssrf-guard.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

interface Received {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real receiver on 127.0.0.1: answers each path with the statuses queued for it (200 when none are left). */
class Receiver {
  readonly requests: Received[] = [];
  private readonly plans = new Map<string, number[]>();
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      this.requests.push({
        path,
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const plan = this.plans.get(path);
      const status = plan?.length ? plan.shift()! : (this.always.get(path) ?? 200);
      if (status >= 300 && status < 400) res.setHeader('location', `${this.base}/redirected`);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(`status ${status}`);
    });
  });
  private readonly always = new Map<string, number>();
  base = '';

  async listen() {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  /** Answer `path` with these statuses in turn. */
  plan(path: string, ...statuses: number[]) {
    this.plans.set(path, statuses);
  }
  alwaysAnswer(path: string, status: number) {
    this.always.set(path, status);
  }
  to(path: string) {
    return this.requests.filter((r) => r.path === path);
  }
  close() {
    this.server.closeAllConnections();
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Verifies `Fjord-Signature: t=<unix>,v1=<hex>` the way a receiver would, without Fjord's code. */
function verifySignature(header: string | string[] | undefined, secret: string, rawBody: string) {
  expect(typeof header).toBe('string');
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header as string);
  expect(m, `signature header ${String(header)}`).not.toBeNull();
  const t = Number(m![1]);
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  return { t, valid: timingSafeEqual(expected, Buffer.from(m![2]!, 'hex')) };
}

let t: TestFjord;
let db: Kysely<KernelTables>;
let receiver: Receiver;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  receiver = new Receiver();
  await receiver.listen();
  t = await TestFjord.create({ FJORD_WEBHOOK_ALLOW_PRIVATE: '1' });
  db = t.kernel.store.typed<KernelTables>();
  a = await t.customer();
  b = await t.customer();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const secretOf = async (c: TestCustomer) => {
  const r = await t.request('GET', '/v1/webhooks/secret', { key: c.pat });
  expect(r.status).toBe(200);
  return r.body.secret as string;
};
const deliveryRow = (id: string) =>
  db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('signed delivery', () => {
  it('POSTs the JSON payload with a signature that verifies under the customer’s secret', async () => {
    const payload = { event: 'bucket.created', data: { name: 'photos', size: 3, note: 'ümlaut ✓' } };
    const id = await t.kernel.webhooks.send({
      customerId: a.id,
      url: `${receiver.base}/signed`,
      eventType: 'bucket.created',
      payload,
    });
    expect(receiver.to('/signed')).toHaveLength(0);
    await t.kernel.jobs.drain();

    const got = receiver.to('/signed');
    expect(got).toHaveLength(1);
    const req = got[0]!;
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['fjord-event-type']).toBe('bucket.created');
    expect(req.headers['fjord-delivery-id']).toBe(id);
    expect(JSON.parse(req.body)).toEqual(payload);

    const secret = await secretOf(a);
    expect(secret).toMatch(/^whsec_/);
    const sig = verifySignature(req.headers['fjord-signature'], secret, req.body);
    expect(sig.valid).toBe(true);
    // The timestamp is read from Fjord's clock.
    expect(sig.t).toBeLessThanOrEqual(Math.floor(t.kernel.clock.nowMs() / 1000));
    expect(sig.t).toBeGreaterThan(Math.floor(t.kernel.clock.nowMs() / 1000) - 60);
    // Another customer's secret, or a tampered body, does not verify.
    expect(verifySignature(req.headers['fjord-signature'], await secretOf(b), req.body).valid).toBe(false);
    expect(verifySignature(req.headers['fjord-signature'], secret, `${req.body} `).valid).toBe(false);

    const d = await deliveryRow(id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200, last_error: null });
    expect(d.delivered_at).not.toBeNull();
    const attempts = await t.kernel.webhooks.attemptsOf(id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ status_code: 200, error: null });
  });

  it('signs with the clock moved forward', async () => {
    await t.advance(7 * 86400);
    await t.kernel.webhooks.send({
      customerId: a.id,
      url: `${receiver.base}/later`,
      eventType: 'x.later',
      payload: { ok: true },
    });
    await t.kernel.jobs.drain();
    const req = receiver.to('/later')[0]!;
    const sig = verifySignature(req.headers['fjord-signature'], await secretOf(a), req.body);
    expect(sig.valid).toBe(true);
    expect(sig.t).toBeGreaterThan(Math.floor(Date.now() / 1000) + 6 * 86400);
  });

  it('keeps the signing secret sealed at rest', async () => {
    const secret = await secretOf(a);
    const row = await db
      .selectFrom('webhook_secrets')
      .selectAll()
      .where('customer_id', '=', a.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_sealed).not.toContain(secret);
    expect(row.secret_sealed).not.toContain(secret.slice('whsec_'.length));
  });
});

describe('retries', () => {
  it('retries a receiver answering 500 twice, then 200: three attempts, delivered', async () => {
    receiver.plan('/flaky', 500, 500, 200);
    const id = await t.kernel.webhooks.send({
      customerId: a.id,
      url: `${receiver.base}/flaky`,
      eventType: 'x.flaky',
      payload: { n: 1 },
    });
    await t.kernel.jobs.drain();
    expect(receiver.to('/flaky')).toHaveLength(1);
    expect(await deliveryRow(id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status_code: 500,
      last_error: 'HTTP 500',
    });

    // The retry waits for its backoff (10 s, then 20 s) on Fjord's clock.
    await t.kernel.jobs.drain();
    expect(receiver.to('/flaky')).toHaveLength(1);
    await t.advance(10);
    expect(receiver.to('/flaky')).toHaveLength(2);
    await t.advance(5);
    expect(receiver.to('/flaky')).toHaveLength(2);
    await t.advance(16);
    expect(receiver.to('/flaky')).toHaveLength(3);

    const d = await deliveryRow(id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 3, last_status_code: 200, last_error: null });
    const attempts = await t.kernel.webhooks.attemptsOf(id);
    expect(attempts.map((x) => x.status_code)).toEqual([500, 500, 200]);
    expect(attempts.map((x) => x.error)).toEqual(['HTTP 500', 'HTTP 500', null]);
    expect(attempts[1]!.attempted_at - attempts[0]!.attempted_at).toBeGreaterThanOrEqual(10_000);
    // Each attempt is the same event, signed afresh.
    const secret = await secretOf(a);
    for (const req of receiver.to('/flaky')) {
      expect(req.headers['fjord-delivery-id']).toBe(id);
      expect(req.body).toBe(JSON.stringify({ n: 1 }));
      expect(verifySignature(req.headers['fjord-signature'], secret, req.body).valid).toBe(true);
    }
    await t.advance(3600);
    expect(receiver.to('/flaky')).toHaveLength(3);
  });

  it('gives up on a receiver that always fails once the clock passes 24 h', async () => {
    receiver.alwaysAnswer('/down', 503);
    const id = await t.kernel.webhooks.send({
      customerId: a.id,
      url: `${receiver.base}/down`,
      eventType: 'x.down',
      payload: {},
    });
    await t.kernel.jobs.drain();
    for (let h = 0; h < 23; h++) await t.advance(3600);
    const before = await deliveryRow(id);
    expect(before.status).toBe('pending');
    expect(before.attempts).toBe(receiver.to('/down').length);
    expect(before.attempts).toBeGreaterThan(5);

    await t.advance(3600 + 60);
    const d = await deliveryRow(id);
    expect(d).toMatchObject({
      status: 'failed',
      last_status_code: 503,
      last_error: 'HTTP 503',
      delivered_at: null,
    });
    const made = receiver.to('/down').length;
    expect(d.attempts).toBe(made);
    expect(await t.kernel.webhooks.attemptsOf(id)).toHaveLength(made);

    // Failed for good: no more attempts, no job left behind.
    await t.advance(86400);
    expect(receiver.to('/down')).toHaveLength(made);
    const live = await db
      .selectFrom('jobs')
      .selectAll()
      .where('kind', '=', 'webhook.deliver')
      .where('status', '!=', 'failed')
      .execute();
    expect(live.filter((j) => j.payload.includes(id))).toEqual([]);
  });

  it('does not follow redirects', async () => {
    receiver.plan('/moved', 302);
    const id = await t.kernel.webhooks.send({
      customerId: a.id,
      url: `${receiver.base}/moved`,
      eventType: 'x.moved',
      payload: {},
    });
    await t.kernel.jobs.drain();
    expect(receiver.to('/moved')).toHaveLength(1);
    expect(receiver.to('/redirected')).toHaveLength(0);
    expect(await deliveryRow(id)).toMatchObject({ status: 'pending', last_status_code: 302 });
  });

  it('records a refused connection as an error and retries it', async () => {
    const closed = new Receiver();
    await closed.listen();
    const url = `${closed.base}/gone`;
    await closed.close();
    const id = await t.kernel.webhooks.send({ customerId: a.id, url, eventType: 'x.gone', payload: {} });
    await t.kernel.jobs.drain();
    const d = await deliveryRow(id);
    expect(d.status).toBe('pending');
    expect(d.last_status_code).toBeNull();
    expect(d.last_error).toBeTruthy();
  });
});

describe('delivery log API', () => {
  it('lists a customer’s deliveries newest first, and no one else’s', async () => {
    const c = await t.customer();
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      ids.push(
        await t.kernel.webhooks.send({
          customerId: c.id,
          url: `${receiver.base}/log`,
          eventType: `x.log.${n}`,
          payload: { n },
        }),
      );
      await t.advance(1);
    }
    const r = await t.request('GET', '/v1/webhooks/deliveries', { key: c.pat });
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(3);
    expect(r.body.deliveries.map((d: { id: string }) => d.id)).toEqual([...ids].reverse());
    expect(r.body.deliveries[0]).toEqual({
      id: ids[2],
      event_type: 'x.log.3',
      url: `${receiver.base}/log`,
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      created_at: expect.stringMatching(/Z$/),
      delivered_at: expect.stringMatching(/Z$/),
    });
    const times = r.body.deliveries.map((d: { created_at: string }) => Date.parse(d.created_at));
    expect(times[0]).toBeGreaterThan(times[1]);
    expect(times[1]).toBeGreaterThan(times[2]);

    const limited = await t.request('GET', '/v1/webhooks/deliveries', { key: c.pat, query: { limit: '2' } });
    expect(limited.body.deliveries.map((d: { id: string }) => d.id)).toEqual([ids[2], ids[1]]);

    const other = await t.request('GET', '/v1/webhooks/deliveries', { key: b.pat });
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ deliveries: [], total: 0 });

    const mine = await t.request('GET', '/v1/webhooks/deliveries', { key: a.pat });
    expect(mine.body.deliveries.some((d: { id: string }) => ids.includes(d.id))).toBe(false);
    expect(mine.body.total).toBeGreaterThan(0);
  });

  it('needs a credential', async () => {
    expect((await t.request('GET', '/v1/webhooks/deliveries')).status).toBe(401);
    expect((await t.request('GET', '/v1/webhooks/secret')).status).toBe(401);
    expect((await t.request('POST', '/v1/webhooks/secret/rotate')).status).toBe(401);
  });
});

describe('secret rotation', () => {
  it('gives each customer its own secret, and rotate replaces it for the next deliveries', async () => {
    const c = await t.customer();
    const s1 = await secretOf(c);
    expect(await secretOf(c)).toBe(s1);
    expect(await secretOf(b)).not.toBe(s1);

    const r = await t.request('POST', '/v1/webhooks/secret/rotate', { key: c.pat });
    expect(r.status).toBe(200);
    const s2 = r.body.secret as string;
    expect(s2).toMatch(/^whsec_/);
    expect(s2).not.toBe(s1);
    expect(r.body.signature_header).toContain('Fjord-Signature');
    expect(await secretOf(c)).toBe(s2);

    await t.kernel.webhooks.send({
      customerId: c.id,
      url: `${receiver.base}/rotated`,
      eventType: 'x.rotated',
      payload: { after: 'rotation' },
    });
    await t.kernel.jobs.drain();
    const req = receiver.to('/rotated')[0]!;
    expect(verifySignature(req.headers['fjord-signature'], s2, req.body).valid).toBe(true);
    expect(verifySignature(req.headers['fjord-signature'], s1, req.body).valid).toBe(false);
  });
});

describe('SSRF guard', () => {
  it('never reaches a loopback receiver unless private targets are allowed', async () => {
    const guarded = await TestFjord.create();
    try {
      const c = await guarded.customer();
      const targets = [`${receiver.base}/ssrf`, `${receiver.base.replace('127.0.0.1', 'localhost')}/ssrf`];
      const ids: string[] = [];
      for (const url of targets) {
        ids.push(
          await guarded.kernel.webhooks.send({ customerId: c.id, url, eventType: 'x.ssrf', payload: {} }),
        );
      }
      await guarded.kernel.jobs.drain();
      await guarded.advance(3600);
      expect(receiver.to('/ssrf')).toHaveLength(0);

      const r = await guarded.request('GET', '/v1/webhooks/deliveries', { key: c.pat });
      expect(r.body.deliveries).toHaveLength(2);
      for (const d of r.body.deliveries) {
        expect(d.status).toBe('failed');
        expect(d.attempts).toBe(1);
        expect(d.last_status_code).toBeNull();
        expect(d.last_error).toMatch(/private|loopback/);
        // The delivery's error names the setting that allows such a target.
        expect(d.last_error).toContain('FJORD_WEBHOOK_ALLOW_PRIVATE=true');
      }
      for (const id of ids) {
        const attempts = await guarded.kernel.webhooks.attemptsOf(id);
        expect(attempts).toHaveLength(1);
        expect(attempts[0]!.error).toMatch(/private|loopback/);
      }
    } finally {
      await guarded.close();
    }
  });

  it.each([
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.254',
    '192.168.0.1',
    '169.254.169.254',
    '127.0.0.1',
    '127.10.20.30',
    '0.0.0.0',
    '100.64.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    'not-an-address',
  ])('counts %s as private', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '172.15.255.255',
    '11.0.0.1',
    '2606:2800:21f:cb07:6820:80da:af6b:8b2c',
    '2001:4860:4860::8888',
    '::ffff:93.184.215.14',
  ])('counts %s as public', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it.each([
    'http://127.0.0.1/',
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f.0.0.1/',
    'http://[::1]:8080/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'https://10.1.2.3/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
    'http://localhost/',
  ])('refuses %s', async (url) => {
    const err = await assertSafeTarget(url, false).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeTargetError);
    expect((err as Error).message).toMatch(/private|loopback/);
  });

  it('allows a public address', async () => {
    const url = await assertSafeTarget('https://93.184.215.14/hooks?x=1', false);
    expect(url.hostname).toBe('93.184.215.14');
    expect((await assertSafeTarget('http://[2001:4860:4860::8888]:8443/', false)).port).toBe('8443');
  });

  it.each([
    'ftp://93.184.215.14/',
    'file:///etc/passwd',
    'gopher://93.184.215.14/',
    'ws://93.184.215.14/',
    'javascript:alert(1)',
  ])('refuses the non-http scheme %s, even when private targets are allowed', async (url) => {
    for (const allowPrivate of [false, true]) {
      const err = await assertSafeTarget(url, allowPrivate).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnsafeTargetError);
      expect((err as Error).message).toMatch(/scheme/);
    }
  });

  it('refuses relative URLs and credentials in the URL', async () => {
    await expect(assertSafeTarget('/hooks', true)).rejects.toThrow(UnsafeTargetError);
    await expect(assertSafeTarget('https://user:pw@93.184.215.14/', false)).rejects.toThrow(/credentials/);
  });

  it('lets private targets through when the operator allows them', async () => {
    expect((await assertSafeTarget('http://127.0.0.1:9/', true)).hostname).toBe('127.0.0.1');
  });
});

describe('DNS rebinding', () => {
  it('refuses at connect time a name that resolves to a private address', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      // `localhost` stands in for a public name re-pointed at a private address after the check.
      const attempt = undiciFetch(`http://localhost:${port}/`, { dispatcher: publicOnlyDispatcher() });
      const err = await attempt.then(
        () => null,
        (e: unknown) => e,
      );
      expect((err as { cause?: unknown })?.cause).toBeInstanceOf(UnsafeTargetError);
      expect(hits).toBe(0);
      // The same request without the guard reaches the server, so the refusal above is the guard's.
      const plain = await undiciFetch(`http://localhost:${port}/`);
      expect(plain.status).toBe(200);
      expect(hits).toBe(1);
    } finally {
      server.close();
    }
  });
});

describe('IPv6 forms that reach IPv4 or local networks', () => {
  it('are refused', () => {
    for (const address of [
      '::127.0.0.1',
      '::ffff:0:7f00:1',
      '2002:7f00:1::1',
      '64:ff9b:1::7f00:1',
      'fec0::1',
      '100::1',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    expect(isPrivateAddress('2606:4700:4700::1111')).toBe(false);
    expect(isPrivateAddress('93.184.215.14')).toBe(false);
  });
});

describe('scrubbing the delivery log (erasure)', () => {
  it('rewrites a value in one customer’s stored payloads, URLs and attempt errors, and no one else’s', async () => {
    const c = await t.customer();
    const d = await t.customer();
    receiver.plan('/scrub/+4791234567', 500);
    const mine = await t.kernel.webhooks.send({
      customerId: c.id,
      url: `${receiver.base}/scrub/+4791234567`,
      eventType: 'x.scrub',
      payload: { to_number: '+4791234567', other: '+4791234568' },
    });
    const theirs = await t.kernel.webhooks.send({
      customerId: d.id,
      url: `${receiver.base}/scrub`,
      eventType: 'x.scrub',
      payload: { to_number: '+4791234567' },
    });
    await t.advance(0);
    // Make the attempt's error text carry the value too, as a receiver's answer might.
    await db
      .updateTable('webhook_attempts')
      .set({ error: 'HTTP 500 for +4791234567' })
      .where('delivery_id', '=', mine)
      .execute();

    expect(await t.kernel.webhooks.scrub(c.id, '+4791234567', '+47********')).toBe(1);
    const row = await deliveryRow(mine);
    expect(JSON.parse(row.payload)).toEqual({ to_number: '+47********', other: '+4791234568' });
    expect(row.url).toBe(`${receiver.base}/scrub/+47********`);
    const attempts = await t.kernel.webhooks.attemptsOf(mine);
    expect(attempts.map((x) => x.error)).toEqual(['HTTP 500 for +47********']);
    expect(JSON.parse((await deliveryRow(theirs)).payload)).toEqual({ to_number: '+4791234567' });
    expect(await t.kernel.webhooks.scrub(c.id, '+4791234567', '+47********')).toBe(0);
  });
});
