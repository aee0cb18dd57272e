import type { Socket } from 'node:net';
import type { Client } from 'aedes';
import type { Logger } from 'pino';
import type { IotDevicesTable } from '../migrations.js';
import type { IotService } from '../service.js';
import { type BrokerPolicy, MQTT_LIMITS } from './broker-policy.js';
import { type FlowClient, FlowControl } from './flow-control.js';
import { noticeOversizeAfterConnack } from './oversize-notice.js';

// CONNACK return codes of MQTT 3.1.1; aedes answers an MQTT 5 client with the matching reason
// code (2 → 0x85 client identifier not valid, 3 → 0x88 server unavailable, 4 → 0x86 bad user
// name or password, 5 → 0x87 not authorized).
const IDENTIFIER_REJECTED = 2;
const SERVER_UNAVAILABLE = 3;
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;

/**
 * A connection as the broker sees it: aedes's client, the device it logged in as, and
 * `revoked` once the device was deleted or deactivated while connected (its will is dropped),
 * and when its login check began (a revocation ends only the sessions that began before it).
 * The underscored fields are aedes 2's own MQTT 5 CONNACK state, set here before it answers.
 */
export type DeviceClient = Client & {
  device?: IotDevicesTable;
  revoked?: boolean;
  loginStartedAt?: number;
  version?: number;
  _assignedClientId?: string;
  _serverKeepAlive?: number;
};

type LoginDone = (err: (Error & { returnCode: number }) | null, ok: boolean) => void;

/**
 * Who may connect: a device's username and password, its username (or username-suffix) as
 * client id, and room under its customer's connection cap.
 */
export class DeviceLogin {
  constructor(
    private readonly iot: IotService,
    private readonly policy: BrokerPolicy,
    private readonly log: Logger,
    /** Longest keep-alive an MQTT 5 client may ask for (the CONNACK's Server Keep Alive past it). */
    private readonly keepaliveMax: number | null,
    /** The broker's Receive Maximum for MQTT 5 clients (0: none). */
    private readonly receiveMaximum = 0,
  ) {}

  /**
   * Before the login: an MQTT 5 client that asks for no keep-alive or a longer one than the
   * broker allows is told the broker's (Server Keep Alive), as AWS IoT does. A 3.1.1 client
   * keeps its own, since 3.1.1 has no way to say so and refusing it would strand old devices.
   * Flow control (Receive Maximum, both ways) watches an MQTT 5 connection from here on, and an
   * oversized packet is answered with DISCONNECT 0x95 from its CONNACK on.
   */
  readonly preConnect = (
    client: Client,
    packet: { protocolVersion?: number; keepalive?: number; properties?: { receiveMaximum?: number } },
    done: (err: Error | null, ok: boolean) => void,
  ) => {
    FlowControl.attach(client as unknown as FlowClient, packet, this.receiveMaximum);
    noticeOversizeAfterConnack(client);
    const max = this.keepaliveMax;
    if (packet.protocolVersion === 5 && max && (!packet.keepalive || packet.keepalive > max))
      (client as DeviceClient)._serverKeepAlive = max;
    done(null, true);
  };

  readonly authenticate = (
    client: Client,
    username: string | undefined,
    password: Buffer | undefined,
    done: LoginDone,
  ) => {
    const c = client as DeviceClient;
    if (!username || !password) return done(refusal(BAD_USERNAME_OR_PASSWORD), false);
    c.loginStartedAt = Date.now();
    this.iot.authenticate(username, password.toString('utf8')).then(
      (r) => {
        if ('refused' in r)
          return done(
            refusal(r.refused === 'bad_credentials' ? BAD_USERNAME_OR_PASSWORD : NOT_AUTHORIZED),
            false,
          );
        // An MQTT 5 client that sent no client id is assigned its username (the CONNACK's
        // Assigned Client Identifier), rather than a random id no device could ever log in as.
        if (c._assignedClientId !== undefined) {
          c.id = username;
          c._assignedClientId = username;
        }
        // The client id is the username, or the username and a suffix (`d_…-sub`), as AWS IoT
        // and EMQX allow: one device may hold several sessions (a subscriber and a publisher),
        // and no device can take over another's session.
        if (!clientIdOf(username, c.id)) return done(refusal(IDENTIFIER_REJECTED), false);
        c.device = r.device;
        this.admit(c, r.device, done);
      },
      (err) => {
        this.log.error({ err }, 'mqtt: login check failed');
        done(refusal(SERVER_UNAVAILABLE), false);
      },
    );
  };

  /**
   * The login succeeded: the customer's connection cap is the last check (server unavailable
   * past it: the device retries later, as it would against a full Mosquitto).
   */
  private admit(c: DeviceClient, device: IotDevicesTable, done: LoginDone) {
    this.policy.limitFor(MQTT_LIMITS.connections, device.customer_id).then(
      (max) => {
        if (c.closed) return done(refusal(SERVER_UNAVAILABLE), false);
        if (!this.policy.takeConnection(device.customer_id, c.id, max, c.conn as unknown as Socket)) {
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
