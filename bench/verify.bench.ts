import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SMTPServer } from 'smtp-server';
import { Pool } from 'undici';
import { cleanEnv, cpuSeconds, FJORD, killAll, ROOT, runFjord, startServer } from './lib/child-servers.js';

const HELLO = join(ROOT, 'bench', 'hello-server.mjs');
const UNLIMITED = 100_000_000;

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    'cpu-prof-dir': { type: 'string' },
    only: { type: 'string', description: 'run only targets whose name contains this (plus the bare one)' },
  },
});
const DURATION = Number(args.duration);
const ROUNDS = Math.max(1, Number(args.rounds));
const CONCURRENCY = Number(args.concurrency);
const WARMUP = Number(args.warmup);

async function smtpSink() {
  const codes = new Map<string, string>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const code = /code is (\d{4,8})/.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
        for (const r of session.envelope.rcptTo) if (code) codes.set(r.address, code);
        done();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.server.address() as AddressInfo).port, codes, close: () => server.close() };
}

type RoundTrip = (n: number) => Promise<void>;
interface Figure {
  perSecond: number;
  trips: number;
  cpuMsPerTrip: number | null;
}

async function json(pool: Pool, method: 'GET' | 'POST', path: string, key: string | null, body?: unknown) {
  const res = await pool.request({
    method,
    path,
    headers: {
      ...(key ? { 'x-api-key': key } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Runs `CONCURRENCY` loops of round trips for `seconds`; answers round trips per second. */
async function load(trip: RoundTrip, seconds: number, pid: number | undefined): Promise<Figure> {
  const until = performance.now() + seconds * 1000;
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  let done = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        await trip(next++);
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const cpu1 = cpuSeconds(pid);
  return {
    perSecond: done / elapsed,
    trips: done,
    cpuMsPerTrip: cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1000) / done,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const sink = await smtpSink();
  const dataDir = mkdtempSync(join(tmpdir(), 'fjord-bench-verify-'));
  const env = cleanEnv({
    FJORD_DATA_DIR: dataDir,
    FJORD_API_PORT: '0',
    FJORD_LOG_LEVEL: 'warn',
    FJORD_DEV_CREDENTIALS: '0',
    FJORD_ROLES: 'api,worker',
    // Pooled SMTP connections, as an operator would configure for volume.
    FJORD_SMTP_URL: `smtp://127.0.0.1:${sink.port}/?pool=true&maxConnections=${CONCURRENCY}`,
    FJORD_SMS_DRIVER: 'sandbox',
    FJORD_RATE_LIMITS: JSON.stringify({
      'code-verification': { points: UNLIMITED, duration: 60 },
      regions: { points: UNLIMITED, duration: 60 },
      sms: { points: UNLIMITED, duration: 60 },
      'verify.recipient': { points: UNLIMITED, duration: 600 },
      'verify.prefix': { points: UNLIMITED, duration: 3600 },
    }),
  });
  const profile = args['cpu-prof-dir']
    ? ['--cpu-prof', `--cpu-prof-dir=${resolve(args['cpu-prof-dir'])}`]
    : [];
  try {
    const [fjord, hello] = await Promise.all([
      startServer(
        'fjord',
        [...profile, FJORD, 'start', '--roles', 'api,worker'],
        env,
        /^\s*api\s+http\s+(http:\/\/\S+)\s*$/m,
      ),
      startServer('hello', [HELLO], cleanEnv({}), /^listening (http:\/\/\S+)$/m),
    ]);
    const { pat } = JSON.parse(
      await runFjord(['admin', 'customer', 'create', '--email', 'bench@example.test'], env),
    ) as { pat: string };
    const api = new Pool(fjord.url, { connections: CONCURRENCY });
    const bare = new Pool(hello.url, { connections: CONCURRENCY });
    await json(api, 'POST', '/v1/sms/sender-profiles', pat, { name: 'Bench', sender_id: '+4790000001' });

    const check = async (sessionId: unknown, code: string | undefined) => {
      if (!code) throw new Error(`no code for session ${sessionId}`);
      const r = await json(api, 'POST', '/v1/verify/check', pat, { session_id: sessionId, code });
      if (r['status'] !== 'verified') throw new Error(`check answered ${JSON.stringify(r)}`);
    };
    let run = 0;
    const allTargets: { name: string; trip: RoundTrip; pid: number | undefined }[] = [
      {
        name: 'bare Fastify: 2 × GET /',
        pid: hello.child.pid,
        trip: async () => {
          await json(bare, 'GET', '/', null);
          await json(bare, 'GET', '/', null);
        },
      },
      {
        // Fjord's own floor for two authenticated requests: what is not verification's work.
        name: 'Fjord: 2 × GET /v1/regions',
        pid: fjord.child.pid,
        trip: async () => {
          await json(api, 'GET', '/v1/regions', pat);
          await json(api, 'GET', '/v1/regions', pat);
        },
      },
      {
        name: 'email: start, SMTP, check',
        pid: fjord.child.pid,
        trip: async (n) => {
          const recipient = `u${run}-${n}@bench.example`;
          const s = await json(api, 'POST', '/v1/verify/start', pat, { channel: 'email', recipient });
          const code = sink.codes.get(recipient);
          sink.codes.delete(recipient);
          await check(s['session_id'], code);
        },
      },
      {
        name: 'sms: start, read VERIFY message, check',
        pid: fjord.child.pid,
        trip: async (n) => {
          // Norwegian mobile numbers 9xxxxxxx, a fresh one per round trip and run.
          const recipient = `+479${String((run * 1_000_000 + n) % 10_000_000).padStart(7, '0')}`;
          const s = await json(api, 'POST', '/v1/verify/start', pat, { channel: 'sms', recipient });
          const list = await json(
            api,
            'GET',
            `/v1/sms/messages?message_type=VERIFY&page_size=1&recipient=${encodeURIComponent(recipient)}`,
            pat,
          );
          const body = (list['messages'] as { body: string }[])[0]?.body ?? '';
          await check(s['session_id'], /code is (\d+)/.exec(body)?.[1]);
        },
      },
    ];

    const targets = allTargets.filter((t, i) => i === 0 || !args.only || t.name.includes(args.only));
    console.log(
      `node ${process.version}, ${CONCURRENCY} concurrent loops, ${ROUNDS} interleaved rounds of ${DURATION} s per target after ${WARMUP} s warm-up`,
    );
    for (const t of targets) {
      run++;
      await load(t.trip, WARMUP, t.pid);
    }
    const rounds: Figure[][] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const figures: Figure[] = [];
      for (const t of targets) {
        run++;
        figures.push(await load(t.trip, DURATION, t.pid));
      }
      rounds.push(figures);
      console.log(
        `  round ${round}: ${figures.map((f, i) => `${targets[i]!.name} ${f.perSecond.toFixed(0)}/s (${(f.perSecond / figures[0]!.perSecond).toFixed(3)}×)`).join('; ')}`,
      );
    }
    const bareCpu = median(rounds.map((r) => r[0]!.cpuMsPerTrip ?? Number.NaN));
    console.table(
      targets.map((t, i) => {
        const ratio = median(rounds.map((r) => r[i]!.perSecond / r[0]!.perSecond));
        const f = [...rounds].sort(
          (a, b) => a[i]!.perSecond / a[0]!.perSecond - b[i]!.perSecond / b[0]!.perSecond,
        )[Math.floor(rounds.length / 2)]![i]!;
        return {
          target: t.name,
          'round trips/s': Math.round(f.perSecond),
          'mean ms/trip': ((CONCURRENCY / f.perSecond) * 1000).toFixed(2),
          'server CPU ms/trip': f.cpuMsPerTrip === null ? 'n/a' : f.cpuMsPerTrip.toFixed(3),
          'vs bare (median of rounds)': `${ratio.toFixed(3)}×`,
          // CPU per round trip moves far less with the machine's load than round trips per second.
          'vs bare by CPU/trip':
            f.cpuMsPerTrip && bareCpu ? `${(bareCpu / f.cpuMsPerTrip).toFixed(3)}×` : 'n/a',
        };
      }),
    );
    await Promise.all([api.close(), bare.close()]);
    // A graceful stop, so that --cpu-prof writes its profile.
    const exited = new Promise((r) => fjord.child.once('exit', r));
    fjord.child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  } finally {
    killAll();
    sink.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
