// API throughput against a bare Fastify reference, both as child processes of this run.
//
//   npm run bench:api [-- --duration 10 --connections 10 --warmup 3 --cpu-prof-dir DIR]
//
// Starts `fjord start --roles api` on a fresh temp data dir (SQLite) and bench/hello-server.mjs,
// creates a customer with `fjord admin customer create`, warms both up, then loads each target
// with autocannon and prints req/s, p99 latency and each Fjord figure as a ratio of the bare
// server's req/s. See bench/README.md for the figures and what they mean.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  cleanEnv,
  cpuSeconds,
  FJORD,
  killAll,
  ROOT,
  runFjord,
  startServer,
  stopServer,
} from './lib/child-servers.js';

// autocannon ships no types; this is the slice of its programmatic API used here.
interface AutocannonOptions {
  url: string;
  connections: number;
  pipelining: number;
  duration: number;
  headers?: Record<string, string>;
}
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { average: number; p50: number; p99: number };
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (
  opts: AutocannonOptions,
) => Promise<AutocannonResult>;

const HELLO = join(ROOT, 'bench', 'hello-server.mjs');

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    'cpu-prof-dir': { type: 'string' },
  },
});
const DURATION = Number(args.duration);
// Targets are loaded in interleaved rounds and each ratio is taken within its round, so that drift
// in the machine's load (other work on the two cores) hits both sides of a ratio alike.
const ROUNDS = Math.max(1, Number(args.rounds));
const CONNECTIONS = Number(args.connections);
const WARMUP = Number(args.warmup);
// Issue 40: ≥ 0.7× the bare server's req/s on both authenticated routes.
const TARGET_RATIO = 0.7;
const UNLIMITED = 100_000_000;

interface Target {
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** The server process, whose CPU time per request is reported. */
  pid: number | undefined;
  /** Shown for reference, not held to the target. */
  reference?: boolean;
}

interface Figure {
  target: Target;
  rps: number;
  p99: number;
  mean: number;
  total: number;
  /** Server CPU time per request, µs. */
  cpuUs: number | null;
}

async function load(target: Target, duration: number): Promise<Figure> {
  const cpu0 = cpuSeconds(target.pid);
  const r = await autocannon({
    url: target.url,
    connections: CONNECTIONS,
    pipelining: 1,
    duration,
    headers: target.headers,
  });
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) {
    const codes = Object.entries(r.statusCodeStats ?? {})
      .map(([code, s]) => `${code}×${s.count}`)
      .join(' ');
    throw new Error(
      `${target.name}: ${r.non2xx} non-2xx (${codes}), ${r.errors} errors, ${r.timeouts} timeouts — the figures would be meaningless`,
    );
  }
  const cpu1 = cpuSeconds(target.pid);
  const cpuUs = cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1e6) / r.requests.total;
  return {
    target,
    rps: r.requests.average,
    p99: r.latency.p99,
    mean: r.latency.average,
    total: r.requests.total,
    cpuUs,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'fjord-bench-'));
  const fjordEnv = cleanEnv({
    FJORD_DATA_DIR: dataDir,
    FJORD_API_PORT: '0',
    FJORD_LOG_LEVEL: 'warn',
    FJORD_DEV_CREDENTIALS: '0',
    FJORD_RATE_LIMITS: JSON.stringify({
      account: { points: UNLIMITED, duration: 60 },
      regions: { points: UNLIMITED, duration: 60 },
    }),
  });
  try {
    const profile = args['cpu-prof-dir']
      ? ['--cpu-prof', `--cpu-prof-dir=${resolve(args['cpu-prof-dir'])}`]
      : [];
    const [fjord, hello] = await Promise.all([
      startServer(
        'fjord',
        [...profile, FJORD, 'start', '--roles', 'api'],
        fjordEnv,
        /^\s*api\s+http\s+(http:\/\/\S+)\s*$/m,
      ),
      startServer('hello', [HELLO], cleanEnv({}), /^listening (http:\/\/\S+)$/m),
    ]);
    const customer = JSON.parse(
      await runFjord(['admin', 'customer', 'create', '--email', 'bench@example.test'], fjordEnv),
    ) as { pat: string };
    const key = { 'x-api-key': customer.pat };
    const targets: Target[] = [
      { name: 'bare Fastify GET /', url: `${hello.url}/`, pid: hello.child.pid },
      {
        name: 'Fjord GET /v1/account/profile',
        url: `${fjord.url}/v1/account/profile`,
        headers: key,
        pid: fjord.child.pid,
      },
      { name: 'Fjord GET /v1/regions', url: `${fjord.url}/v1/regions`, headers: key, pid: fjord.child.pid },
      // Not part of the target: the floor of Fjord's HTTP pipeline, with no credential to check.
      {
        name: 'Fjord GET /healthz (public)',
        url: `${fjord.url}/healthz`,
        pid: fjord.child.pid,
        reference: true,
      },
    ];

    console.log(
      `node ${process.version}, ${CONNECTIONS} connections, pipelining 1, ${ROUNDS} interleaved rounds of ${DURATION} s per target after a ${WARMUP} s warm-up`,
    );
    for (const t of targets) await load(t, WARMUP);
    const rounds: Figure[][] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const figures: Figure[] = [];
      for (const t of targets) figures.push(await load(t, DURATION));
      rounds.push(figures);
      const bareRound = figures[0]!.rps;
      const bareCpu = figures[0]!.cpuUs;
      console.log(
        `  round ${round}: ${figures.map((f) => `${f.target.name} ${Math.round(f.rps)} req/s (${(f.rps / bareRound).toFixed(2)}×${bareCpu && f.cpuUs ? `, ${f.cpuUs.toFixed(1)} CPU µs/req, ${(bareCpu / f.cpuUs).toFixed(2)}× by CPU` : ''})`).join('; ')}`,
      );
    }

    // Per target: the median round (by its ratio to that round's bare server).
    const ratios = targets.map((_, i) => median(rounds.map((r) => r[i]!.rps / r[0]!.rps)));
    const figures = targets.map((_, i) => {
      const sorted = [...rounds].sort((a, b) => a[i]!.rps / a[0]!.rps - b[i]!.rps / b[0]!.rps);
      return sorted[Math.floor(sorted.length / 2)]![i]!;
    });
    // The CPU ratio's own median over rounds (steadier than the ratio of the median round's).
    const cpuRatios = targets.map((_, i) => {
      const each = rounds.flatMap((r) => (r[0]!.cpuUs && r[i]!.cpuUs ? [r[0]!.cpuUs / r[i]!.cpuUs] : []));
      return each.length > 0 ? median(each) : null;
    });
    const rows = figures.map((f, i) => ({
      target: f.target.name,
      'req/s': Math.round(f.rps),
      'mean ms': f.mean.toFixed(2),
      // autocannon's latency histogram counts whole milliseconds.
      'p99 ms': f.p99,
      requests: f.total,
      'server CPU µs/req': f.cpuUs === null ? 'n/a' : f.cpuUs.toFixed(1),
      'vs bare (median of rounds)': `${ratios[i]!.toFixed(2)}×`,
      // CPU per request is steadier than req/s on a shared two-core machine.
      'vs bare by CPU/req':
        f.cpuUs && figures[0]!.cpuUs ? `${(figures[0]!.cpuUs / f.cpuUs).toFixed(2)}×` : 'n/a',
      'by CPU/req (median of rounds)': cpuRatios[i] === null ? 'n/a' : `${cpuRatios[i]!.toFixed(2)}×`,
    }));
    console.table(rows);
    console.log(
      `load average at the end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} (${cpus().length} CPUs)`,
    );
    const below = figures.filter((f, i) => i > 0 && !f.target.reference && ratios[i]! < TARGET_RATIO);
    console.log(
      below.length === 0
        ? `target met: every Fjord route ≥ ${TARGET_RATIO}× the bare server`
        : `target NOT met (≥ ${TARGET_RATIO}× the bare server): ${below.map((f) => f.target.name).join(', ')}`,
    );

    await Promise.all([stopServer(fjord.child), stopServer(hello.child)]);
  } finally {
    killAll();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
