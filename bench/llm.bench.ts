// Language-model gateway overhead, and chatbot retrieval time.
//
//   npm run bench:llm [-- --requests 200 --chunks 20 --chunk-ms 2]
//
// A small OpenAI-compatible upstream runs in this process and streams `--chunks` chunks
// `--chunk-ms` apart. Fjord (`fjord start --roles api`, a child process on a temp data dir)
// routes an alias to it. The same streamed completions are sent to the upstream directly and
// through Fjord, interleaved, at 1 and at 50 concurrent streams, and the table shows time to
// first token (TTFT) and time to the end of the stream, p50 and p99 each, and what Fjord adds.
// Then 10 000 synthetic passages are indexed the way a chatbot indexes its knowledge and 500
// questions are timed against them.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Retrieval } from '../src/areas/chatbot/retrieval.js';
import { cleanEnv, FJORD, killAll, runFjord, startServer, stopServer } from './lib/child-servers.js';

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '200' },
    chunks: { type: 'string', default: '20' },
    'chunk-ms': { type: 'string', default: '2' },
  },
});
const REQUESTS = Number(args.requests);
const CHUNKS = Number(args.chunks);
const CHUNK_MS = Number(args['chunk-ms']);

function startUpstream(): Promise<{ url: string; close(): void }> {
  const server = createServer(async (req, res) => {
    for await (const _ of req);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const base = { id: 'chatcmpl-b', object: 'chat.completion.chunk', created: 1, model: 'bench-model' };
    for (let i = 0; i < CHUNKS; i++) {
      res.write(
        `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: `tok${i} ` }, finish_reason: null }] })}\n\n`,
      );
      if (CHUNK_MS > 0) await new Promise((r) => setTimeout(r, CHUNK_MS));
    }
    res.write(
      `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: CHUNKS, total_tokens: 10 + CHUNKS } })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        close: () => server.close(),
      }),
    ),
  );
}

/** One streamed completion: ms to the first content byte and to the end. */
async function streamOnce(base: string, headers: Record<string, string>, model: string) {
  const t0 = performance.now();
  const res = await fetch(`${base}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'bench' }] }),
  });
  if (res.status !== 200) throw new Error(`${base}: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  let first: number | null = null;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (first === null && value.length > 0) first = performance.now() - t0;
  }
  return { ttft: first ?? Number.NaN, total: performance.now() - t0 };
}

const pct = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function load(concurrency: number, run: () => Promise<{ ttft: number; total: number }>, n: number) {
  const results: { ttft: number; total: number }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        results.push(await run());
      }
    }),
  );
  return results;
}

async function gateway() {
  const upstream = await startUpstream();
  const dataDir = mkdtempSync(join(tmpdir(), 'fjord-bench-llm-'));
  const env = cleanEnv({
    FJORD_DATA_DIR: dataDir,
    FJORD_API_PORT: '0',
    FJORD_LOG_LEVEL: 'warn',
    FJORD_DEV_CREDENTIALS: '0',
    FJORD_LLM_UPSTREAMS: JSON.stringify([{ name: 'bench', url: upstream.url }]),
    FJORD_LLM_MODELS: JSON.stringify({
      'bench-alias': { category: 'chat', routes: [{ upstream: 'bench', model: 'bench-model' }] },
    }),
    FJORD_RATE_LIMITS: JSON.stringify({ llm: { points: 100_000_000, duration: 60 } }),
  });
  const fjord = await startServer(
    'fjord',
    [FJORD, 'start', '--roles', 'api'],
    env,
    /^\s*api\s+http\s+(http:\/\/\S+)\s*$/m,
  );
  try {
    const { pat } = JSON.parse(
      await runFjord(['admin', 'customer', 'create', '--email', 'bench@example.test'], env),
    ) as { pat: string };
    const direct = () => streamOnce(upstream.url, {}, 'bench-model');
    const via = () => streamOnce(`${fjord.url}/v1`, { 'x-api-key': pat }, 'bench-alias');
    await load(4, via, 40); // warm-up: JIT, tokenizer, connection pools
    await load(4, direct, 40);
    console.log(
      `\nGateway overhead — ${REQUESTS} streamed completions of ${CHUNKS} chunks, ${CHUNK_MS} ms apart\n`,
    );
    console.log('| streams | target | TTFT p50 | TTFT p99 | end p50 | end p99 |');
    console.log('| --- | --- | --- | --- | --- | --- |');
    for (const concurrency of [1, 50]) {
      // Interleaved halves, so drift in the machine's load hits both sides alike.
      const d1 = await load(concurrency, direct, REQUESTS / 2);
      const v1 = await load(concurrency, via, REQUESTS / 2);
      const d2 = await load(concurrency, direct, REQUESTS / 2);
      const v2 = await load(concurrency, via, REQUESTS / 2);
      const d = [...d1, ...d2];
      const v = [...v1, ...v2];
      const row = (name: string, r: typeof d) =>
        `| ${concurrency} | ${name} | ${pct(
          r.map((x) => x.ttft),
          50,
        ).toFixed(2)} ms | ${pct(
          r.map((x) => x.ttft),
          99,
        ).toFixed(2)} ms | ${pct(
          r.map((x) => x.total),
          50,
        ).toFixed(2)} ms | ${pct(
          r.map((x) => x.total),
          99,
        ).toFixed(2)} ms |`;
      console.log(row('upstream directly', d));
      console.log(row('through Fjord', v));
      const added = (k: 'ttft' | 'total', p: number) =>
        (
          pct(
            v.map((x) => x[k]),
            p,
          ) -
          pct(
            d.map((x) => x[k]),
            p,
          )
        ).toFixed(2);
      console.log(
        `| ${concurrency} | **added** | ${added('ttft', 50)} ms | ${added('ttft', 99)} ms | ${added('total', 50)} ms | ${added('total', 99)} ms |`,
      );
    }
  } finally {
    await stopServer(fjord.child);
    upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function retrieval() {
  const words =
    'fjord bucket backup restore invoice support latency region replica snapshot firewall token model stream quota'.split(
      ' ',
    );
  let seed = 42;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const chunks = Array.from({ length: 10_000 }, (_, i) => ({
    id: String(i),
    source_id: 's',
    bot_id: 'bench',
    ordinal: i,
    title: `Document ${i % 500}`,
    url: null,
    text: Array.from(
      { length: 120 },
      () => `${words[Math.floor(rand() * words.length)]}${Math.floor(rand() * 300)}`,
    ).join(' '),
  }));
  const r = new Retrieval(async () => chunks);
  const t0 = performance.now();
  await r.search('bench', 'warm up');
  const build = performance.now() - t0;
  const times: number[] = [];
  for (let i = 0; i < 500; i++) {
    const q = `${words[i % words.length]}${i % 300} ${words[(i * 7) % words.length]}`;
    const t = performance.now();
    await r.search('bench', q);
    times.push(performance.now() - t);
  }
  console.log('\nChatbot retrieval — 10 000 passages of 120 words, 500 questions\n');
  console.log(
    `index build ${build.toFixed(0)} ms; search p50 ${pct(times, 50).toFixed(2)} ms, p99 ${pct(times, 99).toFixed(2)} ms`,
  );
}

try {
  await gateway();
  await retrieval();
} finally {
  killAll();
}
