/**
 * The UDP and TCP listeners. UDP answers go through the response rate limiter; TCP carries
 * length-prefixed messages (RFC 7766: several per connection, answered in order), zone
 * transfers, and is closed after an idle period or on a malformed frame.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { BlockList } from 'node:net';
import { createServer, isIP, type Server, type Socket as TcpSocket } from 'node:net';
import type { Logger } from 'pino';
import type { ProtocolMetrics } from '../../../kernel/observe/protocol-metrics.js';
import { axfrMessages, keyCoversZone, transferAllowed, transferError } from './axfr.js';
import type { DnsEngine, Handled } from './engine.js';
import { wireLength } from './names.js';
import { type ResponseRateLimiter, slipResponse } from './rrl.js';
import type { QueryStatsBatcher } from './stats.js';
import { sign } from './tsig.js';
import { RCODE, T, typeName } from './types.js';
import { parseQuery } from './wire-reader.js';

const TCP_IDLE_MS = 10_000;
const TCP_MAX_CONNECTIONS = 1000;
/** Connections one address may hold; a newer one closes its oldest idle one (NSD and Knot cap per source too). */
const TCP_PER_SOURCE = 20;
/** Past this many open connections, idle ones get TCP_IDLE_UNDER_PRESSURE_MS instead of TCP_IDLE_MS. */
const TCP_PRESSURE = TCP_MAX_CONNECTIONS / 2;
const TCP_IDLE_UNDER_PRESSURE_MS = 1000;

/** Open TCP connections by source address, with when each last carried a query. */
class TcpConnections {
  private readonly bySource = new Map<string, Map<TcpSocket, number>>();
  private total = 0;

  admit(conn: TcpSocket): void {
    const source = conn.remoteAddress ?? '';
    let mine = this.bySource.get(source);
    if (!mine) {
      mine = new Map();
      this.bySource.set(source, mine);
    }
    if (mine.size >= TCP_PER_SOURCE) {
      // The source's oldest idle connection makes room: holding connections open only costs the holder.
      let oldest: TcpSocket | null = null;
      let at = Number.POSITIVE_INFINITY;
      for (const [c, t] of mine) if (t < at) [oldest, at] = [c, t];
      oldest?.destroy();
    }
    mine.set(conn, Date.now());
    this.total++;
    conn.once('close', () => {
      if (mine.delete(conn)) this.total--;
      if (mine.size === 0) this.bySource.delete(source);
    });
    if (this.total > TCP_PRESSURE) {
      // Under pressure every idle connection gets the short timeout, new ones included.
      for (const conns of this.bySource.values())
        for (const c of conns.keys()) c.setTimeout(TCP_IDLE_UNDER_PRESSURE_MS);
    }
  }

  active(conn: TcpSocket): void {
    this.bySource.get(conn.remoteAddress ?? '')?.set(conn, Date.now());
  }

  get idleMs(): number {
    return this.total > TCP_PRESSURE ? TCP_IDLE_UNDER_PRESSURE_MS : TCP_IDLE_MS;
  }
}

export interface ListenerDeps {
  engine: DnsEngine;
  rrl: ResponseRateLimiter;
  stats: QueryStatsBatcher;
  axfrAllow: BlockList;
  log: Logger;
  metrics?: ProtocolMetrics;
}

const RCODE_NAMES = [
  'NOERROR',
  'FORMERR',
  'SERVFAIL',
  'NXDOMAIN',
  'NOTIMP',
  'REFUSED',
  '',
  '',
  '',
  'NOTAUTH',
];

function record(
  deps: ListenerDeps,
  h: Handled,
  started: bigint,
  transport: 'udp' | 'tcp',
  inBytes: number,
): void {
  const micros = Number(process.hrtime.bigint() - started) / 1000;
  if (h.zone && h.query) deps.stats.add(h.zone.snapshot.zoneId, typeName(h.query.qtype), micros);
  // Per query type and rcode: a bounded set of series, whatever the query names.
  const rcode = h.response ? h.response[3]! & 0x0f : -1;
  deps.metrics?.observe(
    `dns-${transport}`,
    h.query ? typeName(h.query.qtype) : 'malformed',
    rcode < 0 ? 'dropped' : (RCODE_NAMES[rcode] ?? `RCODE${rcode}`),
    micros / 1e6,
    { in: inBytes, out: h.response?.length ?? 0 },
    { customer: h.zone?.snapshot.customerId ?? null },
  );
}

/** RRL response class: negative answers share one bucket per zone, errors one in all. */
function responseClass(h: Handled): string {
  if (h.kind === 'nxdomain' || h.kind === 'nodata') return `neg|${h.zone?.apexKey}`;
  if (h.kind === 'error' || h.kind === 'refused' || !h.query) return 'err';
  return `${h.query.key}|${h.query.qtype}`;
}

export function listenUdp(deps: ListenerDeps, host: string, port: number): Promise<Socket> {
  const socket = createSocket({ type: isIP(host) === 6 ? 'udp6' : 'udp4', recvBufferSize: 4 << 20 });
  socket.on('message', (msg: Buffer, rinfo: RemoteInfo) => {
    const started = process.hrtime.bigint();
    const h = deps.engine.handle(msg, 'udp');
    if (!h.response) return;
    let out = h.response;
    const decision = deps.rrl.enabled ? deps.rrl.check(rinfo.address, responseClass(h)) : 'send';
    if (decision === 'drop') return;
    if (decision === 'slip') out = slipResponse(out, h.query ? 12 + wireLength(h.query.labels) + 4 : 12);
    socket.send(out, rinfo.port, rinfo.address);
    record(deps, h, started, 'udp', msg.length);
  });
  socket.on('error', (err) => deps.log.warn({ err }, 'dns: UDP socket error'));
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      resolve(socket);
    });
  });
}

export function listenTcp(deps: ListenerDeps, host: string, port: number): Promise<Server> {
  const connections = new TcpConnections();
  const server = createServer((conn) => serveConnection(deps, conn, connections));
  server.maxConnections = TCP_MAX_CONNECTIONS;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

function serveConnection(deps: ListenerDeps, conn: TcpSocket, connections: TcpConnections): void {
  let pending: Buffer = Buffer.alloc(0);
  conn.setNoDelay(true);
  conn.setTimeout(connections.idleMs, () => conn.destroy());
  connections.admit(conn);
  conn.on('error', () => conn.destroy());
  const send = (msg: Buffer) => {
    const frame = Buffer.allocUnsafe(2 + msg.length);
    frame.writeUInt16BE(msg.length, 0);
    msg.copy(frame, 2);
    conn.write(frame);
  };
  conn.on('data', (chunk: Buffer) => {
    connections.active(conn);
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 2) {
      const length = pending.readUInt16BE(0);
      if (pending.length < 2 + length) break;
      const msg = pending.subarray(2, 2 + length);
      pending = pending.subarray(2 + length);
      if (length < 12) {
        conn.destroy();
        return;
      }
      if (isTransfer(msg)) {
        transfer(deps, conn, msg, send);
        continue;
      }
      const started = process.hrtime.bigint();
      const h = deps.engine.handle(msg, 'tcp');
      if (h.response) send(h.response);
      record(deps, h, started, 'tcp', msg.length);
    }
  });
}

function isTransfer(msg: Buffer): boolean {
  try {
    const q = parseQuery(msg);
    return q !== null && q.opcode === 0 && (q.qtype === T.AXFR || q.qtype === T.IXFR);
  } catch {
    return false;
  }
}

function transfer(deps: ListenerDeps, conn: TcpSocket, msg: Buffer, send: (m: Buffer) => void): void {
  const q = parseQuery(msg)!;
  const zone = deps.engine.zones.get(q.key) ?? null;
  const address = conn.remoteAddress ?? '';
  // A signed transfer request is verified before anything else (RFC 8945 §5.2).
  const verdict = deps.engine.verify(q, msg);
  if (verdict && !verdict.ok) {
    deps.log.info({ zone: q.key, address, tsig: verdict.error }, 'dns: signed zone transfer refused');
    send(deps.engine.tsigError(q, verdict, 'tcp'));
    return;
  }
  const refuse = (): void => {
    const refused = transferError(q, RCODE.REFUSED);
    send(verdict ? deps.engine.signResponse(refused, verdict) : refused);
  };
  if (!zone) {
    refuse();
    return;
  }
  // Allowed by a key that covers the zone, or (unsigned) by the source address.
  const allowed = verdict
    ? keyCoversZone(verdict.key, zone.apexKey)
    : transferAllowed(deps.axfrAllow, address);
  const key = verdict?.key.name;
  if (!allowed) {
    deps.log.info({ zone: zone.snapshot.apex, address, key }, 'dns: zone transfer refused');
    refuse();
    return;
  }
  deps.log.info(
    { zone: zone.snapshot.apex, address, key, serial: zone.snapshot.soa.serial },
    'dns: zone transfer',
  );
  const messages = axfrMessages(q, zone);
  if (!verdict) {
    for (const m of messages) send(m);
    return;
  }
  // Every message is signed: the first over the request's MAC, each later one over the MAC
  // before it with only the timers (RFC 8945 §5.3.1).
  const now = deps.engine.nowSeconds();
  let previousMac = verdict.requestMac;
  messages.forEach((m, i) => {
    const signed = sign(m, verdict.key, now, { previousMac, timersOnly: i > 0 });
    previousMac = signed.mac;
    send(signed.message);
  });
}
