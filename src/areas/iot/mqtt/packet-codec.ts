/**
 * Packets as the broker's tables keep them: JSON, with every Buffer (the payload, v5 correlation
 * data) as `{"$b": base64}` so it comes back a Buffer, not `{type, data}`.
 */

// biome-ignore lint/suspicious/noExplicitAny: packets are open records (v3 and v5 fields)
export type AnyPacket = Record<string, any>;

export function encodePacket(packet: AnyPacket): string {
  return JSON.stringify(packet, function (this: AnyPacket, key, value) {
    const original = this[key];
    return Buffer.isBuffer(original) ? { $b: original.toString('base64') } : value;
  });
}

export function decodePacket(text: string): AnyPacket {
  return JSON.parse(text, (_key, value) =>
    value !== null &&
    typeof value === 'object' &&
    typeof value.$b === 'string' &&
    Object.keys(value).length === 1
      ? Buffer.from(value.$b, 'base64')
      : value,
  ) as AnyPacket;
}

/**
 * The copy aedes-persistence makes of a packet it queues (aedes-packet's `Packet`): the fields a
 * delivery needs, and no packet id for QoS > 0 until one is assigned at sending.
 */
export function queuedCopy(original: AnyPacket): AnyPacket {
  const p: AnyPacket = {};
  for (const k of ['clientId', 'nl', 'properties', 'messageExpiry'])
    if (Object.hasOwn(original, k)) p[k] = original[k];
  p.cmd = original.cmd || 'publish';
  p.brokerId = original.brokerId;
  p.brokerCounter = original.brokerCounter || 0;
  p.topic = original.topic;
  p.payload = original.payload || Buffer.alloc(0);
  p.qos = original.qos || 0;
  p.retain = original.retain || false;
  p.dup = original.dup || false;
  if (p.qos > 0 || p.cmd !== 'publish') p.messageId = undefined;
  return p;
}
