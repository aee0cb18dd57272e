import type { Client, PublishPacket } from 'aedes';
import type { Logger } from 'pino';
import type { IotDevicesTable } from '../migrations.js';
import { type IotService, topicRootOf } from '../service.js';
import { parseTelemetry } from '../telemetry.js';
import { type BrokerPolicy, MQTT_LIMITS } from './broker-policy.js';
import type { BrokerPersistence } from './broker-state.js';
import type { DeviceClient } from './device-login.js';
import { ownerOf } from './store-persistence.js';

type Done = (err?: Error | null) => void;

/** A device row with its topic tree and the two topics Fjord reads, made once per row. */
interface DeviceTopics {
  device: IotDevicesTable;
  root: string;
  /** `root/`: what every topic the device publishes starts with. */
  inside: string;
  telemetry: string;
  attributes: string;
}

// By device row: a connection keeps its row, so a busy device's publishes make no strings here.
const topicsByDevice = new WeakMap<IotDevicesTable, DeviceTopics>();

function topicsOf(device: IotDevicesTable): DeviceTopics {
  let topics = topicsByDevice.get(device);
  if (topics === undefined) {
    const root = topicRootOf(device.mqtt_username);
    topics = {
      device,
      root,
      inside: `${root}/`,
      telemetry: `${root}/telemetry`,
      attributes: `${root}/attributes`,
    };
    topicsByDevice.set(device, topics);
  }
  return topics;
}
type Refusable = DeviceClient & { maximumPacketSize?: number };
type Incoming = {
  topic: string;
  payload: Buffer | string;
  qos: number;
  retain?: boolean;
  messageId?: number;
};

/**
 * What a device may publish, and what is stored before it is acknowledged. A refusal (outside
 * the device's tree, a plan limit) ends a 3.1.1 connection, which has no way to refuse one
 * publish; aedes answers an MQTT 5 client PUBACK/PUBREC 0x87 with the reason as Reason String
 * and keeps it connected. A store failure ends the connection whatever the version, so the
 * device sends the message again rather than taking an error as final.
 */
export class PublishGate {
  /** Malformed telemetry messages since start, for the log and the stats endpoint. */
  malformed = 0;

  constructor(
    private readonly iot: IotService,
    private readonly policy: BrokerPolicy,
    private readonly log: Logger,
    private readonly persistence: () => BrokerPersistence | null,
  ) {}

  // Telemetry is stored here, not in `published`: aedes sends a QoS 1 PUBACK right after this
  // check passes, so a message is acknowledged only once it is committed.
  readonly authorizePublish = (client: Client | null, packet: PublishPacket, done: Done) => {
    dropWillDelay(packet);
    const c = client as Refusable | null;
    // A will of a client that died with an earlier broker (kill -9): its device is checked anew.
    if (!c) return void this.authorizeOrphanWill(packet, done);
    const device = c.revoked ? undefined : c.device;
    const topics = device ? topicsOf(device) : null;
    if (!device || !topics || !packet.topic.startsWith(topics.inside)) {
      this.log.warn({ client: c.id, topic: packet.topic }, 'mqtt: publish outside the device tree refused');
      return done(refusal(c, 'topic outside the device’s topic tree'));
    }
    const failed = failureEndsConnection(c, done);
    if (packet.retain && packet.payload.length > 0) {
      void this.retainedFits(device, packet.topic).then((fits) => {
        if (fits) return this.authorizeStored(c, topics, packet, done, failed);
        this.log.warn(
          { device: device.device_id, topic: packet.topic },
          'mqtt: retained message limit reached',
        );
        done(refusal(c, 'retained message limit reached'));
      }, failed);
      return;
    }
    this.authorizeStored(c, topics, packet, done, failed);
  };

  /**
   * A QoS 2 message sent again (DUP) before its PUBREL is already held by the session: aedes
   * answers it with PUBREC again and publishes nothing, so it is not stored twice either.
   */
  private authorizeStored(
    client: DeviceClient | null,
    topics: DeviceTopics,
    packet: Incoming,
    done: Done,
    failed: Done,
  ): void {
    const kept = this.persistence();
    if (client && packet.qos === 2 && packet.messageId !== undefined && kept) {
      kept.incomingGetPacket(client, packet as never).then(
        () => done(null),
        () => this.store(topics, packet, done, failed),
      );
      return;
    }
    this.store(topics, packet, done, failed);
  }

  private store(topics: DeviceTopics, packet: Incoming, done: Done, failed: Done): void {
    // aedes acknowledges QoS 1 before it stores a retained message: stored here first, a PUBACK
    // means it survives a kill -9 (aedes's own write after it is the same row again).
    const kept = this.persistence();
    if (packet.retain && kept) {
      kept.storeRetained(packet as never).then(() => this.storeData(topics, packet, done, failed), failed);
      return;
    }
    this.storeData(topics, packet, done, failed);
  }

  private storeData(topics: DeviceTopics, packet: Incoming, done: Done, failed: Done): void {
    const { device } = topics;
    if (packet.topic === topics.attributes) {
      this.iot.reportAttributes(device, packet.payload as Buffer).then((ok) => {
        if (!ok) this.malformed++;
        done(null);
      }, failed);
      return;
    }
    if (packet.topic !== topics.telemetry) return void done(null);
    const points = parseTelemetry(packet.payload as Buffer, this.iot.now());
    if (!points) {
      this.malformed++;
      this.log.warn({ device: device.device_id }, 'mqtt: malformed telemetry dropped');
      return void done(null);
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
        failed(err as Error);
      },
    );
  }

  /** Whether one more retained message fits under the device's plan (replacing one always does). */
  private async retainedFits(device: IotDevicesTable, topic: string): Promise<boolean> {
    const kept = this.persistence();
    if (!kept || (await kept.hasRetained(topic))) return true;
    const max = await this.policy.limitFor(MQTT_LIMITS.retainedPerDevice, device.customer_id);
    return max === null || (await kept.retainedCount(ownerOf(topic))) < max;
  }

  /**
   * A will left by a client whose broker died (a kill -9): published only while its device is
   * still active and the will lies in its topic tree. A will that may not be published is
   * deleted here, so it is not offered again at every sweep.
   */
  private authorizeOrphanWill(packet: Incoming & { clientId?: string }, done: Done): void {
    const username = packet.clientId ?? '';
    this.iot.repo.byUsername(username).then(
      async (device) => {
        const active =
          device && device.is_active === 1 && (await this.iot.activeCustomer(device.customer_id));
        const topics = device ? topicsOf(device) : null;
        if (!device || !active || !topics || !packet.topic.startsWith(topics.inside)) {
          await this.persistence()?.delWill({ id: username });
          return done(new Error('will of a removed or inactive device dropped'));
        }
        this.store(topics, packet, done, done);
      },
      (err) => done(err as Error),
    );
  }
}

/**
 * The answer to a failure of the store (not a refusal): an MQTT 5 client's connection is closed
 * before aedes could answer 0x87, so the message stays unacknowledged and is sent again.
 */
function failureEndsConnection(client: DeviceClient, done: Done): Done {
  return (err) => {
    if (client.version === 5) client.close();
    done(err ?? new Error('not stored'));
  };
}

/**
 * aedes publishes a will through this check with the CONNECT's will properties as they came. The
 * Will Delay Interval is the broker's to honour (aedes has read it by now), not a PUBLISH property
 * (MQTT 5, 3.3.2.3), and a subscriber's client may refuse a PUBLISH that carries it (Paho's does).
 */
function dropWillDelay(packet: PublishPacket) {
  const props = packet.properties as { willDelayInterval?: number } | undefined;
  if (props?.willDelayInterval !== undefined) delete props.willDelayInterval;
}

/**
 * A refused publish's error, whose message aedes sends an MQTT 5 client as the PUBACK's or
 * PUBREC's Reason String (none when the client set Request Problem Information 0). Left empty
 * (no Reason String) when the acknowledgement would then exceed the Maximum Packet Size the client
 * gave in its CONNECT (MQTT-3.4.2-2, MQTT-3.5.2-2).
 */
export function refusal(client: { maximumPacketSize?: number }, reason: string): Error {
  const max = client.maximumPacketSize;
  return new Error(max !== undefined && ackWithReasonBytes(reason) > max ? '' : reason);
}

/** Bytes of a PUBACK or PUBREC with a reason code and a Reason String as its only property. */
export function ackWithReasonBytes(reason: string): number {
  const properties = 1 + 2 + Buffer.byteLength(reason, 'utf8');
  const remaining = 2 + 1 + varintBytes(properties) + properties;
  return 1 + varintBytes(remaining) + remaining;
}

function varintBytes(n: number): number {
  return n < 128 ? 1 : n < 16_384 ? 2 : n < 2_097_152 ? 3 : 4;
}
