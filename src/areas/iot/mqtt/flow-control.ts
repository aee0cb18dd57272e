import type { EventEmitter } from 'node:events';
import mqttPacket from 'mqtt-packet';

/** DISCONNECT reason code of a client that sent more than the broker's Receive Maximum. */
const RECEIVE_MAXIMUM_EXCEEDED = 0x93;
/** A PUBREC at or above this ends a QoS 2 exchange (MQTT 5, 4.3.3). */
const FAILURE = 0x80;
/** The Receive Maximum of a client that sends none (MQTT 5, 3.1.2.11.3). */
const UNLIMITED = 65_535;

export type Packet = { cmd: string; qos?: number; messageId?: number; reasonCode?: number };
export type WriteOptions = Parameters<typeof mqttPacket.writeToStream>[2];
export type Write = (packet: Packet, stream: NodeJS.WritableStream, opts?: WriteOptions) => boolean;

/** The parts of aedes's client this needs: its connection, its parser, and a server DISCONNECT. */
export interface FlowClient {
  conn: NodeJS.WritableStream & { client?: unknown };
  _parser: EventEmitter;
  closed: boolean;
  /** false for a session kept past the connection: its queued messages are in the store. */
  clean?: boolean;
  broker: { persistence: { outgoingClearMessageId(client: FlowClient, packet: Packet): Promise<unknown> } };
  disconnect(opts: { reasonCode: number }, done?: () => void): void;
  flow?: FlowControl;
}

/**
 * MQTT 5 flow control (section 4.9), both ways, for one connection:
 *
 * - the broker's Receive Maximum (advertised in the CONNACK): a client with more QoS 1 and 2
 *   PUBLISHes in flight than that (no PUBACK or PUBCOMP sent for them yet) gets DISCONNECT
 *   0x93 Receive Maximum exceeded;
 * - the client's Receive Maximum (from its CONNECT): the broker has at most that many QoS 1 and
 *   2 PUBLISHes unacknowledged towards it (MQTT-3.3.4-7); the next ones wait, in order, until a
 *   PUBACK, PUBCOMP or failing PUBREC frees a place. QoS 0 messages are not held (MQTT-3.3.4-8
 *   lets them through);
 * - the client's Maximum Packet Size (from its CONNECT): a PUBLISH larger than that is not sent,
 *   and counts as delivered (MQTT-3.1.2-24, MQTT-3.1.2-25).
 *
 * aedes writes every packet through mqtt-packet's writeToStream, whichever path it comes from
 * (live delivery, a resumed session's queue, retained messages, acknowledgements), so this sits
 * there (outgoing-gate.ts) and sees each packet as it goes out, with its packet id.
 */
export class FlowControl {
  /** Packet ids of QoS 1/2 PUBLISHes from the client not yet answered with PUBACK or PUBCOMP. */
  private readonly inbound = new Set<number>();
  /** Packet ids of QoS 1/2 PUBLISHes sent to the client and not yet acknowledged. */
  private readonly outbound = new Set<number>();
  /** PUBLISHes waiting for a place in the client's window. */
  private readonly held: { packet: Packet; opts?: WriteOptions }[] = [];
  private exceeded = false;

  private constructor(
    private readonly client: FlowClient,
    private readonly serverMaximum: number,
    private readonly clientMaximum: number,
    private readonly clientPacketBytes: number | undefined,
  ) {
    // Before aedes's own listener: the count is of packets as they arrive, in order.
    client._parser.prependListener('packet', (p: Packet) => this.arrived(p));
  }

  /**
   * Watches an MQTT 5 connection from its CONNECT on: `serverMaximum` is the broker's Receive
   * Maximum (0: none enforced), the client's comes from the CONNECT.
   */
  static attach(
    client: FlowClient,
    connect: {
      protocolVersion?: number;
      properties?: { receiveMaximum?: number; maximumPacketSize?: number };
    },
    serverMaximum: number,
  ): void {
    if (connect.protocolVersion !== 5) return;
    const clientMaximum = connect.properties?.receiveMaximum ?? UNLIMITED;
    const packetBytes = connect.properties?.maximumPacketSize;
    client.flow = new FlowControl(
      client,
      serverMaximum || UNLIMITED,
      clientMaximum || UNLIMITED,
      packetBytes,
    );
  }

  private arrived(p: Packet): void {
    switch (p.cmd) {
      case 'publish':
        if (!p.qos || p.messageId === undefined || this.inbound.has(p.messageId)) return;
        this.inbound.add(p.messageId);
        if (this.inbound.size > this.serverMaximum && !this.exceeded) {
          this.exceeded = true;
          this.client.disconnect({ reasonCode: RECEIVE_MAXIMUM_EXCEEDED });
        }
        return;
      case 'puback':
      case 'pubcomp':
        this.acknowledged(p.messageId);
        return;
      case 'pubrec':
        if ((p.reasonCode ?? 0) >= FAILURE) this.acknowledged(p.messageId);
        return;
    }
  }

  /** An outgoing packet: sent now (answering true, as a stream write does), or held for later. */
  send(packet: Packet, stream: NodeJS.WritableStream, opts: WriteOptions | undefined, write: Write): boolean {
    switch (packet.cmd) {
      case 'puback':
      case 'pubcomp':
        if (packet.messageId !== undefined) this.inbound.delete(packet.messageId);
        break;
      case 'pubrec':
        if ((packet.reasonCode ?? 0) >= FAILURE && packet.messageId !== undefined)
          this.inbound.delete(packet.messageId);
        break;
      case 'publish': {
        if (this.tooLarge(packet, opts)) {
          // Dropped as if delivered: a kept session's copy is let go too.
          if (packet.qos && this.client.clean === false)
            this.client.broker.persistence.outgoingClearMessageId(this.client, packet).catch(() => {});
          return true;
        }
        const id = packet.messageId;
        if (!packet.qos || id === undefined || this.outbound.has(id)) break;
        if (this.outbound.size >= this.clientMaximum) {
          this.held.push({ packet, opts });
          return true;
        }
        this.outbound.add(id);
        break;
      }
    }
    return write(packet, stream, opts);
  }

  private tooLarge(packet: Packet, opts: WriteOptions | undefined): boolean {
    const max = this.clientPacketBytes;
    return max !== undefined && mqttPacket.generate(packet as never, opts).length > max;
  }

  /** A place in the client's window came free: the oldest held PUBLISH takes it. */
  private acknowledged(id: number | undefined): void {
    if (id === undefined || !this.outbound.delete(id)) return;
    const next = this.held.shift();
    if (!next || this.client.closed) return;
    mqttPacket.writeToStream(next.packet as never, this.client.conn, next.opts);
  }
}
