import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { AnyPacket } from './packet-codec.js';
import { SessionResume } from './session-resume.js';

const message = (payload: string, counter: number) =>
  ({
    cmd: 'publish',
    topic: 't',
    payload,
    qos: 1,
    brokerId: 'b',
    brokerCounter: counter,
  }) as unknown as AnyPacket;

/** A client as aedes builds one: deliveries write straight to the wire (here: a list). */
function fakeClient() {
  const wire: string[] = [];
  const client = Object.assign(new EventEmitter(), {
    deliverQoS: (p: AnyPacket, cb: () => void) => {
      wire.push(String(p.payload));
      cb();
    },
    deliver0: (p: AnyPacket, cb: () => void) => {
      wire.push(String(p.payload));
      cb();
    },
  });
  return { client, wire };
}

/** What aedes's emptyQueue does: read the queue through the persistence and write each message. */
async function sendQueue(stream: NodeJS.ReadableStream, wire: string[]) {
  for await (const p of stream as AsyncIterable<AnyPacket>) wire.push(String(p.payload));
}

describe('a resuming session', () => {
  it('sends what its queue held before a message published after the CONNACK', async () => {
    const resume = new SessionResume();
    const persistence = resume.wrap({
      outgoingStream: (_client: object) => Readable.from([message('fresh', 1)]),
    });
    const { client, wire } = fakeClient();
    resume.begin(client, false);
    // The subscription is restored and a live message arrives before the queue is read.
    const acked = new Promise<void>((r) => client.deliverQoS(message('marker', 2), r));
    await acked; // the publisher is not kept waiting on the queue
    expect(wire).toEqual([]);
    await sendQueue(persistence.outgoingStream(client), wire);
    client.emit('connected');
    expect(wire).toEqual(['fresh', 'marker']);
    // Once resumed, deliveries pass straight through.
    client.deliver0(message('later', 3), () => {});
    expect(wire).toEqual(['fresh', 'marker', 'later']);
  });

  it('sends a message once when both the queue and the live path carry it', async () => {
    const resume = new SessionResume();
    const both = message('both', 7);
    const persistence = resume.wrap({
      outgoingStream: (_client: object) => Readable.from([message('fresh', 6), both]),
    });
    const { client, wire } = fakeClient();
    resume.begin(client, false);
    client.deliverQoS(both, () => {});
    await sendQueue(persistence.outgoingStream(client), wire);
    client.emit('connected');
    expect(wire).toEqual(['fresh', 'both']);
  });

  it('holds nothing for a session that starts clean', () => {
    const resume = new SessionResume();
    const { client, wire } = fakeClient();
    resume.begin(client, true);
    client.deliverQoS(message('live', 1), () => {});
    expect(wire).toEqual(['live']);
  });
});
