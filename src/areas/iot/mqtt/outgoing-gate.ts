import mqttPacket from 'mqtt-packet';
import type { FlowControl, Packet, Write, WriteOptions } from './flow-control.js';

/** What a connection adds to see its outgoing packets: a rewrite, then flow control. */
export interface GatedClient {
  /** Adjusts a packet before it is written (shared subscriptions' SUBACK codes, the CONNACK). */
  rewrite?: (packet: Packet) => void;
  flow?: FlowControl;
}

let installed = false;

/**
 * Routes mqtt-packet's writeToStream, through which aedes writes every packet, by way of the
 * connection it writes to (aedes sets `conn.client`): its rewrite, then its flow control. Other
 * streams (MQTT.js clients in the same process) and connections with neither pass as before.
 */
export function installOutgoingGate(): void {
  if (installed) return;
  installed = true;
  const write = mqttPacket.writeToStream.bind(mqttPacket) as unknown as Write;
  (mqttPacket as { writeToStream: unknown }).writeToStream = (
    packet: Packet,
    stream: NodeJS.WritableStream & { client?: GatedClient },
    opts?: WriteOptions,
  ) => {
    const client = stream.client;
    if (!client) return write(packet, stream, opts);
    client.rewrite?.(packet);
    return client.flow ? client.flow.send(packet, stream, opts, write) : write(packet, stream, opts);
  };
}
