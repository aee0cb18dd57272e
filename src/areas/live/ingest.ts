import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { newId } from '../../kernel/ids.js';
import type { RoleServer } from '../../kernel/kernel.js';
import { StreamMeter } from './meter.js';
import { findPublishName } from './rtmp-sniff.js';
import type { LiveService } from './service.js';

/** Bytes read from a client before its publish command; past this it is not an encoder. */
const MAX_SNIFF = 64 * 1024;
const UPSTREAM_WAIT_MS = 10_000;
/** A connection that has not published by then is closed (and its ffmpeg with it). */
const PUBLISH_WAIT_MS = 15_000;
/** How often a session's measurements are stored and the event's state checked. */
const PROGRESS_MS = 2_000;
/** Reports in a row above the event's bitrate limit before the stream is cut (about 6 s). */
const OVER_BITRATE_REPORTS = 3;

export interface IngestOptions {
  host: string;
  port: number;
  /** Each encoder connection writes its HLS playlist and segments into `<dir>/<session id>/`. */
  sessionsDir: string;
  ffmpeg?: string;
}

/**
 * The RTMP ingest (role `rtmp`). Each encoder connection is relayed to its own ffmpeg, which
 * speaks RTMP as a server (`-listen 1` on a loopback port) and writes HLS with `-c copy`. Fjord
 * reads the client's bytes on the way through and holds back its `publish` command until the
 * stream key is checked: a key that belongs to no event, or to one that cannot receive a stream
 * now, cuts the connection before any media is written.
 *
 * An ffmpeg's only input is its relayed connection, so it ends when Fjord does; a pid file in
 * the session directory lets the next start kill any that were left behind anyway.
 */
export class RtmpIngest implements RoleServer {
  readonly role = 'rtmp' as const;
  readonly name = 'rtmp ingest';
  private server: Server | null = null;
  private readonly children = new Set<ChildProcess>();

  constructor(
    private readonly live: LiveService,
    private readonly log: Logger,
    private readonly options: IngestOptions,
  ) {}

  port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? this.options.port;
  }

  async start(): Promise<void> {
    await mkdir(this.options.sessionsDir, { recursive: true });
    await this.killLeftovers();
    await this.live.sessions.ingestRestarted();
    this.server = createServer((socket) => void this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.options.port, this.options.host, () => resolve());
    });
    this.log.info({ port: this.port() }, 'rtmp: ingest listening');
  }

  listeners() {
    return [{ protocol: 'rtmp', address: `rtmp://${this.options.host}:${this.port()}/live` }];
  }

  async stop(): Promise<void> {
    for (const child of this.children) child.kill('SIGKILL');
    this.children.clear();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  /** ffmpeg processes a crashed Fjord left behind: killed when their command line names their directory. */
  private async killLeftovers(): Promise<void> {
    for (const session of await readdir(this.options.sessionsDir).catch(() => [] as string[])) {
      const dir = join(this.options.sessionsDir, session);
      const pid = Number(await readFile(join(dir, 'ffmpeg.pid'), 'utf8').catch(() => ''));
      if (!pid) continue;
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (cmdline.includes(dir)) {
        this.log.warn({ pid, session }, 'rtmp: killing an ffmpeg left behind');
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      await rm(join(dir, 'ffmpeg.pid'), { force: true });
    }
  }

  private async accept(client: Socket): Promise<void> {
    client.pause();
    const sessionId = newId();
    const dir = join(this.options.sessionsDir, sessionId);
    let child: ChildProcess | null = null;
    let upstream: Socket | null = null;
    let eventId: string | null = null;
    let ended = false;
    let bytes = 0;
    const meter = new StreamMeter(() => this.live.now());
    let progress: NodeJS.Timeout | null = null;
    const end = (reason: string) => {
      if (ended) return;
      ended = true;
      if (progress) clearInterval(progress);
      client.destroy();
      upstream?.destroy();
      const c = child;
      if (c && c.exitCode === null) {
        // The segments written so far are finished by ffmpeg when its input ends; a stuck one is killed.
        setTimeout(() => c.exitCode === null && c.kill('SIGKILL'), 5000).unref();
      }
      if (eventId)
        void this.live.sessions
          .ingestEnded(eventId, sessionId, reason, bytes, meter.metrics(), meter.lastFrameAt)
          .catch((err) => this.log.warn({ err }, 'rtmp: recording the end of a session failed'));
    };
    client.on('error', () => end('encoder_error'));
    client.on('close', () => end('encoder_disconnected'));
    const publishTimer = setTimeout(() => eventId || end('no_publish'), PUBLISH_WAIT_MS);
    publishTimer.unref();

    try {
      await mkdir(dir, { recursive: true });
      const port = await freePort(this.options.host);
      child = spawn(
        this.options.ffmpeg ?? 'ffmpeg',
        [
          '-hide_banner',
          '-loglevel',
          'error',
          '-listen',
          '1',
          '-i',
          `rtmp://${this.options.host}:${port}/live/${sessionId}`,
          '-c',
          'copy',
          '-f',
          'hls',
          '-hls_time',
          '2',
          '-hls_list_size',
          '0',
          '-hls_segment_filename',
          join(dir, 'seg%05d.ts'),
          join(dir, 'index.m3u8'),
          // A second output: one line per packet copied (stream, timestamps, size, keyframe flag),
          // which the meter turns into bitrate, frame rate and keyframe interval.
          ...['-map', '0', '-c', 'copy', '-f', 'framecrc', 'pipe:1'],
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (d: string) => meter.feed(d));
      this.children.add(child);
      await writeFile(join(dir, 'ffmpeg.pid'), String(child.pid));
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => {
        stderr = (stderr + d.toString()).slice(-2000);
      });
      child.on('exit', (code) => {
        this.children.delete(child!);
        void rm(join(dir, 'ffmpeg.pid'), { force: true });
        if (code && !ended) this.log.warn({ code, stderr }, 'rtmp: ffmpeg ended');
        end(code ? 'ingest_failed' : 'encoder_disconnected');
      });
      upstream = await connectWhenListening(this.options.host, port, child);
    } catch (err) {
      this.log.warn({ err }, 'rtmp: could not start a session');
      return end('ingest_failed');
    }
    if (ended) return;
    const up = upstream;
    up.on('error', () => end('ingest_failed'));
    up.on('close', () => end('encoder_disconnected'));
    up.on('data', (d: Buffer) => client.write(d));

    // Until the key is checked, the client's bytes are read here; the chunk with `publish` waits.
    let seen = Buffer.alloc(0);
    let checking = false;
    const held: Buffer[] = [];
    client.on('data', (d: Buffer) => {
      bytes += d.length;
      if (eventId) return void up.write(d);
      if (checking) return void held.push(d);
      seen = Buffer.concat([seen, d]);
      const key = findPublishName(seen);
      if (key === null) {
        if (seen.length > MAX_SNIFF) return end('not_an_encoder');
        return void up.write(d);
      }
      checking = true;
      held.push(d);
      void this.live.sessions.ingestStarted(key, sessionId).then(
        (id) => {
          if (!id) return end('stream_key_refused');
          eventId = id;
          clearTimeout(publishTimer);
          for (const b of held.splice(0)) up.write(b);
          progress = this.watch(id, sessionId, meter, () => bytes, end);
        },
        (err) => {
          this.log.warn({ err }, 'rtmp: checking a stream key failed');
          end('ingest_failed');
        },
      );
    });
    client.resume();
  }

  /**
   * Every two seconds: stores what the meter measured on the session, cuts the stream when the
   * event no longer takes it (stopped, deleted, key rotated away) or when it stays above the
   * event's `max_bitrate_kbps`.
   */
  private watch(
    eventId: string,
    sessionId: string,
    meter: StreamMeter,
    bytes: () => number,
    end: (reason: string) => void,
  ): NodeJS.Timeout {
    let over = 0;
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const metrics = meter.metrics();
      this.live.sessions
        .ingestProgress(eventId, sessionId, metrics, bytes(), meter.lastFrameAt)
        .then(
          ({ accept, maxBitrateKbps }) => {
            if (!accept) return end('event_stopped');
            over = metrics.bitrate_kbps !== null && metrics.bitrate_kbps > maxBitrateKbps ? over + 1 : 0;
            if (over >= OVER_BITRATE_REPORTS) end('bitrate_exceeded');
          },
          (err) => this.log.warn({ err }, 'rtmp: storing session measurements failed'),
        )
        .finally(() => {
          busy = false;
        });
    }, PROGRESS_MS);
    timer.unref();
    return timer;
  }
}

async function freePort(host: string): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, host, () => resolve()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Connects once ffmpeg listens (a refused attempt does not use up its one `-listen 1` accept). */
async function connectWhenListening(host: string, port: number, child: ChildProcess): Promise<Socket> {
  const deadline = Date.now() + UPSTREAM_WAIT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`ffmpeg exited with ${child.exitCode}`);
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const s = connect(port, host, () => resolve(s));
        s.once('error', reject);
      });
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 30));
    }
  }
}
