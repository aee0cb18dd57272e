import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { Aedes, Client } from 'aedes';
import type { Logger } from 'pino';
import type { RoleServer } from '../../kernel/kernel.js';
import type { IotDevicesTable } from './migrations.js';
import { type PemPair, selfSignedPair } from './self-signed.js';
import { type IotService, topicRootOf } from './service.js';
import { parseTelemetry } from './telemetry.js';

// CONNACK return codes of MQTT 3.1.1.
const IDENTIFIER_REJECTED = 2;
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;

type DeviceClient = Client & { device?: IotDevicesTable };

/** Path of the MQTT over WebSocket endpoint (what MQTT.js, Paho and HiveMQ's browser clients use). */
export const MQTT_WS_PATH = '/mqtt';

export interface BrokerOptions {
  host: string;
  port: number;
  /** MQTT over TLS: its port (null: no such listener), and its pair (null: self-signed). */
  tls?: { port: number | null; pair: PemPair | null; dataDir: string; names: () => string[] };
  /** MQTT over WebSocket on `/mqtt` (null: no such listener). */
  wsPort?: number | null;
  onListening?: (protocol: 'mqtt (tcp)' | 'mqtt (tls)' | 'mqtt (ws)', address: string) => void;
}

/** A listener and the sockets it accepted, so that stop() never waits on a lingering one. */
interface Listener {
  server: Server | TlsServer | HttpServer;
  sockets: Set<Socket>;
  close?: () => void;
}

/**
 * The MQTT broker (role `mqtt`): aedes, embedded. A device logs in with the username and
 * password from its creation, with its username as client id, and publishes and subscribes only
 * below its topic root `devices/<username>/`. Telemetry on `…/telemetry` is stored before a QoS 1
 * message is acknowledged. One broker serves plain TCP and, when configured, TLS and WebSocket:
 * the same logins, topic rules and sessions whichever way a device comes in.
 */
export class MqttBroker implements RoleServer {
  readonly role = 'mqtt' as const;
  readonly name = 'mqtt broker';
  private broker: Aedes | null = null;
  private server: Server | null = null;
  private tlsListener: Listener | null = null;
  private wsListener: Listener | null = null;
  /** Live sessions by client id; a device may hold several (its username, and suffixed ids). */
  private readonly clients = new Map<string, DeviceClient>();
  /** Malformed telemetry messages since start, for the log and the stats endpoint. */
  malformed = 0;

  constructor(
    private readonly iot: IotService,
    private readonly log: Logger,
    private readonly options: BrokerOptions,
  ) {}

  /** Whether this process's broker is serving (the process has the `mqtt` role). */
  listening(): boolean {
    return this.server !== null;
  }

  /** Devices connected to this process's broker now. */
  connectedCount(): number {
    return new Set([...this.clients.values()].map((c) => c.device?.mqtt_username)).size;
  }

  port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? this.options.port;
  }

  /** Port of MQTT over TLS: the bound one here, else the configured one; null when not served. */
  tlsPort(): number | null {
    const port = this.options.tls?.port ?? null;
    if (port === null) return null;
    return (this.tlsListener?.server.address() as AddressInfo | null)?.port ?? port;
  }

  /** Port of MQTT over WebSocket (path `/mqtt`), like tlsPort(). */
  wsPort(): number | null {
    const port = this.options.wsPort ?? null;
    if (port === null) return null;
    return (this.wsListener?.server.address() as AddressInfo | null)?.port ?? port;
  }

  async start(): Promise<void> {
    // Loaded with the broker, so processes without the `mqtt` role never import it (~75 ms).
    const { Aedes } = await import('aedes');
    const broker = await Aedes.createBroker({
      authenticate: (client, username, password, done) => {
        const c = client as DeviceClient;
        if (!username || !password) return done(refusal(BAD_USERNAME_OR_PASSWORD), false);
        this.iot.authenticate(username, password.toString('utf8')).then(
          (r) => {
            if ('refused' in r)
              return done(
                refusal(r.refused === 'bad_credentials' ? BAD_USERNAME_OR_PASSWORD : NOT_AUTHORIZED),
                false,
              );
            // The client id is the username, or the username and a suffix (`d_…-sub`), as AWS IoT
            // and EMQX allow: one device may hold several sessions (a subscriber and a publisher),
            // and no device can take over another's session.
            if (!clientIdOf(username, c.id)) return done(refusal(IDENTIFIER_REJECTED), false);
            c.device = r.device;
            done(null, true);
          },
          (err) => {
            this.log.error({ err }, 'mqtt: login check failed');
            done(refusal(3), false);
          },
        );
      },
      // Telemetry is stored here, not in `published`: aedes sends a QoS 1 PUBACK right after this
      // check passes, so a message is acknowledged only once it is committed. A store failure
      // ends the connection unacknowledged and the device sends the message again.
      authorizePublish: (client, packet, done) => {
        const device = (client as DeviceClient | null)?.device;
        const root = device ? topicRootOf(device.mqtt_username) : null;
        if (!device || !root || !packet.topic.startsWith(`${root}/`)) {
          this.log.warn(
            { client: client?.id, topic: packet.topic },
            'mqtt: publish outside the device tree refused',
          );
          return done(new Error('publish outside the device’s topic tree'));
        }
        if (packet.topic === `${root}/attributes`) {
          this.iot.reportAttributes(device, packet.payload as Buffer).then(
            (ok) => {
              if (!ok) this.malformed++;
              done(null);
            },
            (err) => done(err as Error),
          );
          return;
        }
        if (packet.topic !== `${root}/telemetry`) return done(null);
        const points = parseTelemetry(packet.payload as Buffer, this.iot.now());
        if (!points) {
          this.malformed++;
          this.log.warn({ device: device.device_id }, 'mqtt: malformed telemetry dropped');
          return done(null);
        }
        this.iot.ingest(device, points).then(
          (rejected) => {
            if (rejected.length)
              this.log.info(
                { device: device.device_id, rejected },
                'mqtt: points refused by datapoint definitions',
              );
            done(null);
          },
          (err) => {
            this.log.error({ err }, 'mqtt: telemetry not stored');
            done(err as Error);
          },
        );
      },
      authorizeSubscribe: (client, sub, done) => {
        const device = (client as DeviceClient).device;
        const root = device ? topicRootOf(device.mqtt_username) : null;
        // null: the SUBACK carries the failure code 0x80 for this filter.
        if (!root || !(sub.topic === `${root}/#` || sub.topic.startsWith(`${root}/`)))
          return done(null, null);
        done(null, sub);
      },
    });
    broker.on('client', (client: DeviceClient) => {
      if (!client.device) return;
      this.clients.set(client.id, client);
      void this.iot.connection(client.device, true).catch((err) => this.log.error({ err }, 'mqtt: state'));
    });
    broker.on('clientDisconnect', (client: DeviceClient) => {
      if (!client.device || this.clients.get(client.id) !== client) return;
      this.clients.delete(client.id);
      // Online while any session of the device is.
      if (this.sessionsOf(client.device.mqtt_username).length > 0) return;
      void this.iot.connection(client.device, false).catch((err) => this.log.error({ err }, 'mqtt: state'));
    });
    this.iot.revocations.on('revoke', this.revoke);
    this.iot.commandSink = (username, topic, payload) => {
      if (this.sessionsOf(username).length === 0) return Promise.resolve(false);
      return new Promise((resolve, reject) =>
        broker.publish(
          { cmd: 'publish', topic, payload: Buffer.from(payload), qos: 1, retain: false, dup: false },
          (err) => (err ? reject(err) : resolve(true)),
        ),
      );
    };
    this.broker = broker;
    this.server = createServer(broker.handle);
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.options.port, this.options.host, () => resolve());
    });
    this.log.info({ port: this.port() }, 'mqtt: broker listening');
    this.options.onListening?.('mqtt (tcp)', `${this.options.host}:${this.port()}`);
    try {
      await this.startTls(broker);
      await this.startWebSocket(broker);
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  private async startTls(broker: Aedes): Promise<void> {
    const tls = this.options.tls;
    if (!tls || tls.port === null) return;
    let pair = tls.pair;
    if (!pair) {
      const dir = join(tls.dataDir, 'mqtt-tls');
      const made = selfSignedPair(dir, tls.names());
      if (made.regenerated)
        this.log.warn(
          { dir, names: tls.names() },
          'mqtt: the self-signed TLS certificate expired or no longer names this host: a new one was made; give devices the new cert.pem',
        );
      this.log.info({ cert: join(dir, 'cert.pem') }, 'mqtt: TLS listener uses a self-signed certificate');
      pair = made;
    }
    // `secureConnection` streams are the decrypted side: aedes reads MQTT from them as from TCP.
    const server = createTlsServer({ cert: pair.cert, key: pair.key }, broker.handle);
    server.on('tlsClientError', (err) => this.log.debug({ err: err.message }, 'mqtt: TLS handshake failed'));
    this.tlsListener = await listen(server, tls.port, this.options.host);
    this.log.info({ port: this.tlsPort() }, 'mqtt: TLS listener up');
    this.options.onListening?.('mqtt (tls)', `${this.options.host}:${this.tlsPort()}`);
  }

  private async startWebSocket(broker: Aedes): Promise<void> {
    const port = this.options.wsPort ?? null;
    if (port === null) return;
    // The `ws` package, loaded only where this listener is on.
    const { WebSocketServer, createWebSocketStream } = await import('ws');
    const server = createHttpServer((_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' });
      res.end(`MQTT over WebSocket: connect to ${MQTT_WS_PATH} with the "mqtt" subprotocol\n`);
    });
    // `path` answers 400 to an upgrade elsewhere; the first subprotocol offered is accepted, as
    // browser clients offer "mqtt" (3.1.1) or "mqttv3.1".
    const wss = new WebSocketServer({ server, path: MQTT_WS_PATH, maxPayload: 16 * 1024 * 1024 });
    wss.on('connection', (socket, req) => {
      const stream = createWebSocketStream(socket);
      stream.on('error', (err) => this.log.debug({ err: err.message }, 'mqtt: WebSocket error'));
      broker.handle(stream, req);
    });
    wss.on('error', (err) => this.log.error({ err }, 'mqtt: WebSocket server error'));
    const listener = await listen(server, port, this.options.host);
    listener.close = () => {
      for (const client of wss.clients) client.terminate();
      wss.close();
    };
    this.wsListener = listener;
    this.log.info({ port: this.wsPort() }, 'mqtt: WebSocket listener up');
    this.options.onListening?.('mqtt (ws)', `ws://${this.options.host}:${this.wsPort()}${MQTT_WS_PATH}`);
  }

  /**
   * Drops the live connections of a customer whose status changed (all of them for `''`: notices
   * may have been lost). A suspended customer's devices are refused when they reconnect; an
   * active one's log straight back in.
   */
  dropCustomer(customerId: string): void {
    for (const client of [...this.clients.values()])
      if (customerId === '' || client.device?.customer_id === customerId) client.close();
  }

  /** Drops the live connection of a deleted, deactivated or rotated device at once. */
  private readonly revoke = (username: string) => {
    for (const client of this.sessionsOf(username)) client.close();
  };

  /** The live sessions of one device login (its client ids are the username and suffixed ones). */
  private sessionsOf(username: string): DeviceClient[] {
    return [...this.clients.values()].filter((c) => c.device?.mqtt_username === username);
  }

  async stop(): Promise<void> {
    this.iot.revocations.off('revoke', this.revoke);
    this.iot.commandSink = null;
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
    await Promise.all([closeListener(this.tlsListener), closeListener(this.wsListener)]);
    this.tlsListener = null;
    this.wsListener = null;
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (this.broker ? this.broker.close(() => resolve()) : resolve()));
    this.server = null;
    this.broker = null;
  }
}

async function listen(server: Listener['server'], port: number, host: string): Promise<Listener> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, sockets };
}

async function closeListener(listener: Listener | null): Promise<void> {
  if (!listener) return;
  listener.close?.();
  const closed = new Promise<void>((resolve) => listener.server.close(() => resolve()));
  for (const socket of listener.sockets) socket.destroy();
  await closed;
}

function refusal(returnCode: number) {
  return Object.assign(new Error('refused'), { returnCode });
}

/**
 * Whether `clientId` may log in as `username`: the username itself, or the username, a `-` and
 * 1-23 of `A-Z a-z 0-9 _ -` (`d_…-sub`, `d_…-pub-2`).
 */
export function clientIdOf(username: string, clientId: string): boolean {
  if (clientId === username) return true;
  return (
    clientId.startsWith(`${username}-`) && /^[A-Za-z0-9_-]{1,23}$/.test(clientId.slice(username.length + 1))
  );
}
