import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:net';
import type { Aedes, Client } from 'aedes';
import type { Logger } from 'pino';
import type { RoleServer } from '../../kernel/kernel.js';
import { type BrokerPolicy, MQTT_LIMITS } from './mqtt/broker-policy.js';
import type { BrokerPersistence, BrokerState } from './mqtt/broker-state.js';
import { grantedQos, markRedeliveries, subscriptionIdentifiers } from './mqtt/delivery-rules.js';
import { type DeviceClient, DeviceLogin } from './mqtt/device-login.js';
import {
  ACCEPT_BACKLOG,
  closeListener,
  type Listener,
  MQTT_WS_PATH,
  startTlsListener,
  startWebSocketListener,
} from './mqtt/listeners.js';
import { installOutgoingGate } from './mqtt/outgoing-gate.js';
import { PublishGate } from './mqtt/publish-gate.js';
import { RecentRevocations } from './mqtt/recent-revocations.js';
import { SessionDeadlines } from './mqtt/session-deadlines.js';
import { type ResumingClient, SessionResume } from './mqtt/session-resume.js';
import { SharedSubscriptions, type SharingBroker, type SharingClient } from './mqtt/shared-subscriptions.js';
import type { PemPair } from './self-signed.js';
import { type IotService, topicRootOf } from './service.js';

/** A socket that sends no CONNECT within this is closed (aedes's default is 30 s). */
const CONNECT_TIMEOUT_MS = 10_000;

export interface BrokerOptions {
  host: string;
  port: number;
  /** MQTT over TLS: its port (null: no such listener), and its pair (null: self-signed). */
  tls?: { port: number | null; pair: PemPair | null; dataDir: string; names: () => string[] };
  /** MQTT over WebSocket on `/mqtt` (null: no such listener). */
  wsPort?: number | null;
  onListening?: (protocol: 'mqtt (tcp)' | 'mqtt (tls)' | 'mqtt (ws)', address: string) => void;
  /** Where retained messages and sessions are kept, and how other processes hear of messages. */
  state: () => BrokerState;
  /** Connect rate, connection cap and the sizes of what is kept per device. */
  policy: BrokerPolicy;
}

/**
 * The MQTT broker (role `mqtt`): aedes, embedded, speaking MQTT 3.1.1 and 5 on every listener.
 * A device logs in with the username and password from its creation, with its username as
 * client id, and publishes and subscribes only below its topic root `devices/<username>/`.
 * Telemetry on `…/telemetry` is stored before a QoS 1 message is acknowledged. One broker serves
 * plain TCP and, when configured, TLS and WebSocket: the same logins, topic rules and sessions
 * whichever way a device comes in.
 */
export class MqttBroker implements RoleServer {
  readonly role = 'mqtt' as const;
  readonly name = 'mqtt broker';
  private broker: Aedes | null = null;
  private persistence: BrokerPersistence | null = null;
  private deadlines: SessionDeadlines | null = null;
  private server: Server | null = null;
  private tlsListener: Listener | null = null;
  private wsListener: Listener | null = null;
  /** Live sessions by client id; a device may hold several (its username, and suffixed ids). */
  private readonly clients = new Map<string, DeviceClient>();
  private readonly recentRevocations = new RecentRevocations();
  private readonly gate: PublishGate;
  private shared: SharedSubscriptions | null = null;

  constructor(
    private readonly iot: IotService,
    private readonly log: Logger,
    private readonly options: BrokerOptions,
  ) {
    this.gate = new PublishGate(iot, options.policy, log, () => this.persistence);
  }

  /** Malformed telemetry messages since start, for the log and the stats endpoint. */
  get malformed(): number {
    return this.gate.malformed;
  }

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
    const resume = new SessionResume();
    const state = this.options.state();
    const persistence = resume.wrap(markRedeliveries(state.persistence));
    this.persistence = persistence;
    const policy = this.options.policy;
    const wide = (name: (typeof MQTT_LIMITS)[keyof typeof MQTT_LIMITS]) => policy.brokerWide(name) ?? 0;
    // A two-byte field in the CONNACK: 65,535 is as good as none.
    const receiveMaximum = Math.min(wide(MQTT_LIMITS.receiveMaximum), 65_535);
    const login = new DeviceLogin(this.iot, policy, this.log, wide(MQTT_LIMITS.keepaliveMax), receiveMaximum);
    installOutgoingGate();
    let shared: SharedSubscriptions | null = null;
    const broker = await Aedes.createBroker({
      // biome-ignore lint/suspicious/noExplicitAny: aedes types its persistence as its own class
      persistence: persistence as any,
      ...(state.mq ? { mq: state.mq } : {}),
      connectTimeout: CONNECT_TIMEOUT_MS,
      // MQTT 5: what the CONNACK advertises, and enforces (0: none).
      maximumPacketSize: wide(MQTT_LIMITS.maxPacketBytes),
      topicAliasMaximum: wide(MQTT_LIMITS.topicAliases),
      receiveMaximum,
      sessionExpiryIntervalLimit: wide(MQTT_LIMITS.sessionExpiryMax),
      pendingSessionsLimit: wide(MQTT_LIMITS.expiringSessions),
      preConnect: (client, packet, done) => {
        shared?.attach(client as unknown as SharingClient);
        resume.begin(client as unknown as ResumingClient, packet.clean === true);
        login.preConnect(client, packet, done);
      },
      // A session whose MQTT 5 expiry passed unnoticed (a late timer) ends before it could resume.
      authenticate: (client, username, password, done) =>
        login.authenticate(client, username, password, (err, ok) => {
          if (err || !ok || !this.deadlines) return done(err, ok);
          resumeUntilDisconnect(client);
          Promise.all([this.deadlines.settle(client.id), forgetInboundQos2(client, persistence)]).then(
            () => done(null, true),
            (e) => {
              this.log.error({ err: e, client: client.id }, 'mqtt: session start');
              done(null, true);
            },
          );
        }),
      authorizePublish: this.gate.authorizePublish,
      // Every delivery is checked here: never above the QoS its subscriptions were granted.
      authorizeForward: (client, packet) => {
        const c = client as Client & {
          subscriptions: Record<string, { qos: number; si?: number }>;
          version?: number;
        };
        if (packet.qos > 0) {
          const granted = grantedQos(c.subscriptions, packet.topic);
          if (granted !== null && granted < packet.qos) packet.qos = granted as 0 | 1 | 2;
        }
        // A live message matching several subscriptions carries all their identifiers. A
        // retained one sent because of a new subscription keeps that subscription's alone.
        if (c.version === 5 && !packet.retain) {
          const ids = subscriptionIdentifiers(c.subscriptions, packet.topic);
          if (ids.length > 0)
            packet.properties = {
              ...packet.properties,
              subscriptionIdentifier: (ids.length === 1 ? ids[0] : ids) as number,
            };
        }
        return packet;
      },
      // null: the SUBACK refuses this filter (0x80 in 3.1.1, 0x87 not authorized in MQTT 5).
      authorizeSubscribe: (client, sub, done) => done(null, inDeviceTree(client, sub.topic) ? sub : null),
    });
    shared = new SharedSubscriptions(broker as unknown as SharingBroker, (client, filter) =>
      inDeviceTree(client as unknown as Client, filter),
    );
    this.shared = shared;
    // aedes reports here what it cannot pin on one client (a will it could not publish after a restart).
    (broker as unknown as NodeJS.EventEmitter).on('error', (err: Error) =>
      this.log.error({ err }, 'mqtt: broker error'),
    );
    // After aedes loaded the kept sessions (setup), before anyone may connect: sessions that
    // expired while no broker ran are ended, the others timed again.
    this.deadlines = new SessionDeadlines(
      state.tables,
      { wipe: (id) => persistence.wipeSession(id), connected: (id) => this.clients.has(id) },
      this.log,
      state.shared,
    );
    await this.deadlines.resume();
    await this.serve(broker);
  }

  private async serve(broker: Aedes): Promise<void> {
    broker.on('client', (client: DeviceClient) => {
      if (!client.device) return;
      // Deleted, deactivated or rotated while it was logging in, or its customer's status changed:
      // it was let in on the old state.
      const started = client.loginStartedAt ?? 0;
      if (
        this.recentRevocations.revokes(client.device.mqtt_username, started) ||
        this.recentRevocations.revokes(customerKey(client.device.customer_id), started) ||
        this.recentRevocations.revokes(customerKey(''), started)
      ) {
        client.revoked = true;
        client.close();
        return;
      }
      this.clients.set(client.id, client);
      const v5 = client as DeviceClient & { version: number; sessionExpiryInterval: number };
      this.deadlines?.connected(client.id, v5.version, v5.sessionExpiryInterval);
      void this.iot.connection(client.device, true).catch((err) => this.log.error({ err }, 'mqtt: state'));
    });
    broker.on('clientDisconnect', (client: DeviceClient) => {
      this.shared?.leave(client as unknown as SharingClient);
      if (!client.device || this.clients.get(client.id) !== client) return;
      this.clients.delete(client.id);
      const v5 = client as DeviceClient & { version: number; sessionExpiryInterval: number };
      this.deadlines?.disconnected(client.id, v5.version, v5.sessionExpiryInterval);
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
    const admit = this.options.policy.admitSocket.bind(this.options.policy);
    this.server = createServer((socket) => {
      if (admit(socket)) broker.handle(socket);
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
      const { tls, wsPort = null, host } = this.options;
      if (tls && tls.port !== null) {
        this.tlsListener = await startTlsListener(broker, { ...tls, port: tls.port, host, admit }, this.log);
        this.log.info({ port: this.tlsPort() }, 'mqtt: TLS listener up');
        this.options.onListening?.('mqtt (tls)', `${host}:${this.tlsPort()}`);
      }
      if (wsPort !== null) {
        this.wsListener = await startWebSocketListener(broker, { port: wsPort, host, admit }, this.log);
        this.log.info({ port: this.wsPort() }, 'mqtt: WebSocket listener up');
        this.options.onListening?.('mqtt (ws)', `ws://${host}:${this.wsPort()}${MQTT_WS_PATH}`);
      }
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /**
   * Drops the live connections of a customer whose status changed (all of them for `''`: notices
   * may have been lost). A suspended customer's devices are refused when they reconnect; an
   * active one's log straight back in.
   */
  dropCustomer(customerId: string): void {
    this.recentRevocations.note(customerKey(customerId), Date.now());
    for (const client of [...this.clients.values()])
      if (customerId === '' || client.device?.customer_id === customerId) client.close();
  }

  /**
   * Drops the live connections of a deleted, deactivated or rotated device at once: those whose
   * login began before the change (`at`); a login after it was checked against the new state. A
   * login still under way is ended when it registers (recentRevocations).
   */
  private readonly revoke = (username: string, at: number) => {
    this.recentRevocations.note(username, at);
    // Its will is not published: the device no longer exists or may not send (authorizePublish).
    for (const client of this.sessionsOf(username)) {
      if ((client.loginStartedAt ?? 0) > at) continue;
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
    this.deadlines?.stop();
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
    await Promise.all([closeListener(this.tlsListener), closeListener(this.wsListener)]);
    this.tlsListener = null;
    this.wsListener = null;
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (this.broker ? this.broker.close(() => resolve()) : resolve()));
    // Its Redis connections, scaled out; what it held in memory otherwise.
    await this.persistence?.destroy().catch((err) => this.log.warn({ err }, 'mqtt: persistence not closed'));
    this.persistence = null;
    this.server = null;
    this.broker = null;
  }
}

/** Whether a filter lies in the topic tree of the device the client logged in as. */
function inDeviceTree(client: Client, filter: string): boolean {
  const device = (client as DeviceClient).device;
  const root = device ? topicRootOf(device.mqtt_username) : null;
  return root !== null && (filter === `${root}/#` || filter.startsWith(`${root}/`));
}

/**
 * A clean start discards the previous session (MQTT-3.1.2-6), including inbound QoS 2 messages
 * still awaiting their PUBREL; aedes 2.0.0-beta.1 never asks the persistence to. Left, such a
 * message made the next one under its packet id look like a resend, and its telemetry was not stored.
 */
function forgetInboundQos2(client: Client, persistence: BrokerPersistence): Promise<void> | undefined {
  return (client as Client & { _cleanStart?: boolean })._cleanStart
    ? persistence.cleanIncoming(client)
    : undefined;
}

/**
 * MQTT 5, 3.1.2.4: Clean Start 0 resumes the kept session, queued messages included, even when
 * the new CONNECT's Session Expiry Interval is 0 (the session then ends at disconnect). aedes
 * takes expiry 0 for a clean session and would drop the queued messages; marked not clean, the
 * connection resumes them, and aedes still ends the session at disconnect, by its interval.
 */
function resumeUntilDisconnect(client: Client): void {
  const c = client as Client & { version?: number; _cleanStart?: boolean; sessionExpiryInterval?: number };
  if (c.version === 5 && c._cleanStart === false && c.sessionExpiryInterval === 0) c.clean = false;
}

/** The key of a customer's status change among recent revocations (`''`: every customer). */
const customerKey = (customerId: string) => `customer:${customerId}`;
