// Live ingest through Fjord against the bare ingest server with no Fjord behind it, in one run.
//
//   npm run bench:live [-- --runs 5 --streams 1,4,16 --seconds 10]
//
// The clip: 20 s of 640x360 test picture with noise and a tone, encoded once at ~2 Mbit/s
// (H.264, 1 s keyframes, AAC); every encoder is `ffmpeg -re -stream_loop -1 -i clip -c copy`
// pushing it over RTMP, so the encoders cost next to nothing and the machine's CPU goes to the
// ingest.
//
// - Latency (`--runs` times, p50): from the encoder's start to the first segment playable — for
//   Fjord, `index.m3u8` over HTTP names a segment and that segment answers 200; for the bare
//   ingest server (`ffmpeg -listen 1 -i rtmp://… -c copy -f hls`, the same HLS settings as
//   Fjord's ingest) its playlist on disk names a segment. Also: the encoder writing HLS to a
//   directory itself (no RTMP at all), the floor.
// - Concurrent ingests, recording on (`--streams`): the time until every stream has a playable
//   segment, then a window of `--seconds`: CPU per stream (Fjord: this process plus its ingest
//   ffmpegs; bare: the ingest ffmpegs), read from /proc, and whether every stream kept up (its HLS
//   grew by the window's length, give or take a segment). After the stop: the time until every
//   event is `ended` with its MP4 recordings.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { RtmpIngest } from '../src/areas/live/ingest.js';
import { TestFjord } from '../test/helpers/fjord.js';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    streams: { type: 'string', default: '1,4,16' },
    seconds: { type: 'string', default: '10' },
  },
});
const RUNS = Number(args.runs);
const LEVELS = args.streams.split(',').map(Number);
const SECONDS = Number(args.seconds);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (v: number[], p: number) =>
  [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor((p / 100) * v.length))]!;
const TICK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds (user + system) a process has used so far, or 0 once it is gone. */
function cpuOf(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return 0;
  }
}
const childrenOf = (pid: number): number[] => {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
};

async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  s.close();
  return port;
}

/**
 * Waits until something listens on the port, read from /proc/net/tcp: a probe connection would be
 * taken by `ffmpeg -listen 1` as its one client.
 */
async function listening(port: number): Promise<void> {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')} `;
  for (let i = 0; i < 500; i++) {
    const lines = readFileSync('/proc/net/tcp', 'utf8').split('\n');
    if (lines.some((l) => l.includes(hex) && l.trim().split(/\s+/)[3] === '0A')) return;
    await sleep(10);
  }
  throw new Error(`nothing listens on ${port}`);
}

const work = mkdtempSync(join(tmpdir(), 'fjord-bench-live-'));
const clip = join(work, 'clip.flv');
execFileSync('ffmpeg', [
  ...['-v', 'error', '-nostdin', '-y'],
  ...['-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=25:duration=20,noise=alls=20:allf=t'],
  ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=20'],
  ...['-c:v', 'libx264', '-preset', 'veryfast', '-g', '25', '-pix_fmt', 'yuv420p'],
  ...['-b:v', '1900k', '-maxrate', '1900k', '-bufsize', '1900k', '-c:a', 'aac', '-b:a', '96k'],
  ...['-f', 'flv', clip],
]);

const encoders = new Set<ChildProcess>();
/** An encoder pushing the clip in a loop to `url` (RTMP), or writing HLS into a directory. */
function encoder(out: string[]): ChildProcess {
  const ff = spawn(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-nostdin',
      '-re',
      '-stream_loop',
      '-1',
      '-i',
      clip,
      '-c',
      'copy',
      ...out,
    ],
    { stdio: 'ignore' },
  );
  encoders.add(ff);
  ff.on('exit', () => encoders.delete(ff));
  return ff;
}
const rtmpOut = (url: string) => ['-f', 'flv', url];

/** The bare ingest server: Fjord's own ingest command without Fjord (no key check, no meter). */
function bareIngest(port: number, dir: string): ChildProcess {
  mkdirSync(dir, { recursive: true });
  return spawn(
    'ffmpeg',
    [
      ...['-hide_banner', '-loglevel', 'error', '-nostdin', '-listen', '1'],
      ...['-i', `rtmp://127.0.0.1:${port}/live/bench`, '-c', 'copy', '-f', 'hls'],
      ...['-hls_time', '2', '-hls_list_size', '0', '-hls_segment_filename', join(dir, 'seg%05d.ts')],
      join(dir, 'index.m3u8'),
    ],
    { stdio: 'ignore' },
  );
}

const firstSegmentOnDisk = (dir: string) => {
  try {
    return /\.ts$/m.test(readFileSync(join(dir, 'index.m3u8'), 'utf8'));
  } catch {
    return false;
  }
};
/** Seconds of media a playlist on disk covers. */
const coveredOnDisk = (dir: string) => {
  try {
    return [...readFileSync(join(dir, 'index.m3u8'), 'utf8').matchAll(/#EXTINF:([\d.]+)/g)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  } catch {
    return 0;
  }
};
const stop = async (p: ChildProcess) => {
  if (p.exitCode !== null || p.signalCode !== null) return;
  p.kill('SIGKILL');
  await once(p, 'exit');
};

const t = await TestFjord.create({
  FJORD_RTMP_PORT: '0',
  FJORD_API_PORT: '0',
  FJORD_LOG_LEVEL: 'fatal',
  FJORD_RATE_LIMITS: JSON.stringify({ 'live-events': { points: 100_000_000, duration: 60 } }),
  FJORD_LIMITS: JSON.stringify({ 'live.events': null }),
});
try {
  await t.fjord.start(['api', 'rtmp']);
  const rtmp = (t.fjord.areas.get('live')!.servers![0] as RtmpIngest).port();
  const base = t.kernel.baseUrl();
  const c = await t.customer();
  const newEvent = async (name: string) => {
    const e = await t.request('POST', '/v1/live-events/events', {
      key: c.pat,
      body: { name, auto_start_on_ingest: true, record_enabled: true, replay_enabled: true },
    });
    if (e.status !== 201) throw new Error(`create: ${e.status} ${e.text}`);
    return e.body as { id: string; stream_key: string };
  };
  /** The event's live playlist over HTTP, and whether its first segment is served. */
  const playable = async (id: string) => {
    const r = await fetch(`${base}/live/hls/${id}/index.m3u8`);
    if (r.status === 429) throw new Error('rate limited: the figures would be meaningless');
    if (r.status !== 200) return false;
    const seg = (await r.text()).split('\n').find((l) => l.endsWith('.ts'));
    if (!seg) return false;
    const s = await fetch(`${base}/live/hls/${id}/${seg}`);
    await s.arrayBuffer();
    return s.status === 200;
  };
  const coveredOverHttp = async (id: string) => {
    const r = await fetch(`${base}/live/hls/${id}/index.m3u8`);
    if (r.status !== 200) return 0;
    return [...(await r.text()).matchAll(/#EXTINF:([\d.]+)/g)].reduce((n, m) => n + Number(m[1]), 0);
  };
  const endEvent = (id: string) =>
    t.request('POST', `/v1/live-events/events/${id}/live/stop`, { key: c.pat });

  // --- latency -------------------------------------------------------------------------------
  const lat = { fjord: [] as number[], bare: [] as number[], direct: [] as number[] };
  for (let run = 0; run < RUNS; run++) {
    // Fjord
    const e = await newEvent(`latency ${run}`);
    let t0 = performance.now();
    let enc = encoder(rtmpOut(`rtmp://127.0.0.1:${rtmp}/live/${e.stream_key}`));
    while (!(await playable(e.id))) await sleep(20);
    lat.fjord.push(performance.now() - t0);
    await stop(enc);
    await endEvent(e.id);

    // The bare ingest server, started (and listening) before the encoder, as Fjord's listener is.
    const port = await freePort();
    const dir = join(work, `bare-${run}`);
    const server = bareIngest(port, dir);
    await listening(port);
    t0 = performance.now();
    enc = encoder(rtmpOut(`rtmp://127.0.0.1:${port}/live/bench`));
    while (!firstSegmentOnDisk(dir)) await sleep(20);
    lat.bare.push(performance.now() - t0);
    await stop(enc);
    await stop(server);

    // The floor: the encoder writes HLS itself.
    const direct = join(work, `direct-${run}`);
    mkdirSync(direct);
    t0 = performance.now();
    enc = encoder([
      ...['-f', 'hls', '-hls_time', '2', '-hls_list_size', '0'],
      ...['-hls_segment_filename', join(direct, 'seg%05d.ts'), join(direct, 'index.m3u8')],
    ]);
    while (!firstSegmentOnDisk(direct)) await sleep(20);
    lat.direct.push(performance.now() - t0);
    await stop(enc);
  }
  const p50 = { fjord: pct(lat.fjord, 50), bare: pct(lat.bare, 50), direct: pct(lat.direct, 50) };
  console.log(`node ${process.version}, ${RUNS} runs, 2 s segments, 1 s keyframes`);
  console.table([
    {
      path: 'encoder → Fjord (RTMP, key check, ingest ffmpeg) → HTTP',
      'p50 ms': Math.round(p50.fjord),
      'max ms': Math.round(Math.max(...lat.fjord)),
    },
    {
      path: 'encoder → bare ingest server (ffmpeg -listen) → disk',
      'p50 ms': Math.round(p50.bare),
      'max ms': Math.round(Math.max(...lat.bare)),
    },
    {
      path: 'encoder writing HLS itself → disk',
      'p50 ms': Math.round(p50.direct),
      'max ms': Math.round(Math.max(...lat.direct)),
    },
  ]);
  console.log(
    `publish → first playable segment, p50: Fjord ${(p50.fjord / p50.bare).toFixed(2)}× the bare ingest server, ${(p50.fjord / p50.direct).toFixed(2)}× the encoder alone (lower is better)`,
  );

  // --- concurrent ingests --------------------------------------------------------------------
  const rows = [];
  for (const n of LEVELS) {
    // Fjord: n events, n encoders.
    const events = await Promise.all(Array.from({ length: n }, (_, i) => newEvent(`load ${n}-${i}`)));
    const encs = events.map((e) => encoder(rtmpOut(`rtmp://127.0.0.1:${rtmp}/live/${e.stream_key}`)));
    // Start-up: every stream has a first playable segment (ffmpeg start-ups compete for the CPU).
    const started = performance.now();
    const up = new Set<string>();
    while (up.size < n && performance.now() - started < 120_000) {
      for (const e of events) if (!up.has(e.id) && (await playable(e.id))) up.add(e.id);
      await sleep(100);
    }
    const startupMs = performance.now() - started;
    // The steady state: SECONDS of streaming, CPU and media written over exactly that window.
    const mine = encs.map((p) => p.pid!);
    const pids = childrenOf(process.pid).filter((p) => !mine.includes(p));
    const covered0 = await Promise.all(events.map((e) => coveredOverHttp(e.id)));
    const before = { self: process.cpuUsage(), children: pids.map(cpuOf) };
    const w0 = performance.now();
    await sleep(SECONDS * 1000);
    const window = (performance.now() - w0) / 1000;
    const self = process.cpuUsage(before.self);
    const childCpu = pids.map(cpuOf).reduce((a, b, i) => a + b - before.children[i]!, 0);
    const fjordCpu = (self.user + self.system) / 1e6 + childCpu;
    const gained = (await Promise.all(events.map((e) => coveredOverHttp(e.id)))).map(
      (x, i) => x - covered0[i]!,
    );
    // Why a stream fell behind: its encoder connections and how they ended.
    const reasons = new Map<string, number>();
    for (const e of events) {
      const s = await t.request('GET', `/v1/live-events/events/${e.id}/sessions`, { key: c.pat });
      for (const x of s.body.sessions as { end_reason: string | null }[])
        reasons.set(x.end_reason ?? 'active', (reasons.get(x.end_reason ?? 'active') ?? 0) + 1);
    }
    if (reasons.size !== 1 || !reasons.has('active'))
      console.log(`${n} streams: encoder connections by how they ended`, Object.fromEntries(reasons));
    await Promise.all(encs.map(stop));
    // The stop: recordings finalised (MP4 made and stored) on the clock.
    for (const e of events) await endEvent(e.id);
    const f0 = performance.now();
    for (let i = 0; i < 200; i++) {
      await t.advance(3);
      const states = await Promise.all(
        events.map(
          async (e) => (await t.request('GET', `/v1/live-events/events/${e.id}`, { key: c.pat })).body,
        ),
      );
      if (states.every((s) => s.status === 'ended' || s.status === 'failed')) break;
      await sleep(50);
    }
    const finaliseMs = performance.now() - f0;
    const recs = await Promise.all(
      events.map(
        async (e) =>
          (await t.request('GET', `/v1/live-events/events/${e.id}/recordings`, { key: c.pat })).body
            .recordings as { format: string }[],
      ),
    );
    const mp4s = recs.flat().filter((r) => r.format === 'mp4').length;

    // The bare ingest servers: n listeners, n encoders.
    const ports = await Promise.all(Array.from({ length: n }, () => freePort()));
    const dirs = ports.map((_, i) => join(work, `load-${n}-${i}`));
    const servers = ports.map((p, i) => bareIngest(p, dirs[i]!));
    await Promise.all(ports.map(listening));
    const bareEncs = ports.map((p) => encoder(rtmpOut(`rtmp://127.0.0.1:${p}/live/bench`)));
    const bStarted = performance.now();
    while (!dirs.every(firstSegmentOnDisk) && performance.now() - bStarted < 120_000) await sleep(100);
    const bStartupMs = performance.now() - bStarted;
    const serverPids = servers.map((s) => s.pid!);
    const bCovered0 = dirs.map(coveredOnDisk);
    const bBefore = serverPids.map(cpuOf);
    const b0 = performance.now();
    await sleep(SECONDS * 1000);
    const bWindow = (performance.now() - b0) / 1000;
    const bareCpu = serverPids.map(cpuOf).reduce((a, b, i) => a + b - bBefore[i]!, 0);
    const bGained = dirs.map((d, i) => coveredOnDisk(d) - bCovered0[i]!);
    await Promise.all([...bareEncs, ...servers].map(stop));

    // Kept up: each stream's HLS grew by the window's length, give or take a segment (2 s).
    const kept = (g: number[], w: number) => g.every((x) => x >= w - 2.5);
    const fjordPer = (fjordCpu / window / n) * 100;
    const barePer = (bareCpu / bWindow / n) * 100;
    rows.push({
      streams: n,
      'Fjord CPU % per stream': fjordPer.toFixed(1),
      '(of it Node / ingest ffmpeg)': `${(((self.user + self.system) / 1e6 / window / n) * 100).toFixed(1)} / ${((childCpu / window / n) * 100).toFixed(1)}`,
      'bare CPU % per stream': barePer.toFixed(1),
      ratio: `${(fjordPer / barePer).toFixed(2)}×`,
      'Fjord kept up': kept(gained, window) ? 'yes' : `no (min ${Math.min(...gained).toFixed(0)} s)`,
      'bare kept up': kept(bGained, bWindow) ? 'yes' : `no (min ${Math.min(...bGained).toFixed(0)} s)`,
      'all playable after (ms) Fjord / bare': `${Math.round(startupMs)} / ${Math.round(bStartupMs)}`,
      'stop → ended with MP4s (ms)': Math.round(finaliseMs),
      MP4s: `${mp4s}/${n}`,
    });
  }
  console.table(rows);
  const sustained = rows.filter((r) => r['Fjord kept up'] === 'yes').map((r) => r.streams);
  console.log(
    `concurrent 2 Mbit/s ingests with recording on that Fjord sustained here: ${sustained.length ? Math.max(...sustained) : 0} of those tried (${LEVELS.join(', ')})`,
  );
} finally {
  for (const e of encoders) e.kill('SIGKILL');
  await t.close();
  rmSync(work, { recursive: true, force: true });
}
