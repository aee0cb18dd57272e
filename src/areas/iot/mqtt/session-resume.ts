import { Transform } from 'node:stream';
import type { AnyPacket } from './packet-codec.js';

type Deliver = (packet: AnyPacket, cb: () => void) => void;

/** What aedes's client offers that a hold needs. */
export interface ResumingClient {
  deliverQoS: Deliver;
  deliver0: Deliver;
  once(event: 'connected', listener: () => void): unknown;
}

interface Hold {
  /** Live deliveries that came while the queue was being sent, in their order. */
  held: (() => void)[];
  /** The messages the queue itself sent (broker id and counter), so none goes out twice. */
  fromQueue: Set<string>;
}

interface StreamingPersistence {
  outgoingStream(client: object): NodeJS.ReadableStream;
}

const keyOf = (p: AnyPacket) => `${p.brokerId ?? ''}:${p.brokerCounter ?? 0}`;

/**
 * Keeps a resuming persistent session's messages in the order they were published
 * (MQTT-4.6.0-5: every topic is an ordered topic). aedes restores the session's subscriptions
 * before it sends the queue held for it, so a message published just after the CONNACK went
 * out live ahead of messages queued earlier — on PostgreSQL, where reading the queue takes
 * round trips, it did. From the CONNECT of a session that does not start clean until its
 * queue is sent, live deliveries wait; then they go out, less those the queue already sent.
 *
 * A waiting delivery is acknowledged to the publisher at once: a QoS 1/2 message is already in
 * the session's queue (aedes queues before it delivers), and a QoS 0 one may be lost anyway.
 */
export class SessionResume {
  private readonly holds = new WeakMap<object, Hold>();

  /** Wraps the persistence's queue stream to note what the queue sends while a hold is on. */
  wrap<P extends StreamingPersistence>(persistence: P): P {
    const stream = persistence.outgoingStream.bind(persistence);
    persistence.outgoingStream = (client) => {
      const source = stream(client);
      const hold = this.holds.get(client);
      if (!hold) return source;
      const noted = new Transform({
        objectMode: true,
        transform(packet: AnyPacket, _enc, done) {
          hold.fromQueue.add(keyOf(packet));
          done(null, packet);
        },
      });
      source.on('error', (err) => noted.destroy(err));
      return source.pipe(noted);
    };
    return persistence;
  }

  /** Called at CONNECT: a session that keeps its state holds live deliveries until it is ready. */
  begin(client: ResumingClient, cleanStart: boolean): void {
    if (cleanStart) return;
    const hold: Hold = { held: [], fromQueue: new Set() };
    this.holds.set(client, hold);
    // aedes takes these functions when it restores a subscription, so they stay wrappers for the
    // connection's life, passing straight through once the hold is over.
    const wrapped = (deliver: Deliver): Deliver => {
      return (packet, cb) => {
        if (this.holds.get(client) !== hold) return deliver(packet, cb);
        hold.held.push(() => {
          if (!hold.fromQueue.has(keyOf(packet))) deliver(packet, noop);
        });
        setImmediate(cb);
      };
    };
    client.deliverQoS = wrapped(client.deliverQoS);
    client.deliver0 = wrapped(client.deliver0);
    // 'connected' comes once the queue has been sent; a CONNECT that fails never gets there,
    // and its held QoS 1/2 messages stay queued for the next connection.
    client.once('connected', () => {
      this.holds.delete(client);
      for (const send of hold.held) send();
    });
  }
}

function noop(): void {}
