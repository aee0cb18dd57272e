// The `fjord` command as people run it: real processes (`node bin/fjord.js …`), real sockets,
// on a fresh store of the run's engine (SQLite, or PostgreSQL with FJORD_TEST_STORE=postgres).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_MIGRATIONS } from '../../src/app/fjord.js';
import { freshTestStore, type TestStoreHandle } from '../helpers/store.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FJORD = join(ROOT, 'bin', 'fjord.js');
const STACK_FRAME = /^\s+at .+/m;

/** The parent's environment without any FJORD_* (FJORD_TEST_STORE would be an "unknown variable"). */
function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FJORD_')) env[k] = v;
  return { ...env, ...extra };
}

function storeEnv(store: TestStoreHandle, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return baseEnv({
    FJORD_DATA_DIR: store.dataDir,
    ...(store.databaseUrl ? { FJORD_DATABASE_URL: store.databaseUrl } : {}),
    FJORD_LOG_LEVEL: 'warn',
    ...extra,
  });
}

const children = new Set<ChildProcess>();

function spawnFjord(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [FJORD, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs one `fjord` command to completion. */
function fjord(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawnFjord(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`fjord ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

interface Server {
  child: ChildProcess;
  url: string;
  devCredentialsPath: string | null;
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM, then the exit code (SIGKILL and a rejection if it does not exit within `timeoutMs`). */
  stop(timeoutMs?: number): Promise<number | null>;
}

const API_LINE = /^\s*api\s+http\s+(http:\/\/127\.0\.0\.1:\d+)\s*$/m;
const DEV_CREDENTIALS_LINE = /Development credentials: (\S+)/;

/** `fjord start …`, resolved once the banner (with the API listener) is on stdout. */
function startServer(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<Server> {
  const child = spawnFjord(['start', ...args], env);
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no banner within ${timeoutMs} ms\nstdout:\n${out}\nstderr:\n${err}`));
    }, timeoutMs);
    const check = () => {
      const api = API_LINE.exec(out);
      // The banner is one write ending in a blank line; wait for all of it.
      if (!api || !/\n\n$/.test(out.slice(out.indexOf('Listeners')))) return;
      clearTimeout(timer);
      resolve({
        child,
        url: api[1]!,
        devCredentialsPath: DEV_CREDENTIALS_LINE.exec(out)?.[1] ?? null,
        stdout: () => out,
        stderr: () => err,
        async stop(stopTimeoutMs = 20_000) {
          if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
          child.kill('SIGTERM');
          let t: NodeJS.Timeout | undefined;
          const timeout = new Promise<never>((_, rej) => {
            t = setTimeout(() => {
              child.kill('SIGKILL');
              rej(new Error(`fjord did not exit within ${stopTimeoutMs} ms of SIGTERM\n${err}`));
            }, stopTimeoutMs);
          });
          try {
            return await Promise.race([exited, timeout]);
          } finally {
            clearTimeout(t);
          }
        },
      });
    };
    child.stdout!.on('data', (d) => {
      out += d;
      check();
    });
    child.stderr!.on('data', (d) => {
      err += d;
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(
        new Error(`fjord start exited with ${code} before its banner\nstdout:\n${out}\nstderr:\n${err}`),
      );
    });
  });
}

const PROFILE_FIELDS = [
  'company',
  'created_at',
  'customer_id',
  'customer_type',
  'email',
  'first_name',
  'last_name',
  'status',
];

const getJson = async (url: string, key?: string) => {
  const res = await fetch(url, { headers: key ? { 'x-api-key': key } : {} });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  return { res, text, body: body as any };
};

const stores: TestStoreHandle[] = [];
async function newStore() {
  const s = await freshTestStore();
  stores.push(s);
  return s;
}

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(stores.map((s) => s.drop().catch(() => {})));
});

describe('fjord CLI with no server running', () => {
  let store: TestStoreHandle;
  beforeAll(async () => {
    store = await newStore();
  });

  it('migrate prints the migrations it applied, and applies none the second time', async () => {
    const first = await fjord(['migrate'], storeEnv(store));
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ applied: Object.keys(ALL_MIGRATIONS()).sort() });
    const second = await fjord(['migrate'], storeEnv(store));
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({ applied: [] });
  });

  it('answers --help on every command and --version without doing anything else', async () => {
    const fresh = await newStore();
    for (const args of [
      ['--help'],
      ['start', '--help'],
      ['migrate', '--help'],
      ['admin', 'customer', 'create', '-h'],
    ]) {
      const r = await fjord(args, storeEnv(fresh));
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^usage: fjord <command>/);
      expect(r.stderr).toBe('');
    }
    // Nothing ran: the next migrate applies every migration.
    const migrated = await fjord(['migrate'], storeEnv(fresh));
    expect(JSON.parse(migrated.stdout).applied.length).toBeGreaterThan(0);
    const v = await fjord(['--version'], storeEnv(fresh));
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^fjord \d+\.\d+\.\d+\n$/);
    const bad = await fjord(['admin', 'customer', 'create', '--bogus'], storeEnv(fresh));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^fjord: Unknown option '--bogus'\nusage: fjord/);
    await fresh.drop();
  });

  it('an unknown FJORD_* variable only warns on stderr', async () => {
    const r = await fjord(['migrate'], storeEnv(store, { FJORD_NOPE: '1' }));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ applied: [] });
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/warning: .*FJORD_NOPE/)]);
  });

  it('admin customer create prints one JSON object with the customer and its PAT', async () => {
    const r = await fjord(
      [
        'admin',
        'customer',
        'create',
        '--email',
        'a@example.test',
        '--type',
        'business',
        '--first-name',
        'Ada',
      ],
      storeEnv(store),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const out = JSON.parse(r.stdout);
    expect(out).toEqual({
      customer_id: expect.any(String),
      short_id: expect.any(String),
      email: 'a@example.test',
      first_name: 'Ada',
      last_name: null,
      company: null,
      customer_type: 'business',
      status: 'active',
      plan: 'free',
      created_at: expect.any(String),
      pat: expect.stringMatching(/^fjp_/),
      pat_id: expect.any(String),
    });
    expect(new Date(out.created_at).toISOString()).toBe(out.created_at);
  });

  it('a second customer with the same e-mail is refused with a message, not a stack trace', async () => {
    const r = await fjord(['admin', 'customer', 'create', '--email', 'A@example.test'], storeEnv(store));
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/already exists/);
    expect(r.stderr).not.toMatch(STACK_FRAME);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a bad --type exits 2 with the usage', async () => {
    const r = await fjord(
      ['admin', 'customer', 'create', '--email', 'c@example.test', '--type', 'alien'],
      storeEnv(store),
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/--type/);
    expect(r.stderr).toMatch(/usage: fjord/);
    expect(r.stderr).not.toMatch(STACK_FRAME);
  });

  it('lists the customers it created', async () => {
    const r = await fjord(['admin', 'customer', 'list'], storeEnv(store));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { customer_id: expect.any(String), email: 'a@example.test', status: 'active', plan: 'free' },
    ]);
  });

  it('moves a customer to another plan, and refuses an unknown plan', async () => {
    const r = await fjord(
      ['admin', 'customer', 'plan', '--email', 'a@example.test', '--plan', 'pro'],
      storeEnv(store),
    );
    expect(r.code, r.stderr).toBe(0);
    const list = await fjord(['admin', 'customer', 'list'], storeEnv(store));
    expect(JSON.parse(list.stdout)[0].plan).toBe('pro');
    const bad = await fjord(
      ['admin', 'customer', 'plan', '--email', 'a@example.test', '--plan', 'gold'],
      storeEnv(store),
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/plan/);
    expect(bad.stderr).not.toMatch(STACK_FRAME);
  });
});

describe('fjord start --roles api,worker', () => {
  let store: TestStoreHandle;
  let server: Server;
  let customer: { customer_id: string; pat: string; email: string };
  const env = () =>
    storeEnv(store, { FJORD_API_PORT: '0', FJORD_DEV_CREDENTIALS: '1', FJORD_LOG_LEVEL: 'warn' });

  beforeAll(async () => {
    store = await newStore();
    server = await startServer(['--roles', 'api,worker'], env());
  });
  afterAll(async () => {
    await server?.stop().catch(() => {});
  });

  it('prints a banner with the API address and the development credentials file', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toMatch(/:0$/);
    expect(server.stdout()).toMatch(/Fjord is up in \d+ ms/);
    expect(server.stdout()).toMatch(/worker\s+jobs, schedules and webhook delivery/);
    expect(server.devCredentialsPath).not.toBeNull();
  });

  it('admin customer create works while the server runs, and the PAT authenticates at once', async () => {
    const r = await fjord(['admin', 'customer', 'create', '--email', 'b@example.test'], storeEnv(store));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    customer = JSON.parse(r.stdout);
    expect(customer.pat).toMatch(/^fjp_/);

    const { res, body } = await getJson(`${server.url}/v1/account/profile`, customer.pat);
    expect(res.status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(PROFILE_FIELDS);
    expect(body).toMatchObject({
      customer_id: customer.customer_id,
      email: 'b@example.test',
      first_name: null,
      last_name: null,
      company: null,
      customer_type: 'private',
      status: 'active',
    });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const limit = Number(res.headers.get('x-ratelimit-limit'));
    const remaining = Number(res.headers.get('x-ratelimit-remaining'));
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    expect(limit).toBeGreaterThan(0);
    expect(remaining).toBe(limit - 1);
    expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));

    const again = await fetch(`${server.url}/v1/account/profile`, {
      headers: { 'x-api-key': customer.pat, 'x-request-id': 'e2e-trace-1' },
    });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-request-id')).toBe('e2e-trace-1');
    expect(Number(again.headers.get('x-ratelimit-remaining'))).toBe(limit - 2);
  });

  it('refuses a request without a key or with a wrong one', async () => {
    const none = await getJson(`${server.url}/v1/account/profile`);
    expect(none.res.status).toBe(401);
    expect(none.body.detail.code).toEqual(expect.any(String));
    expect(none.res.headers.get('x-request-id')).toBeTruthy();
    const wrong = await getJson(`${server.url}/v1/account/profile`, `${customer.pat}x`);
    expect(wrong.res.status).toBe(401);
  });

  it('writes the development credentials file with mode 0600, and its PAT works', async () => {
    const path = server.devCredentialsPath!;
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const creds = JSON.parse(readFileSync(path, 'utf8'));
    expect(creds.api_url).toBe(server.url);
    const { res, body } = await getJson(`${server.url}/v1/account/profile`, creds.pat);
    expect(res.status).toBe(200);
    expect(body.customer_id).toBe(creds.customer_id);
    expect(body.email).toBe(creds.email);
  });

  it('answers /healthz, /readyz, /metrics, /openapi.json and /docs', async () => {
    const health = await getJson(`${server.url}/healthz`);
    expect(health.res.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok', roles: ['api', 'worker'] });

    const ready = await getJson(`${server.url}/readyz`);
    expect(ready.res.status).toBe(200);
    expect(ready.body.status).toBe('ready');

    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await metrics.text();
    expect(text).toContain('fjord_http_request_duration_seconds');
    expect(text).toMatch(/fjord_http_request_duration_seconds_count\{[^}]*route="\/v1\/account\/profile"/);

    const openapi = await getJson(`${server.url}/openapi.json`);
    expect(openapi.res.status).toBe(200);
    expect(openapi.res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(openapi.body.openapi).toBe('3.1.0');
    expect(openapi.body.paths['/v1/account/profile']).toBeDefined();
    expect(openapi.body.servers).toEqual([{ url: server.url }]);

    const docs = await fetch(`${server.url}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await docs.text()).toMatch(/<html/i);
    const uiDocument = await getJson(`${server.url}/docs/json`);
    expect(uiDocument.res.status).toBe(200);
    expect(uiDocument.body.servers).toEqual([{ url: server.url }]);
  });

  it('exits 0 on SIGTERM, and a restart on the same store keeps the customer and its PAT', async () => {
    const credsPath = server.devCredentialsPath!;
    const devPat = JSON.parse(readFileSync(credsPath, 'utf8')).pat as string;
    expect(await server.stop()).toBe(0);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();

    // Restarted with an unknown variable too: it only warns.
    server = await startServer(['--roles', 'api,worker'], { ...env(), FJORD_NOPE: '1' });
    expect(server.stderr()).toMatch(/warning: .*FJORD_NOPE/);
    const { res, body } = await getJson(`${server.url}/v1/account/profile`, customer.pat);
    expect(res.status).toBe(200);
    expect(body.customer_id).toBe(customer.customer_id);
    expect(body.email).toBe('b@example.test');
    expect((await getJson(`${server.url}/v1/account/profile`, devPat)).res.status).toBe(200);

    const list = await fjord(['admin', 'customer', 'list'], storeEnv(store));
    expect(JSON.parse(list.stdout).map((c: { email: string }) => c.email)).toEqual(
      expect.arrayContaining(['b@example.test', 'developer@fjord.local']),
    );
    expect(await server.stop()).toBe(0);
  }, 90_000);
});

describe('fjord start with invalid configuration', () => {
  it('exits 2 and names every bad variable on a line of its own', async () => {
    const store = await newStore();
    const r = await fjord(['start'], storeEnv(store, { FJORD_API_PORT: 'abc', FJORD_HOST: 'bad host!' }));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toMatch(STACK_FRAME);
    const lines = r.stderr.split('\n');
    expect(lines.filter((l) => l.includes('FJORD_API_PORT'))).toEqual([expect.stringContaining('abc')]);
    expect(lines.filter((l) => l.includes('FJORD_HOST'))).toEqual([expect.stringContaining('bad host!')]);
  });

  it('a bad role exits 2', async () => {
    const store = await newStore();
    const r = await fjord(['start', '--roles', 'api,teleport'], storeEnv(store, { FJORD_API_PORT: '0' }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/teleport/);
  });
});
