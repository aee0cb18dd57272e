import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import smpp from 'smpp';
import { TestSmsc } from '../test/e2e/smpp-smsc.js';
import {
  cleanEnv,
  FJORD,
  ROOT,
  runFjord as run,
  startServer,
  stopServer as stop,
} from './lib/child-servers.js';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p99: number };
  '2xx': number;
  non2xx: number;
  errors: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: {
  url: string;
  connections: number;
  duration: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}) => Promise<AutocannonResult>;

const HELLO = join(ROOT, 'bench', 'hello-server.mjs');
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    // Only the accepting figure (no drain through a worker): quicker when profiling.
    'accept-only': { type: 'boolean', default: false },
    // Writes a V8 CPU profile of the API process into this directory (node --cpu-prof).
    'cpu-prof': { type: 'string' },
  },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const ROUNDS = Math.max(1, Number(args.rounds));
const UNLIMITED = 100_000_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function until(probe: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The reference: a bare `smpp` client pushing `count` submit_sm with `window` outstanding. */
async function rawSubmit(port: number, count: number, window: number): Promise<number> {
  const session = smpp.connect({ url: `smpp://127.0.0.1:${port}` });
  await new Promise<void>((ok) => session.on('connect', ok));
  await new Promise<void>((ok) =>
    session.send(new smpp.PDU('bind_transceiver', { system_id: 'fjord', password: 's3cret' }), () => ok()),
  );
  const t0 = performance.now();
  let sent = 0;
  let done = 0;
  await new Promise<void>((ok) => {
    const pump = () => {
      while (sent < count && sent - done < window) {
        sent++;
        session.send(
          new smpp.PDU('submit_sm', {
            source_addr: '4791000001',
            destination_addr: '4791234567',
            data_coding: 0,
            registered_delivery: 1,
            short_message: Buffer.from('Bench message'),
          }),
          () => {
            done++;
            if (done === count) ok();
            else pump();
          },
        );
      }
    };
    pump();
  });
  const seconds = (performance.now() - t0) / 1000;
  session.close();
  return count / seconds;
}

async function main() {
  const smsc = new TestSmsc();
  await smsc.listen();
  const dataDir = mkdtempSync(join(tmpdir(), 'fjord-sms-bench-'));
  const env = cleanEnv({
    FJORD_DATA_DIR: dataDir,
    FJORD_API_PORT: '0',
    FJORD_LOG_LEVEL: 'warn',
    FJORD_DEV_CREDENTIALS: '0',
    FJORD_SMPP_URL: `smpp://fjord:s3cret@127.0.0.1:${smsc.port}`,
    FJORD_RATE_LIMITS: JSON.stringify({ sms: { points: UNLIMITED, duration: 60 } }),
  });
  try {
    const [api, hello] = await Promise.all([
      startServer(
        'fjord api',
        [
          ...(args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${resolve(args['cpu-prof'])}`] : []),
          FJORD,
          'start',
          '--roles',
          'api',
        ],
        env,
        /^\s*api\s+http\s+(http:\/\/\S+)\s*$/m,
      ),
      startServer('hello', [HELLO], cleanEnv({}), /^listening (http:\/\/\S+)$/m),
    ]);
    const { pat } = JSON.parse(
      await run(['admin', 'customer', 'create', '--email', 'sms@bench.test'], env),
    ) as {
      pat: string;
    };
    const headers = { 'x-api-key': pat, 'content-type': 'application/json' };
    const profile = await fetch(`${api.url}/v1/sms/sender-profiles`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Bench', sender_id: '+4791000001' }),
    });
    if (profile.status !== 201) throw new Error(`sender profile: ${profile.status} ${await profile.text()}`);
    const send = {
      url: `${api.url}/v1/sms/send`,
      method: 'POST',
      headers,
      body: JSON.stringify({ to: ['+4791234567'], message: 'Bench message' }),
    };
    console.log(`node ${process.version}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s`);
    await autocannon({ ...send, connections: CONNECTIONS, duration: 2 }); // warm-up
    await autocannon({ url: `${hello.url}/`, connections: CONNECTIONS, duration: 2 });
    const ratios: number[] = [];
    const fjordRates: number[] = [];
    const bareRates: number[] = [];
    const p99s: number[] = [];
    let accepted = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const f = await autocannon({ ...send, connections: CONNECTIONS, duration: DURATION });
      const b = await autocannon({ url: `${hello.url}/`, connections: CONNECTIONS, duration: DURATION });
      if (f.non2xx || f.errors) throw new Error(`POST /v1/sms/send: ${f.non2xx} non-2xx, ${f.errors} errors`);
      fjordRates.push(f.requests.average);
      bareRates.push(b.requests.average);
      p99s.push(f.latency.p99);
      ratios.push(f.requests.average / b.requests.average);
      console.log(
        `  round ${round + 1}: accepted ${f.requests.average.toFixed(0)}/s, bare ${b.requests.average.toFixed(0)}/s, ratio ${(f.requests.average / b.requests.average).toFixed(2)}`,
      );
    }
    const counted = await fetch(`${api.url}/v1/sms/messages?page_size=1`, { headers });
    accepted = ((await counted.json()) as { total: number }).total;
    await stop(api.child);
    await stop(hello.child);
    if (args['accept-only']) {
      console.log(
        `\naccepted ${median(fjordRates).toFixed(0)}/s (p99 ${median(p99s)} ms), bare ${median(bareRates).toFixed(0)}/s, ratio ${median(ratios).toFixed(2)}×, ${accepted} messages`,
      );
      return;
    }

    // Drain everything accepted through a worker bound to the SMSC.
    const before = smsc.submits.length;
    const worker = await startServer(
      'fjord worker',
      [FJORD, 'start', '--roles', 'worker'],
      env,
      /worker\s+jobs/,
    );
    await until(() => smsc.submits.length > before, 60_000);
    const t0 = performance.now();
    await until(() => smsc.submits.length - before >= accepted, 600_000);
    const submitted = accepted / ((performance.now() - t0) / 1000);
    await stop(worker.child);
    const reference = await rawSubmit(smsc.port, Math.min(accepted, 20_000), 10);

    const fr = median(fjordRates);
    console.log('');
    console.log('| figure | Fjord | reference | ratio |');
    console.log('| --- | ---: | ---: | ---: |');
    console.log(
      `| accepted by POST /v1/sms/send (msg/s, p99 ${median(p99s)} ms) | ${fr.toFixed(0)} | ${median(bareRates).toFixed(0)} (bare Fastify GET /) | ${median(ratios).toFixed(2)}× |`,
    );
    console.log(
      `| submitted over SMPP (msg/s, ${accepted} messages) | ${submitted.toFixed(0)} | ${reference.toFixed(0)} (raw smpp client, window 10) | ${(submitted / reference).toFixed(2)}× |`,
    );
  } finally {
    await smsc.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
