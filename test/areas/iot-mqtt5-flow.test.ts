import type { Packet } from 'mqtt-packet';
import { describe, expect, it } from 'vitest';
import type { DeviceCreds } from '../helpers/iot.js';
import { useBroker } from '../helpers/mqtt-fixture.js';
import { RawMqtt } from '../helpers/mqtt-raw.js';

/**
 * MQTT 5 flow control (Receive Maximum both ways, the client's Maximum Packet Size), Reason
 * Strings only where the client takes them, every matching Subscription Identifier, and shared
 * subscriptions, with raw v5 packets and MQTT.js 5.
 */
const f = useBroker({ FJORD_LIMITS: JSON.stringify({ 'iot.devices': 30 }) });

type Any = Packet & Record<string, unknown>;

async function raw(d: DeviceCreds, suffix = '', properties?: Record<string, unknown>) {
  const clientId = suffix ? `${d.username}-${suffix}` : d.client_id;
  const r = await RawMqtt.open(
    d.port,
    { username: d.username, password: d.password, clientId, properties },
    5,
  );
  f.raws.push(r);
  return r;
}

const publish = (topic: string, qos: number, messageId: number, payload = Buffer.from('x')) => ({
  cmd: 'publish',
  topic,
  payload,
  qos,
  messageId: qos ? messageId : undefined,
  retain: false,
  dup: false,
});

/** Subscribes and waits for its SUBACK; answers the granted codes. */
async function subscribe(r: RawMqtt, messageId: number, subscriptions: object[], properties?: object) {
  const suback = r.next((p) => p.cmd === 'suback' && (p as Any).messageId === messageId);
  r.send({ cmd: 'subscribe', messageId, subscriptions, ...(properties ? { properties } : {}) });
  return ((await suback) as Any).granted as number[];
}

const publishes = (r: RawMqtt, topic: string) =>
  r.received.filter((p) => p.cmd === 'publish' && (p as Any).topic === topic) as Any[];

describe('MQTT 5 Receive Maximum', () => {
  it('advertises the broker’s, and ends a client past it with DISCONNECT 0x93', async () => {
    const d = await f.device('flow-in');
    const r = await raw(d);
    const connack = r.received.find((p) => p.cmd === 'connack') as Any;
    expect((connack.properties as Any).receiveMaximum).toBe(100);
    const topic = `${d.topic_root}/flow`;
    // 100 QoS 2 messages without PUBREL are all in flight: allowed.
    const recs = Array.from({ length: 100 }, (_, i) =>
      r.next((p) => p.cmd === 'pubrec' && (p as Any).messageId === i + 1),
    );
    for (let i = 1; i <= 100; i++) r.send(publish(topic, 2, i));
    await Promise.all(recs);
    expect(r.received.some((p) => p.cmd === 'disconnect')).toBe(false);
    // A PUBREL (and the PUBCOMP) frees one place: the 101st fits, the 102nd does not.
    const comp = r.next((p) => p.cmd === 'pubcomp');
    r.send({ cmd: 'pubrel', messageId: 1 });
    await comp;
    const rec = r.next((p) => p.cmd === 'pubrec' && (p as Any).messageId === 101);
    r.send(publish(topic, 2, 101));
    await rec;
    const disconnect = r.next((p) => p.cmd === 'disconnect');
    r.send(publish(topic, 2, 102));
    expect(((await disconnect) as Any).reasonCode).toBe(0x93);
    await r.closed();
  });

  it('holds QoS 1 deliveries past the client’s Receive Maximum until it acknowledges one', async () => {
    const d = await f.device('flow-out');
    const topic = `${d.topic_root}/out`;
    const sub = await raw(d, 'sub', { receiveMaximum: 2 });
    expect(await subscribe(sub, 1, [{ topic, qos: 1 }])).toEqual([1]);
    const pub = await raw(d, 'pub');
    // Three QoS 1 messages: two go out. Once all three are acknowledged to the publisher (so
    // routed), a QoS 0 one, which is never held, comes after the two and before the third.
    const acks = [1, 2, 3].map((id) => pub.next((p) => p.cmd === 'puback' && (p as Any).messageId === id));
    for (let i = 1; i <= 3; i++) pub.send(publish(topic, 1, i, Buffer.from(`m${i}`)));
    await Promise.all(acks);
    const sentinel = sub.next((p) => p.cmd === 'publish' && (p as Any).qos === 0);
    pub.send(publish(topic, 0, 0, Buffer.from('q0')));
    await sentinel;
    const held = publishes(sub, topic).filter((p) => p.qos === 1);
    expect(held.map((p) => String(p.payload))).toEqual(['m1', 'm2']);
    // Acknowledging the first lets the third out.
    const third = sub.next((p) => p.cmd === 'publish' && String((p as Any).payload) === 'm3');
    sub.send({ cmd: 'puback', messageId: held[0]!.messageId });
    await third;
  });

  it('does not send a message larger than the client’s Maximum Packet Size', async () => {
    const d = await f.device('flow-size');
    const topic = `${d.topic_root}/size`;
    const sub = await raw(d, 'sub', { maximumPacketSize: 128 });
    expect(await subscribe(sub, 1, [{ topic, qos: 1 }])).toEqual([1]);
    const pub = await raw(d, 'pub');
    const last = sub.next((p) => p.cmd === 'publish' && String((p as Any).payload) === 'last');
    pub.send(publish(topic, 1, 1, Buffer.from('small')));
    pub.send(publish(topic, 1, 2, Buffer.alloc(200, 'x')));
    pub.send(publish(topic, 1, 3, Buffer.from('last')));
    await last;
    expect(publishes(sub, topic).map((p) => String(p.payload))).toEqual(['small', 'last']);
  });
});

describe('MQTT 5 acknowledgements and identifiers', () => {
  it('sends a refusal’s Reason String only to a client that takes it, and only when it fits', async () => {
    const d = await f.device('reason');
    const other = await f.device('reason-other');
    const outside = `${other.topic_root}/x`;
    const refusal = async (r: RawMqtt) => {
      const ack = r.next((p) => p.cmd === 'puback');
      r.send(publish(outside, 1, 7));
      return (await ack) as Any;
    };
    const plain = await refusal(await raw(d, 'a'));
    expect(plain.reasonCode).toBe(0x87);
    expect((plain.properties as Any).reasonString).toMatch(/topic tree/);
    const quiet = await refusal(await raw(d, 'b', { requestProblemInformation: false }));
    expect(quiet.reasonCode).toBe(0x87);
    expect(quiet.properties).toBeUndefined();
    const small = await refusal(await raw(d, 'c', { maximumPacketSize: 16 }));
    expect(small.reasonCode).toBe(0x87);
    expect(small.properties).toBeUndefined();
  });

  it('gives one copy of a message every matching Subscription Identifier', async () => {
    const d = await f.device('subids');
    const topic = `${d.topic_root}/ids`;
    const r = await raw(d);
    await subscribe(r, 1, [{ topic, qos: 1 }], { subscriptionIdentifier: 2 });
    await subscribe(r, 2, [{ topic: `${d.topic_root}/#`, qos: 1 }], { subscriptionIdentifier: 3 });
    const got = r.next((p) => p.cmd === 'publish' && (p as Any).topic === topic);
    r.send(publish(topic, 0, 0));
    const ids = ((await got) as Any).properties as Any;
    expect([ids.subscriptionIdentifier].flat().sort()).toEqual([2, 3]);
  });
});

describe('MQTT 5 shared subscriptions', () => {
  it('gives each message to one member of the group in turn, under the device’s topic rules', async () => {
    const d = await f.device('shared');
    const other = await f.device('shared-other');
    const topic = `${d.topic_root}/work`;
    const a = await raw(d, 'a');
    const b = await raw(d, 'b');
    const connack = a.received.find((p) => p.cmd === 'connack') as Any;
    expect((connack.properties as Any | undefined)?.sharedSubscriptionAvailable).not.toBe(false);
    // Mixed with a plain filter, and one outside the device's tree: codes in their places.
    expect(
      await subscribe(a, 1, [
        { topic: `$share/g/${topic}`, qos: 1 },
        { topic: `${d.topic_root}/plain`, qos: 0 },
        { topic: `$share/g/${other.topic_root}/#`, qos: 1 },
      ]),
    ).toEqual([1, 0, 0x87]);
    expect(await subscribe(b, 1, [{ topic: `$share/g/${topic}`, qos: 1 }])).toEqual([1]);
    const pub = await raw(d, 'pub');
    const acks = Array.from({ length: 4 }, (_, i) =>
      pub.next((p) => p.cmd === 'puback' && (p as Any).messageId === i + 1),
    );
    const all = new Promise<void>((resolve) => {
      const check = () =>
        publishes(a, topic).length + publishes(b, topic).length >= 4 ? resolve() : setTimeout(check, 20);
      check();
    });
    for (let i = 1; i <= 4; i++) pub.send(publish(topic, 1, i, Buffer.from(`m${i}`)));
    await Promise.all(acks);
    await all;
    expect(publishes(a, topic).length).toBe(2);
    expect(publishes(b, topic).length).toBe(2);
    for (const r of [a, b])
      for (const p of publishes(r, topic)) r.send({ cmd: 'puback', messageId: p.messageId });
    // Leaving the group: its UNSUBACK says success, and the rest goes to b alone.
    const unsuback = a.next((p) => p.cmd === 'unsuback');
    a.send({ cmd: 'unsubscribe', messageId: 2, unsubscriptions: [`$share/g/${topic}`] });
    expect(((await unsuback) as Any).granted).toEqual([0]);
    const toB = b.next((p) => p.cmd === 'publish' && String((p as Any).payload) === 'm5');
    pub.send(publish(topic, 0, 0, Buffer.from('m5')));
    await toB;
    expect(publishes(a, topic).length).toBe(2);
  });
});

describe('MQTT 5 session resumption', () => {
  it('resumes a kept session with Clean Start 0 and expiry 0, queued messages included, and ends it at disconnect', async () => {
    const d = await f.device('resume');
    const topic = `${d.topic_root}/inbox`;
    const first = await raw(d, '', { sessionExpiryInterval: 600 });
    expect(await subscribe(first, 1, [{ topic, qos: 1 }])).toEqual([1]);
    first.send({ cmd: 'disconnect', reasonCode: 0 });
    await first.closed();
    const pub = await raw(d, 'pub');
    const acked = pub.next((p) => p.cmd === 'puback');
    pub.send(publish(topic, 1, 1, Buffer.from('queued')));
    await acked;
    const login = { username: d.username, password: d.password, clientId: d.client_id, clean: false };
    const back = await RawMqtt.open(d.port, login, 5);
    f.raws.push(back);
    const queued = back.next((p) => p.cmd === 'publish' && (p as Any).topic === topic);
    expect((back.received.find((p) => p.cmd === 'connack') as Any).sessionPresent).toBe(true);
    expect(String(((await queued) as Any).payload)).toBe('queued');
    back.send({ cmd: 'puback', messageId: (await queued).messageId });
    back.send({ cmd: 'disconnect', reasonCode: 0 });
    await back.closed();
    const gone = await RawMqtt.open(d.port, login, 5);
    f.raws.push(gone);
    expect((gone.received.find((p) => p.cmd === 'connack') as Any).sessionPresent).toBe(false);
  });
});
