import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { Aedes, Client } from 'aedes';
import type { Logger } from 'pino';
import type { RoleServer } from '../../kernel/kernel.js';
import type { IotDevicesTable } from './migrations.js';
import { type BrokerPolicy, MQTT_LIMITS } from './mqtt/broker-policy.js';
import { grantedQos, markRedeliveries } from './mqtt/delivery-rules.js';
import { ownerOf, type StorePersistence } from './mqtt/store-persistence.js';
import { type PemPair, selfSignedPair } from './self-signed.js';
import { type IotService, topicRootOf } from './service.js';
import { parseTelemetry } from './telemetry.js';

// CONNACK return codes of MQTT 3.1.1.
const IDENTIFIER_REJECTED = 2;
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;
const SERVER_UNAVAILABLE = 3;

/** How many accepted connections may wait in the kernel's queue (a burst of reconnecting devices). */
const ACCEPT_BACKLOG = 4096;
/** A socket that sends no CONNECT within this is closed (aedes's default is 30 s). */
const CONNECT_TIMEOUT_MS = 10_000;

/** `revoked`: the device was deleted or deactivated while connected; its will is not published. */
type DeviceClient = Client & { device?: IotDevicesTable; revoked?: boolean };

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
  /** Where retained messages and sessions are kept (aedes's persistence interface). */
  persistence: () => Promise<object>;
  /** Connect rate, connection cap and the sizes of what is kept per device. */
  policy: BrokerPolicy;
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
  private persistence: StorePersistence | null = null;
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
    const persistence = markRedeliveries(
      (await this.options.persistence()) as StorePersistence & {
        outgoingStream: StorePersistence['outgoingStream'];
      },
    );
    this.persistence = persistence;
    const broker = await Aedes.createBroker({
      // biome-ignore lint/suspicious/noExplicitAny: aedes types its persistence as its own class
      persistence: persistence as any,
      connectTimeout: CONNECT_TIMEOUT_MS,
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
            this.admitDevice(c, r.device, done);
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
        const c = client as DeviceClient | null;
        // A will of a client that died with an earlier broker (kill -9): its device is checked anew.
        if (!c) return void this.authorizeOrphanWill(packet, done);
        const device = c.revoked ? undefined : c.device;
        const root = device ? topicRootOf(device.mqtt_username) : null;
        if (!device || !root || !packet.topic.startsWith(`${root}/`)) {
          this.log.warn(
            { client: client?.id, topic: packet.topic },
            'mqtt: publish outside the device tree refused',
          );
          return done(new Error('publish outside the device’s topic tree'));
        }
        if (packet.retain && packet.payload.length > 0) {
          void this.retainedFits(device, packet.topic).then((fits) => {
            if (fits) return this.authorizeStored(c, device, root, packet, done);
            this.log.warn(
              { device: device.device_id, topic: packet.topic },
              'mqtt: retained message limit reached',
            );
            done(new Error('retained message limit reached'));
          }, done);
          return;
        }
        this.authorizeStored(c, device, root, packet, done);
      },
      // Every delivery is checked here: never above the QoS its subscriptions were granted.
      authorizeForward: (client, packet) => {
        if (packet.qos > 0) {
          const subscriptions = (client as Client & { subscriptions: Record<string, { qos: number }> })
            .subscriptions;
          const granted = grantedQos(subscriptions, packet.topic);
          if (granted !== null && granted < packet.qos) packet.qos = granted as 0 | 1 | 2;
        }
        return packet;
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
    // aedes reports here what it cannot pin on one client (a will it could not publish after a restart).
    (broker as unknown as NodeJS.EventEmitter).on('error', (err: Error) =>
      this.log.error({ err }, 'mqtt: broker error'),
    );
    await this.serve(broker);
  }

  /**
   * The attributes and telemetry topics are stored before the publish is acknowledged. A QoS 2
   * message sent again (DUP) before its PUBREL is already held by the session: aedes answers it
   * with PUBREC again and publishes nothing, so it is not stored twice either.
   */
  private authorizeStored(
    client: DeviceClient | null,
    device: IotDevicesTable,
    root: string,
    packet: { topic: string; payload: Buffer | string; qos: number; messageId?: number },
    done: (err: Error | null) => void,
  ): void {
    if (client && packet.qos === 2 && packet.messageId !== undefined && this.persistence) {
      this.persistence.incomingGetPacket(client, packet).then(
        () => done(null),
        () => this.store(device, root, packet, done),
      );
      return;
    }
    this.store(device, root, packet, done);
  }

  private store(
    device: IotDevicesTable,
    root: string,
    packet: { topic: string; payload: Buffer | string; retain?: boolean },
    done: (err: Error | null) => void,
  ): void {
    // aedes acknowledges QoS 1 before it stores a retained message: stored here first, a PUBACK
    // means it survives a kill -9 (aedes's own write after it is the same row again).
    if (packet.retain && this.persistence) {
      const kept = this.persistence;
      kept.storeRetained(packet).then(
        () => this.storeData(device, root, packet, done),
        (err) => done(err as Error),
      );
      return;
    }
    this.storeData(device, root, packet, done);
  }

  private storeData(
    device: IotDevicesTable,
    root: string,
    packet: { topic: string; payload: Buffer | string },
    done: (err: Error | null) => void,
  ): void {
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
    if (packet.topic !== `${root}/telemetry`) {
      done(null);
      return;
    }
    const points = parseTelemetry(packet.payload as Buffer, this.iot.now());
    if (!points) {
      this.malformed++;
      this.log.warn({ device: device.device_id }, 'mqtt: malformed telemetry dropped');
      done(null);
      return;
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
  }

  /**
   * The login succeeded: the customer's connection cap is the last check (CONNACK 3, server
   * unavailable, past it: the device retries later, as it would against a full Mosquitto).
   */
  private admitDevice(
    c: DeviceClient,
    device: IotDevicesTable,
    done: (err: ReturnType<typeof refusal> | null, ok: boolean) => void,
  ) {
    const policy = this.options.policy;
    policy.limitFor(MQTT_LIMITS.connections, device.customer_id).then(
      (max) => {
        if (c.closed) return done(refusal(SERVER_UNAVAILABLE), false);
        if (!policy.takeConnection(device.customer_id, c.id, max, c.conn as unknown as Socket)) {
          this.log.warn({ customer: device.customer_id, max }, 'mqtt: connection limit reached');
          return done(refusal(SERVER_UNAVAILABLE), false);
        }
        done(null, true);
      },
      (err) => {
        this.log.error({ err }, 'mqtt: connection limit check failed');
        done(refusal(SERVER_UNAVAILABLE), false);
      },
    );
  }

  /** Whether one more retained message fits under the device's plan (replacing one always does). */
  private async retainedFits(device: IotDevicesTable, topic: string): Promise<boolean> {
    const kept = this.persistence;
    if (!kept || typeof kept.retainedCount !== 'function' || kept.hasRetained(topic)) return true;
    const max = await this.options.policy.limitFor(MQTT_LIMITS.retainedPerDevice, device.customer_id);
    return max === null || kept.retainedCount(ownerOf(topic)) < max;
  }

  /**
   * A will left by a client whose broker died (a kill -9): published only while its device is
   * still active and the will lies in its topic tree. A will that may not be published is
   * deleted here, so it is not offered again at every sweep.
   */
  private authorizeOrphanWill(
    packet: { topic: string; payload: Buffer | string; qos: number; clientId?: string },
    done: (err: Error | null) => void,
  ): void {
    const username = packet.clientId ?? '';
    this.iot.repo.byUsername(username).then(
      async (device) => {
        const active =
          device && device.is_active === 1 && (await this.iot.activeCustomer(device.customer_id));
        const root = device ? topicRootOf(device.mqtt_username) : null;
        if (!device || !active || !root || !packet.topic.startsWith(`${root}/`)) {
          await this.persistence?.delWill({ id: username });
          return done(new Error('will of a removed or inactive device dropped'));
        }
        this.store(device, root, packet, done);
      },
      (err) => done(err as Error),
    );
  }

  private async serve(broker: Aedes): Promise<void> {
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
    this.server = createServer((socket) => {
      if (this.options.policy.admitSocket(socket)) broker.handle(socket);
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen({ port: this.options.port, host: this.options.host, backlog: ACCEPT_BACKLOG }, () =>
        resolve(),
      );
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
      const made = await selfSignedPair(dir, tls.names());
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
    this.tlsListener = await listen(server, tls.port, this.options.host, (s) =>
      this.options.policy.admitSocket(s),
    );
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
    const listener = await listen(server, port, this.options.host, (s) => this.options.policy.admitSocket(s));
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
    // Its will is not published: the device no longer exists or may not send (authorizePublish).
    for (const client of this.sessionsOf(username)) {
      client.revoked = true;
      client.close();
    }
  };

  /** The live sessions of one device login (its client ids are the username and suffixed ones). */
  private sessionsOf(username: string): DeviceClient[] {
    return [...this.clients.values()].filter((c) => c.device?.mqtt_username === username);
  }

  /** Emulator reset: every device is gone, and so are the sessions and retained messages kept. */
  async afterReset(): Promise<void> {
    for (const client of [...this.clients.values()]) {
      client.revoked = true;
      client.close();
    }
    await this.persistence?.reload();
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

async function listen(
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
