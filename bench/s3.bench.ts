/**
 * S3 data plane benchmarks, each against a reference measured in the same run:
 *   1. PUT and GET of one 256 MiB object, MB/s, against plain node:http streaming the same
 *      bytes to and from a file (bench/s3-reference-server.mjs). Target ≥ 0.8×.
 *   2. 4 KiB PUT and GET per second with 16 concurrent keep-alive clients (same reference).
 *   3. ListObjectsV2 page time (1000 keys, with and without delimiter) in buckets of 1k and
 *      100k keys: should stay flat.
 * Usage: node --import tsx bench/s3.bench.ts [--size-mib 256] [--seconds 5] [--rounds 3]
 *        [--only list|small] [--durable-only]
 * `--only small` runs only the 4 KiB benchmark (durable and not, `--rounds` interleaved rounds);
 * FJORD_TEST_STORE=postgres with FJORD_TEST_DATABASE_URL runs Fjord on PostgreSQL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { signRequest, UNSIGNED_PAYLOAD } from '../src/areas/storage/s3/sigv4.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const SIZE = arg('size-mib', 256) * 1024 * 1024;
const SECONDS = arg('seconds', 5);
const ROUNDS = arg('rounds', 3);
const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;

type Started = { child: ChildProcess; endpoint: string };

async function startChild(cmd: string, args: string[]): Promise<Started> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const endpoint = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const m = /READY (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`${cmd} exited ${code}`)));
  });
  return { child, endpoint };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function request(
  endpoint: string,
  method: string,
  path: string,
  body: Buffer | null,
  signed: boolean,
  query = '',
): Promise<{ status: number; bytes: number; text: string }> {
  const u = new URL(endpoint);
  let headers: Record<string, string> = { host: u.host, 'content-length': String(body?.length ?? 0) };
  if (signed) {
    headers = signRequest({
      method,
      path,
      query,
      headers,
      accessKeyId: 'AKBENCH',
      secret: 'secret-AKBENCH',
      region: 'eu-north-1',
      nowMs: Date.now(),
      payloadHash: UNSIGNED_PAYLOAD,
    });
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, method, path: query ? `${path}?${query}` : path, headers, agent },
      (res) => {
        let bytes = 0;
        const keep: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (keep.length < 4 && method !== 'GET') keep.push(c);
        });
        res.on('end', () => {
          if ((res.statusCode ?? 500) >= 300)
            reject(new Error(`${method} ${path} → ${res.statusCode} ${Buffer.concat(keep).toString()}`));
          else resolve({ status: res.statusCode!, bytes, text: Buffer.concat(keep).toString() });
        });
      },
    );
    req.on('error', reject);
    if (body && body.length > 4 * 1024 * 1024) {
      // Stream large bodies in 1 MiB writes, as a client streaming a file would.
      let off = 0;
      const pump = () => {
        while (off < body.length) {
          const ok = req.write(body.subarray(off, off + (1 << 20)));
          off += 1 << 20;
          if (!ok) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    } else req.end(body ?? undefined);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function throughput(endpoint: string, signed: boolean, body: Buffer) {
  const path = signed ? '/bench/big.bin' : '/big.bin';
  let t = performance.now();
  await request(endpoint, 'PUT', path, body, signed);
  const put = body.length / 1e6 / ((performance.now() - t) / 1000);
  t = performance.now();
  const got = await request(endpoint, 'GET', path, null, signed);
  if (got.bytes !== body.length) throw new Error('short GET');
  const get = body.length / 1e6 / ((performance.now() - t) / 1000);
  return { put, get };
}

/** Per server, how many keys each client has written (at most 50): what its GETs may read. */
const keysWritten = new Map<string, number[]>();

async function smallOps(endpoint: string, fjord: boolean, method: 'PUT' | 'GET') {
  const body = randomBytes(4096);
  const deadline = performance.now() + SECONDS * 1000;
  let ops = 0;
  const written = keysWritten.get(endpoint) ?? Array.from({ length: 16 }, () => 0);
  keysWritten.set(endpoint, written);
  await Promise.all(
    Array.from({ length: 16 }, async (_, c) => {
      let i = 0;
      while (performance.now() < deadline) {
        // GETs read the first few keys each client wrote in the PUT phase: on a loaded machine a
        // client may have written fewer than five.
        const cycle = method === 'PUT' ? 50 : Math.max(1, Math.min(5, written[c]!));
        const n = i++ % cycle;
        const key = `${fjord ? '/bench' : ''}/small-${c}-${n}`;
        // Signed for both servers (the reference ignores the signature): the load generator
        // shares the machine's cores, so it must do the same work whichever server it drives.
        await request(endpoint, method, key, method === 'PUT' ? body : null, true);
        if (method === 'PUT') written[c] = Math.max(written[c]!, n + 1);
        ops++;
      }
    }),
  );
  return ops / SECONDS;
}

async function listTimes(endpoint: string) {
  const times = (q: string) => async () => {
    const samples: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t = performance.now();
      await request(endpoint, 'GET', '/list', null, true, q);
      samples.push(performance.now() - t);
    }
    return median(samples.slice(3));
  };
  // Every page asks for as many entries as both buckets hold in its range, so the two
  // sizes answer pages of the same length.
  return {
    first: await times('list-type=2&max-keys=1000')(),
    middle: await times('list-type=2&max-keys=400&start-after=dir050%2Ffile-0000000.txt')(),
    delimited: await times('delimiter=%2F&list-type=2&max-keys=10&prefix=dir042%2F')(),
    prefixes: await times('delimiter=%2F&list-type=2&max-keys=1000')(),
  };
}

const fmt = (n: number) => n.toFixed(1);

/** CPU seconds (user + system, all threads) a child has used so far, from /proc (Linux). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks
  } catch {
    return Number.NaN;
  }
}

/**
 * Operations per second, and the server's CPU per operation (µs): the rate depends on what else
 * the machine runs, the CPU an operation costs much less.
 */
async function measured(
  server: ChildProcess,
  run: () => Promise<number>,
): Promise<{ rate: number; cpu: number }> {
  const before = cpuSeconds(server.pid);
  const rate = await run();
  return { rate, cpu: ((cpuSeconds(server.pid) - before) * 1e6) / (rate * SECONDS) };
}

/** 4 KiB PUTs and GETs in interleaved rounds; each ratio is taken within its round. */
async function smallRounds(ref: Started, s3: Started) {
  type Row = { s3: number; ref: number; s3Cpu: number; refCpu: number };
  const rows: Record<'PUT' | 'GET', Row[]> = { PUT: [], GET: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const method of ['PUT', 'GET'] as const) {
      const a = await measured(ref.child, () => smallOps(ref.endpoint, false, method));
      const b = await measured(s3.child, () => smallOps(s3.endpoint, true, method));
      rows[method].push({ s3: b.rate, ref: a.rate, s3Cpu: b.cpu, refCpu: a.cpu });
      console.log(
        `round ${r + 1} ${method}: Fjord ${fmt(b.rate)} (${b.cpu.toFixed(0)} µs CPU each), reference ${fmt(a.rate)} (${a.cpu.toFixed(0)} µs), ${(b.rate / a.rate).toFixed(2)}×`,
      );
    }
  }
  console.log(`\n4 KiB objects, 16 concurrent clients, ops/s over ${SECONDS} s (median of ${ROUNDS} rounds)`);
  console.log(
    '| op  | Fjord S3 | node:http reference | ratio (median round) | server CPU per op, Fjord / reference |',
  );
  console.log('|-----|---------:|--------------------:|------:|------:|');
  for (const method of ['PUT', 'GET'] as const) {
    const xs = rows[method];
    const cpu = `${median(xs.map((x) => x.s3Cpu)).toFixed(0)} / ${median(xs.map((x) => x.refCpu)).toFixed(0)} µs`;
    console.log(
      `| ${method} | ${fmt(median(xs.map((x) => x.s3)))} | ${fmt(median(xs.map((x) => x.ref)))} | ${median(xs.map((x) => x.s3 / x.ref)).toFixed(2)}× | ${cpu} |`,
    );
  }
}

async function main() {
  const modes = [
    {
      name: 'durable: Fjord fsyncs (default), the reference fdatasyncs too',
      fjord: [] as string[],
      ref: ['--fsync'],
    },
    {
      name: 'FJORD_S3_FSYNC=false, the reference as plain as it gets',
      fjord: ['--no-fsync'],
      ref: [] as string[],
    },
  ];
  const runModes = process.argv.includes('--durable-only') ? modes.slice(0, 1) : modes;
  for (const mode of ONLY === 'list' ? [] : runModes) {
    const s3 = await startChild('node', ['--import', 'tsx', 'bench/s3-server.ts', ...mode.fjord]);
    const ref = await startChild('node', ['bench/s3-reference-server.mjs', ...mode.ref]);
    console.log(`\n### ${mode.name}`);
    try {
      if (ONLY === 'small') {
        await smallRounds(ref, s3);
        continue;
      }
      const body = randomBytes(SIZE);
      const rounds: { s3: { put: number; get: number }; ref: { put: number; get: number } }[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        rounds.push({
          ref: await throughput(ref.endpoint, false, body),
          s3: await throughput(s3.endpoint, true, body),
        });
      }
      const putRatio = median(rounds.map((x) => x.s3.put / x.ref.put));
      const getRatio = median(rounds.map((x) => x.s3.get / x.ref.get));
      console.log(`\n${SIZE / 1024 / 1024} MiB object, MB/s (median of ${ROUNDS} interleaved rounds)`);
      console.log('| op  | Fjord S3 | node:http reference | ratio |');
      console.log('|-----|---------:|--------------------:|------:|');
      console.log(
        `| PUT | ${fmt(median(rounds.map((x) => x.s3.put)))} | ${fmt(median(rounds.map((x) => x.ref.put)))} | ${putRatio.toFixed(2)}× |`,
      );
      console.log(
        `| GET | ${fmt(median(rounds.map((x) => x.s3.get)))} | ${fmt(median(rounds.map((x) => x.ref.get)))} | ${getRatio.toFixed(2)}× |`,
      );

      const small = {
        refPut: await smallOps(ref.endpoint, false, 'PUT'),
        s3Put: await smallOps(s3.endpoint, true, 'PUT'),
        refGet: await smallOps(ref.endpoint, false, 'GET'),
        s3Get: await smallOps(s3.endpoint, true, 'GET'),
      };
      console.log(`\n4 KiB objects, 16 concurrent clients, ops/s over ${SECONDS} s`);
      console.log('| op  | Fjord S3 | node:http reference | ratio |');
      console.log('|-----|---------:|--------------------:|------:|');
      console.log(
        `| PUT | ${fmt(small.s3Put)} | ${fmt(small.refPut)} | ${(small.s3Put / small.refPut).toFixed(2)}× |`,
      );
      console.log(
        `| GET | ${fmt(small.s3Get)} | ${fmt(small.refGet)} | ${(small.s3Get / small.refGet).toFixed(2)}× |`,
      );
    } finally {
      s3.child.kill('SIGTERM');
      ref.child.kill('SIGTERM');
    }
  }

  if (ONLY === 'small') return void agent.destroy();
  const results: Record<string, Awaited<ReturnType<typeof listTimes>>> = {};
  for (const n of [1000, 100_000]) {
    const srv = await startChild('node', ['--import', 'tsx', 'bench/s3-server.ts', '--keys', String(n)]);
    try {
      results[n] = await listTimes(srv.endpoint);
    } finally {
      srv.child.kill('SIGTERM');
    }
  }
  console.log(
    '\nListObjectsV2 page (1000 entries, 400 from the middle, 10 of one prefix, 100 prefixes), median ms',
  );
  console.log('| page | 1k keys | 100k keys | ratio |');
  console.log('|------|--------:|----------:|------:|');
  for (const k of ['first', 'middle', 'delimited', 'prefixes'] as const) {
    const a = results[1000]![k];
    const b = results[100_000]![k];
    console.log(`| ${k} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)}× |`);
  }
  agent.destroy();
}

await main();
