import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { OPERATOR_TOKEN, type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * Who may open a server's web terminal, on a real socket (a WebSocket upgrade never goes through
 * `inject`): the console session cookie with its CSRF token as a subprotocol and Fjord's own
 * Origin, and the server looked up by the session's customer. Servers here are simulated, which
 * the terminal answers with a close reason saying so.
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let origin: string;
let serverOfA: string;

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_API_PORT: '0' });
  await t.fjord.start(['api']);
  origin = new URL(t.kernel.baseUrl()).origin;
  a = await t.customer();
  b = await t.customer();
  const made = await t.request('POST', '/v1/vps', {
    key: a.pat,
    body: { hostname: 'term-a', plan_code: 'vps-1-2', region: 'oslo', os_template: 'debian-12' },
  });
  expect(made.status, made.text).toBe(201);
  serverOfA = made.body.id;
}, 60_000);
afterAll(() => t?.close());

async function signIn(token: string) {
  const r = await t.request('POST', '/console/session', { body: { token } });
  expect(r.status).toBe(201);
  const set = String(r.headers['set-cookie']);
  return { cookie: set.split(';')[0]!, csrf: r.body.csrf_token as string };
}

type Outcome = { refused: number } | { closed: number; reason: string; protocol: string };

/** Opens the terminal and answers the HTTP status of a refusal, or the close code and reason. */
function open(
  id: string,
  opts: { cookie?: string; protocols?: string[]; origin?: string },
): Promise<Outcome> {
  const url = `${origin.replace(/^http/, 'ws')}/console/vps/${id}/terminal?cols=100&rows=30`;
  const headers: Record<string, string> = {};
  if (opts.cookie) headers['cookie'] = opts.cookie;
  const ws = new WebSocket(url, opts.protocols ?? [], { headers, origin: opts.origin ?? origin });
  return new Promise((resolve, reject) => {
    ws.on('unexpected-response', (_req, res) => {
      resolve({ refused: res.statusCode ?? 0 });
      res.resume();
      ws.terminate();
    });
    ws.on('close', (code, reason) =>
      resolve({ closed: code, reason: reason.toString(), protocol: ws.protocol }),
    );
    ws.on('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) reject(err);
    });
  });
}

describe('the console terminal', () => {
  it('refuses a request without a session, with a wrong CSRF token, or from another origin', async () => {
    const { cookie, csrf } = await signIn(a.pat);
    const good = ['fjord-terminal', `fjord-csrf.${csrf}`];
    expect(await open(serverOfA, { protocols: good })).toEqual({ refused: 401 });
    expect(await open(serverOfA, { cookie, protocols: ['fjord-terminal'] })).toEqual({ refused: 401 });
    expect(
      await open(serverOfA, {
        cookie,
        protocols: ['fjord-terminal', `fjord-csrf.${'x'.repeat(csrf.length)}`],
      }),
    ).toEqual({ refused: 401 });
    // The CSRF token of another session does not fit this cookie.
    const other = await signIn(a.pat);
    expect(
      await open(serverOfA, { cookie, protocols: ['fjord-terminal', `fjord-csrf.${other.csrf}`] }),
    ).toEqual({ refused: 401 });
    expect(await open(serverOfA, { cookie, protocols: good, origin: 'http://evil.example' })).toEqual({
      refused: 403,
    });
    // Same host, another port: not Fjord's origin either.
    const { hostname } = new URL(origin);
    expect(await open(serverOfA, { cookie, protocols: good, origin: `http://${hostname}:1` })).toEqual({
      refused: 403,
    });
  });

  it("answers 404 for another customer's server and for none, before upgrading", async () => {
    const { cookie, csrf } = await signIn(b.pat);
    const protocols = ['fjord-terminal', `fjord-csrf.${csrf}`];
    expect(await open(serverOfA, { cookie, protocols })).toEqual({ refused: 404 });
    expect(await open('nosuchserver', { cookie, protocols })).toEqual({ refused: 404 });
  });

  it("refuses the operator's session and a PAT without vps:write", async () => {
    const operator = await signIn(OPERATOR_TOKEN);
    expect(
      await open(serverOfA, {
        cookie: operator.cookie,
        protocols: ['fjord-terminal', `fjord-csrf.${operator.csrf}`],
      }),
    ).toEqual({ refused: 403 });
    const { key } = await t.kernel.identity.createPat(a.id, ['vps:read'], 'read only');
    const ro = await signIn(key);
    expect(
      await open(serverOfA, { cookie: ro.cookie, protocols: ['fjord-terminal', `fjord-csrf.${ro.csrf}`] }),
    ).toEqual({ refused: 403 });
  });

  it('opens for the owner, and closes saying that simulated servers have no terminal', async () => {
    const { cookie, csrf } = await signIn(a.pat);
    const outcome = await open(serverOfA, { cookie, protocols: ['fjord-terminal', `fjord-csrf.${csrf}`] });
    expect(outcome).toMatchObject({ closed: 4503, protocol: 'fjord-terminal' });
    expect((outcome as { reason: string }).reason).toMatch(/only where servers really run/);
  });

  it('tells a plain GET to upgrade', async () => {
    const r = await t.request('GET', `/console/vps/${serverOfA}/terminal`);
    expect(r.status).toBe(426);
    expect(r.headers['upgrade']).toBe('websocket');
    expect(r.body.detail.code).toBe('upgrade_required');
  });
});
