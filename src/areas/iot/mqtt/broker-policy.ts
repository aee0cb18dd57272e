import type { Socket } from 'node:net';
import type { IdentityService } from '../../../kernel/auth/identity.js';
import type { LimitName, Limits } from '../../../kernel/limits/quotas.js';
import type { RateLimiter } from '../../../kernel/limits/rate-limiter.js';
import type { IotRepo } from '../repo.js';

/** The limits-table rows the broker enforces. */
export const MQTT_LIMITS = {
  connections: 'iot.mqtt_connections',
  retainedPerDevice: 'iot.mqtt_retained_per_device',
  queuedPerSession: 'iot.mqtt_queued_per_session',
  maxPacketBytes: 'iot.mqtt_max_packet_bytes',
  topicAliases: 'iot.mqtt_topic_aliases',
  receiveMaximum: 'iot.mqtt_receive_maximum',
  keepaliveMax: 'iot.mqtt_keepalive_max_seconds',
  sessionExpiryMax: 'iot.mqtt_session_expiry_max_seconds',
  expiringSessions: 'iot.mqtt_expiring_sessions',
} as const satisfies Record<string, LimitName>;

/** The rate-limit bucket of new MQTT connections (TCP, TLS and WebSocket), counted per remote address. */
export const CONNECT_BUCKET = 'mqtt.connect';

/**
 * The broker's admission rules, read from the limits tables: a connect rate per remote address
 * (checked when the socket is accepted, before any MQTT is read), a cap on live connections per
 * customer (checked at login), and the per-plan sizes of what the broker keeps for a device
 * (retained messages, messages queued for an offline session).
 */
export class BrokerPolicy {
  /** customer id → client id → connections holding it (a takeover briefly holds two). */
  private readonly live = new Map<string, Map<string, number>>();
  /** MQTT username → customer id: never changes, so a lookup per username is enough. */
  private readonly customerOfUsername = new Map<string, string | null>();
  /** Sockets refused by the connect rate since start (for the log and the stats). */
  refusedConnects = 0;

  constructor(
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly limiter: RateLimiter,
    private readonly devices: IotRepo,
  ) {}

  /**
   * Counts a new socket against its address's connect rate; a socket past it is destroyed (at
   * once when the counters are in memory, after Redis answers when scaled out). Answers whether
   * it may go on, where that is known now.
   */
  admitSocket(socket: Socket): boolean {
    const address = socket.remoteAddress ?? 'unknown';
    const now = this.limiter.consumeNow([CONNECT_BUCKET], address);
    if (now) {
      if (!now.allowed) this.refuse(socket);
      return now.allowed;
    }
    this.limiter.consume([CONNECT_BUCKET], address).then(
      (outcome) => {
        if (!outcome.allowed) this.refuse(socket);
      },
      () => {}, // Redis unreachable: admit rather than lock every device out
    );
    return true;
  }

  private refuse(socket: Socket) {
    this.refusedConnects++;
    socket.destroy();
  }

  /** A limit of the broker as a whole (the same for every plan: MQTT 5 CONNACK properties). */
  brokerWide(name: LimitName): number | null {
    return this.limits.of(name);
  }

  /** The plan's value of a per-customer limit. */
  async limitFor(name: LimitName, customerId: string): Promise<number | null> {
    const plan = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
    return this.limits.of(name, plan);
  }

  /** The plan's value of a per-device limit, found from the device's MQTT client id. */
  async limitForClient(name: LimitName, clientId: string): Promise<number | null> {
    let customerId = this.customerOfUsername.get(clientId);
    if (customerId === undefined) {
      customerId = (await this.devices.byUsername(clientId))?.customer_id ?? null;
      this.customerOfUsername.set(clientId, customerId);
    }
    return customerId === null ? this.limits.of(name) : this.limitFor(name, customerId);
  }

  /**
   * Takes one of the customer's connections for `clientId` unless `max` are live (a reconnect
   * of a client id already connected replaces its old connection, so it always fits). Synchronous
   * between the check and the count, so concurrent logins cannot both take the last one. The
   * connection is given back when `socket` closes.
   */
  takeConnection(
    customerId: string,
    clientId: string,
    max: number | null,
    socket: { once(e: 'close', f: () => void): unknown },
  ): boolean {
    let clients = this.live.get(customerId);
    if (!clients) {
      clients = new Map();
      this.live.set(customerId, clients);
    }
    const held = clients.get(clientId) ?? 0;
    if (held === 0 && max !== null && clients.size >= max) return false;
    clients.set(clientId, held + 1);
    socket.once('close', () => {
      const n = (clients.get(clientId) ?? 1) - 1;
      if (n > 0) clients.set(clientId, n);
      else clients.delete(clientId);
      if (clients.size === 0 && this.live.get(customerId) === clients) this.live.delete(customerId);
    });
    return true;
  }

  /** Live connections of a customer on this process. */
  connectionsOf(customerId: string): number {
    return this.live.get(customerId)?.size ?? 0;
  }
}
