import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { Server, Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { Aedes } from 'aedes';
import type { Logger } from 'pino';
import { type PemPair, selfSignedPair } from '../self-signed.js';

/** How many accepted connections may wait in the kernel's queue (a burst of reconnecting devices). */
export const ACCEPT_BACKLOG = 4096;

/** Path of the MQTT over WebSocket endpoint (what MQTT.js, Paho and HiveMQ's browser clients use). */
export const MQTT_WS_PATH = '/mqtt';

/** A listener and the sockets it accepted, so that stop() never waits on a lingering one. */
export interface Listener {
  server: Server | TlsServer | HttpServer;
  sockets: Set<Socket>;
  close?: () => void;
}

export interface TlsListenerOptions {
  port: number;
  host: string;
  /** The operator's pair, or null: a self-signed one kept in `dataDir`. */
  pair: PemPair | null;
  dataDir: string;
  names: () => string[];
  admit: (socket: Socket) => boolean;
}

/** MQTT over TLS: `secureConnection` streams are the decrypted side, read by aedes as TCP is. */
export async function startTlsListener(broker: Aedes, o: TlsListenerOptions, log: Logger): Promise<Listener> {
  let pair = o.pair;
  if (!pair) {
    const dir = join(o.dataDir, 'mqtt-tls');
    const made = await selfSignedPair(dir, o.names());
    if (made.regenerated)
      log.warn(
        { dir, names: o.names() },
        'mqtt: the self-signed TLS certificate expired or no longer names this host: a new one was made; give devices the new cert.pem',
      );
    log.info({ cert: join(dir, 'cert.pem') }, 'mqtt: TLS listener uses a self-signed certificate');
    pair = made;
  }
  const server = createTlsServer({ cert: pair.cert, key: pair.key }, broker.handle);
  server.on('tlsClientError', (err) => log.debug({ err: err.message }, 'mqtt: TLS handshake failed'));
  return listen(server, o.port, o.host, o.admit);
}

/** MQTT over WebSocket on `/mqtt`; any other request gets 426 and a hint. */
export async function startWebSocketListener(
  broker: Aedes,
  o: { port: number; host: string; admit: (socket: Socket) => boolean },
  log: Logger,
): Promise<Listener> {
  // The `ws` package, loaded only where this listener is on.
  const { WebSocketServer, createWebSocketStream } = await import('ws');
  const server = createHttpServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' });
    res.end(`MQTT over WebSocket: connect to ${MQTT_WS_PATH} with the "mqtt" subprotocol\n`);
  });
  // `path` answers 400 to an upgrade elsewhere; the first subprotocol offered is accepted, as
  // browser clients offer "mqtt" (3.1.1 and 5) or "mqttv3.1".
  const wss = new WebSocketServer({ server, path: MQTT_WS_PATH, maxPayload: 16 * 1024 * 1024 });
  wss.on('connection', (socket, req) => {
    const stream = createWebSocketStream(socket);
    stream.on('error', (err) => log.debug({ err: err.message }, 'mqtt: WebSocket error'));
    broker.handle(stream, req);
  });
  wss.on('error', (err) => log.error({ err }, 'mqtt: WebSocket server error'));
  const listener = await listen(server, o.port, o.host, o.admit);
  listener.close = () => {
    for (const client of wss.clients) client.terminate();
    wss.close();
  };
  return listener;
}

export async function listen(
  server: Listener['server'],
  port: number,
  host: string,
  admit: (socket: Socket) => boolean,
): Promise<Listener> {
  const sockets = new Set<Socket>();
  // The connect rate, before TLS or HTTP is read: a refused socket costs no handshake.
  server.prependListener('connection', (socket: Socket) => void admit(socket));
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog: ACCEPT_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, sockets };
}

export async function closeListener(listener: Listener | null): Promise<void> {
  if (!listener) return;
  listener.close?.();
  const closed = new Promise<void>((resolve) => listener.server.close(() => resolve()));
  for (const socket of listener.sockets) socket.destroy();
  await closed;
}
