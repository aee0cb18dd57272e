import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { onTestFinished } from 'vitest';
import { ALL_MIGRATIONS, Fjord } from '../../src/app/fjord.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/kernel/log.js';
import type { AreaModule } from '../../src/kernel/wiring.js';
import { freshTestStore } from './store.js';

export const OPERATOR_TOKEN = 'test-operator-token-0123456789';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  body: any;
  text: string;
  /** The body's bytes (for binary answers). */
  raw: Buffer;
}

export interface RequestOptions {
  key?: string | null;
  bearer?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export interface TestCustomer {
  id: string;
  shortId: string;
  email: string;
  /** A PAT holding every scope. */
  pat: string;
}

/**
 * A whole Fjord on a fresh store (SQLite or PostgreSQL, per the run), in emulator mode, driven
 * through `inject` — no sockets. Every log line is kept in `logs` so tests can check redaction.
 */
export class TestFjord {
  readonly logs: string[] = [];
  private constructor(
    readonly fjord: Fjord,
    private readonly dropStore: () => Promise<void>,
  ) {}

  static async create(
    env: Record<string, string> = {},
    opts: { fetchImpl?: typeof fetch; areas?: AreaModule[] } = {},
  ): Promise<TestFjord> {
    // The store comes migrated (a copy of a template) when this Fjord runs every area, as most do.
    const handle = await freshTestStore(opts.areas ? {} : { migrations: () => ALL_MIGRATIONS() });
    const config = loadConfig({
      FJORD_DATA_DIR: handle.dataDir,
      FJORD_LOG_LEVEL: 'info',
      FJORD_DEV_CREDENTIALS: '0',
      FJORD_EMULATOR: '1',
      FJORD_OPERATOR_TOKEN: OPERATOR_TOKEN,
      FJORD_WORKER_POLL_MS: '50',
      // Customer databases are simulated unless a test asks for real servers (the databases tests
      // share one pair of servers per file): no TestFjord waits for initdb by accident.
      FJORD_DATABASE_ENGINES: 'simulated',
      ...(handle.databaseUrl ? { FJORD_DATABASE_URL: handle.databaseUrl } : {}),
      ...env,
    });
    const logs: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        logs.push(String(chunk));
        done();
      },
    });
    const log: Logger = createLogger(config.logLevel, sink);
    let fjord: Fjord;
    try {
      fjord = await Fjord.create({ config, log, fetchImpl: opts.fetchImpl, areas: opts.areas });
    } catch (err) {
      await handle.drop();
      throw err;
    }
    const t = new TestFjord(fjord, handle.drop);
    (t as { logs: string[] }).logs = logs;
    return t;
  }

  get kernel() {
    return this.fjord.kernel;
  }

  async customer(
    email = `c${Math.random().toString(36).slice(2)}@example.test`,
    type: 'private' | 'business' = 'private',
  ): Promise<TestCustomer> {
    const c = await this.kernel.identity.createCustomer({
      email,
      customerType: type,
      firstName: 'Test',
      lastName: 'User',
    });
    const { key } = await this.kernel.identity.createFullPat(c.id, 'test');
    return { id: c.id, shortId: c.short_id, email: c.email, pat: key };
  }

  async request(method: string, url: string, opts: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.key) headers['x-api-key'] = opts.key;
    if (opts.bearer) headers['authorization'] = `Bearer ${opts.bearer}`;
    let payload: string | undefined;
    if (opts.rawBody !== undefined) payload = opts.rawBody;
    else if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await this.fjord.http.inject({
      method: method as 'GET',
      url,
      headers,
      payload,
      query: opts.query,
    });
    let body: unknown = null;
    try {
      body = res.body ? JSON.parse(res.body) : null;
    } catch {
      body = null;
    }
    return { status: res.statusCode, headers: res.headers, body, text: res.body, raw: res.rawPayload };
  }

  operator(method: string, url: string, body?: unknown) {
    return this.request(method, url, { bearer: OPERATOR_TOKEN, body });
  }

  /** Moves the emulator clock and runs what came due. */
  async advance(seconds: number) {
    const r = await this.operator('POST', '/admin/v1/clock/advance', { seconds });
    if (r.status !== 200) throw new Error(`clock advance failed: ${r.status} ${r.text}`);
    return r.body as { now: string; jobs_run: number };
  }

  /**
   * Stops the emulator clock from running with real time until the current test ends: it then
   * moves only by `advance`. For tests that check a boundary to the second (a TTL at 119 of 120 s),
   * which a loaded machine would otherwise cross on its own between two requests.
   */
  freezeClock(): void {
    const clock = this.kernel.clock;
    const base = Date.now();
    clock.nowMs = () => base + clock.offsetMilliseconds;
    onTestFinished(() => {
      // The instance's own method again: real time plus the offset.
      delete (clock as { nowMs?: unknown }).nowMs;
    });
  }

  async close() {
    await this.fjord.stop();
    await this.dropStore();
  }
}
