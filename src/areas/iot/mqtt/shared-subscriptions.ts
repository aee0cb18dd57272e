import type { EventEmitter } from 'node:events';
import type { Packet } from './flow-control.js';
import type { GatedClient } from './outgoing-gate.js';

const SHARE_PREFIX = '$share/';
/** SUBACK codes: 3.1.1's only failure, and MQTT 5's more exact ones. */
const FAILURE = 0x80;
const NOT_AUTHORIZED = 0x87;
const TOPIC_FILTER_INVALID = 0x8f;
/** DISCONNECT 0x82: No Local on a shared subscription (MQTT-3.8.3-4). */
const PROTOCOL_ERROR = 0x82;

type Message = {
  topic: string;
  payload: Buffer;
  qos: number;
  retain: boolean;
  properties?: Record<string, unknown>;
  messageExpiry?: number;
};
type Deliver = (packet: Message, cb: () => void) => void;

/** The parts of aedes's client and broker this needs. */
export interface SharingClient extends GatedClient {
  id: string;
  version?: number | null;
  closed: boolean;
  _parser: EventEmitter;
  publish(message: Message, done: () => void): void;
  disconnect(opts: { reasonCode: number }, done?: () => void): void;
}
export interface SharingBroker {
  subscribe(topic: string, func: Deliver, done: () => void): void;
  unsubscribe(topic: string, func: Deliver, done: () => void): void;
}

type Wanted = { index: number; group: string; filter: string; qos: number; rap: boolean; si?: number };
type Member = { client: SharingClient; qos: number; rap: boolean; si?: number };
type Group = { filter: string; members: Member[]; next: number; deliver: Deliver };

/** `$share/{group}/{filter}` split, or 'invalid' (MQTT 5, 4.8.2); null for a filter that is not shared. */
export function parseShared(topic: string): { group: string; filter: string } | 'invalid' | null {
  if (!topic.startsWith(SHARE_PREFIX)) return null;
  const rest = topic.slice(SHARE_PREFIX.length);
  const slash = rest.indexOf('/');
  const group = slash < 0 ? rest : rest.slice(0, slash);
  const filter = slash < 0 ? '' : rest.slice(slash + 1);
  if (!group || /[+#]/.test(group) || !filter) return 'invalid';
  return { group, filter };
}

/**
 * Shared subscriptions (MQTT 5, 4.8.2; also taken from 3.1.1 clients, as Mosquitto and EMQX do):
 * each message matching `$share/{group}/{filter}` goes to one of the group's sessions, in turn.
 * The filter is held to the same topic rules as any subscription (`may`). aedes refuses
 * `$share/` itself, so such filters are taken out of a SUBSCRIBE before aedes handles it and
 * subscribed here when its SUBACK goes out, with their codes put back in place; an UNSUBSCRIBE's
 * UNSUBACK is corrected the same way. A group lives in this broker process, for as long as a
 * member's connection: shared subscriptions are not kept with a persistent session.
 */
export class SharedSubscriptions {
  private readonly groups = new Map<string, Group>();

  constructor(
    private readonly broker: SharingBroker,
    /** Whether this client may subscribe to this (plain) filter. */
    private readonly may: (client: SharingClient, filter: string) => boolean,
  ) {}

  /** Watches one connection's SUBSCRIBE and UNSUBSCRIBE packets from its CONNECT on. */
  attach(client: SharingClient): void {
    const subscribing = new Map<number, { wanted: Wanted[]; count: number }>();
    const unsubscribing = new Map<number, Wanted[]>();
    client._parser.prependListener('packet', (p: Record<string, unknown>) => {
      if (p.cmd === 'subscribe') this.taken(client, p, subscribing);
      else if (p.cmd === 'unsubscribe') {
        const wanted = sharedOf(((p.unsubscriptions as string[]) ?? []).map((topic) => ({ topic })));
        if (wanted.length) unsubscribing.set(p.messageId as number, wanted);
      }
    });
    const before = client.rewrite;
    client.rewrite = (packet) => {
      before?.(packet);
      const p = packet as Packet & { granted?: number[]; properties?: Record<string, unknown> };
      if (p.cmd === 'connack' && p.properties?.sharedSubscriptionAvailable === false)
        delete p.properties.sharedSubscriptionAvailable; // available, the default
      const id = p.messageId ?? -1;
      if (p.cmd === 'suback' && subscribing.has(id)) {
        const { wanted, count } = subscribing.get(id)!;
        subscribing.delete(id);
        p.granted = this.subscribed(client, wanted, count, p.granted ?? []);
      } else if (p.cmd === 'unsuback' && unsubscribing.has(id)) {
        const wanted = unsubscribing.get(id)!;
        unsubscribing.delete(id);
        const codes = [...(p.granted ?? [])];
        for (const w of wanted) if (this.leaveOne(client, w)) codes[w.index] = 0;
        p.granted = codes;
      }
    };
  }

  /** A connection ended: it leaves every group. */
  leave(client: SharingClient): void {
    for (const [key, group] of this.groups) {
      group.members = group.members.filter((m) => m.client !== client);
      if (group.members.length === 0) this.drop(key, group);
    }
  }

  /** Takes the shared filters out of a SUBSCRIBE (aedes would refuse them), kept for its SUBACK. */
  private taken(
    client: SharingClient,
    p: Record<string, unknown>,
    pending: Map<number, { wanted: Wanted[]; count: number }>,
  ) {
    type Sub = { topic: string; qos: number; nl?: boolean; rap?: boolean };
    const subs = (p.subscriptions as Sub[]) ?? [];
    const wanted = sharedOf(subs);
    if (!wanted.length) return;
    if (subs.some((s) => s.nl && parseShared(s.topic) !== null)) {
      client.disconnect({ reasonCode: PROTOCOL_ERROR });
      p.subscriptions = [];
      return;
    }
    const si = (p.properties as { subscriptionIdentifier?: number } | undefined)?.subscriptionIdentifier;
    for (const w of wanted) w.si = si;
    pending.set(p.messageId as number, { wanted, count: subs.length });
    p.subscriptions = subs.filter((s) => parseShared(s.topic) === null);
  }

  /** Joins the groups as the SUBACK goes out; answers its codes with the shared ones in place. */
  private subscribed(client: SharingClient, wanted: Wanted[], count: number, plain: number[]): number[] {
    const codes: number[] = [];
    const rest = [...plain];
    const byIndex = new Map(wanted.map((w) => [w.index, w]));
    for (let i = 0; i < count; i++) {
      const w = byIndex.get(i);
      codes.push(w ? this.join(client, w) : (rest.shift() ?? FAILURE));
    }
    return codes;
  }

  private join(client: SharingClient, w: Wanted): number {
    const v5 = client.version === 5;
    if (w.group === '' || w.filter === '') return v5 ? TOPIC_FILTER_INVALID : FAILURE;
    if (!this.may(client, w.filter)) return v5 ? NOT_AUTHORIZED : FAILURE;
    const key = `${w.group}\n${w.filter}`;
    let group = this.groups.get(key);
    if (!group) {
      const created: Group = {
        filter: w.filter,
        members: [],
        next: 0,
        deliver: (m, cb) => this.deliver(created, m, cb),
      };
      group = created;
      this.groups.set(key, group);
      this.broker.subscribe(w.filter, group.deliver, () => {});
    }
    const member = { client, qos: w.qos, rap: w.rap, si: w.si };
    const at = group.members.findIndex((m) => m.client === client);
    if (at >= 0) group.members[at] = member;
    else group.members.push(member);
    return w.qos;
  }

  private leaveOne(client: SharingClient, w: Wanted): boolean {
    const key = `${w.group}\n${w.filter}`;
    const group = this.groups.get(key);
    if (!group?.members.some((m) => m.client === client)) return false;
    group.members = group.members.filter((m) => m.client !== client);
    if (group.members.length === 0) this.drop(key, group);
    return true;
  }

  private drop(key: string, group: Group) {
    this.groups.delete(key);
    this.broker.unsubscribe(group.filter, group.deliver, () => {});
  }

  /** One message to one member, in turn; a wildcard-first filter never matches `$` topics (MQTT-4.7.2-1). */
  private deliver(group: Group, message: Message, cb: () => void) {
    if (message.topic.startsWith('$') && /^[+#]/.test(group.filter)) return cb();
    group.members = group.members.filter((m) => !m.client.closed);
    if (group.members.length === 0) return cb();
    const member = group.members[group.next++ % group.members.length]!;
    // A copy of its own (a new broker counter, so aedes's de-duplication leaves it alone), at
    // most at the member's granted QoS; through client.publish so a kept session queues it.
    const properties =
      member.si !== undefined
        ? { ...message.properties, subscriptionIdentifier: member.si }
        : message.properties;
    member.client.publish(
      {
        topic: message.topic,
        payload: message.payload,
        qos: Math.min(message.qos, member.qos),
        retain: member.rap ? message.retain : false,
        ...(properties ? { properties } : {}),
        ...(message.messageExpiry !== undefined ? { messageExpiry: message.messageExpiry } : {}),
      },
      () => {},
    );
    cb();
  }
}

/** The shared filters of a SUBSCRIBE or UNSUBSCRIBE, with their places in it. */
function sharedOf(subs: { topic: string; qos?: number; rap?: boolean }[]): Wanted[] {
  const wanted: Wanted[] = [];
  subs.forEach((s, index) => {
    const parsed = parseShared(s.topic);
    if (parsed === null) return;
    const { group, filter } = parsed === 'invalid' ? { group: '', filter: '' } : parsed;
    wanted.push({ index, group, filter, qos: s.qos ?? 0, rap: s.rap ?? false });
  });
  return wanted;
}
