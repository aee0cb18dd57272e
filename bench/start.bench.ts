// Cold start to a healthy /healthz, against a bare Fastify's start to its first answer, in the
// same run.
//
//   npm run bench:start [-- --rounds 5]
//
// Each round starts, in turn: `fjord start` (every role) on a fresh temp data dir (SQLite: the
// migrations, the data key and the development credentials are made during the start), the same
// on the data dir of the previous round (a warm start), and bench/hello-server.mjs. A start is
// timed from spawn to the first 200 of a GET polled every 5 ms, then the process is stopped.
// The table shows min, median and max per target, and the medians' ratio to the bare start.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cleanEnv, FJORD, ROOT, stopServer } from './lib/child-servers.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const ROUNDS = Number(args.rounds);
const HELLO = join(ROOT, 'bench', 'hello-server.mjs');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Milliseconds from spawn to the first 200 from `url`. */
async function timeStart(cmd: string[], env: NodeJS.ProcessEnv, url: string): Promise<number> {
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, cmd, { cwd: ROOT, env, stdio: 'ignore' });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${cmd.join(' ')} exited with ${child.exitCode}`);
      const ok = await fetch(url).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return performance.now() - started;
      if (performance.now() - started > 60_000) throw new Error(`${url}: no answer in 60 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    await stopServer(child);
  }
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s[s.length - 1]! };
};

const times: Record<string, number[]> = {
  'fjord, fresh data dir': [],
  'fjord, warm data dir': [],
  'bare Fastify': [],
};
const dirs: string[] = [];
try {
  for (let round = 1; round <= ROUNDS; round++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'fjord-start-'));
    dirs.push(dataDir);
    for (const warm of [false, true]) {
      const port = await freePort();
      const env = cleanEnv({
        FJORD_DATA_DIR: dataDir,
        FJORD_API_PORT: String(port),
        FJORD_S3_PORT: '0',
        FJORD_DNS_PORT: '0',
        FJORD_MQTT_PORT: '0',
        FJORD_RTMP_PORT: '0',
        FJORD_LOG_LEVEL: 'warn',
      });
      const ms = await timeStart([FJORD, 'start'], env, `http://127.0.0.1:${port}/healthz`);
      times[warm ? 'fjord, warm data dir' : 'fjord, fresh data dir']!.push(ms);
    }
    const port = await freePort();
    times['bare Fastify']!.push(
      await timeStart([HELLO], cleanEnv({ PORT: String(port) }), `http://127.0.0.1:${port}/`),
    );
    console.log(
      `  round ${round}: ${Object.entries(times)
        .map(([k, v]) => `${k} ${Math.round(v[v.length - 1]!)} ms`)
        .join('; ')}`,
    );
  }
} finally {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
const bare = stats(times['bare Fastify']!).median;
console.table(
  Object.entries(times).map(([target, v]) => {
    const s = stats(v);
    return {
      target,
      'min ms': Math.round(s.min),
      'median ms': Math.round(s.median),
      'max ms': Math.round(s.max),
      'median vs bare': `${(s.median / bare).toFixed(2)}×`,
    };
  }),
);
