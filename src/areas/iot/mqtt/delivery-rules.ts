import { Transform } from 'node:stream';
import type { AnyPacket } from './packet-codec.js';
import { topicMatches } from './topic-match.js';

/**
 * The QoS a message is delivered at: at most the highest QoS granted by the client's
 * subscriptions that match its topic (MQTT-3.8.4-6, MQTT-3.3.5-1). aedes downgrades only when
 * the subscription's filter is the topic itself, so a QoS 2 publish reached a `…/#` subscription
 * granted QoS 1 at QoS 2; this looks at every matching filter. Null when none matches.
 */
export function grantedQos(subscriptions: Record<string, { qos: number }>, topic: string): number | null {
  let granted: number | null = null;
  for (const [filter, sub] of Object.entries(subscriptions))
    if (topicMatches(filter, topic) && (granted === null || sub.qos > granted)) granted = sub.qos;
  return granted;
}

/**
 * The Subscription Identifiers of every subscription of the client that matches `topic`
 * (MQTT-3.3.4-3, MQTT-3.3.4-4): one copy of a message reaching a client through overlapping
 * subscriptions carries all of them. aedes puts only the one subscription's it delivers through.
 */
export function subscriptionIdentifiers(
  subscriptions: Record<string, { si?: number }>,
  topic: string,
): number[] {
  const ids: number[] = [];
  for (const [filter, sub] of Object.entries(subscriptions))
    if (sub.si !== undefined && topicMatches(filter, topic) && !ids.includes(sub.si)) ids.push(sub.si);
  return ids;
}

interface RedeliveringPersistence {
  outgoingStream(client: { id: string }): NodeJS.ReadableStream;
}

/**
 * Marks queued messages that were sent before (they hold the packet id they were sent under)
 * DUP=1 when a persistent session resumes and they go out again (MQTT-3.3.1-1). The persistence
 * itself answers them as stored, as aedes-persistence's contract says; aedes resends them as
 * they come, so the mark is added on the way.
 */
export function markRedeliveries<P extends RedeliveringPersistence>(persistence: P): P {
  const stream = persistence.outgoingStream.bind(persistence);
  persistence.outgoingStream = (client) => {
    const source = stream(client);
    const marked = new Transform({
      objectMode: true,
      transform(packet: AnyPacket, _enc, done) {
        if (packet.cmd === 'publish' && packet.messageId) packet.dup = true;
        done(null, packet);
      },
    });
    source.on('error', (err) => marked.destroy(err));
    return source.pipe(marked);
  };
  return persistence;
}
