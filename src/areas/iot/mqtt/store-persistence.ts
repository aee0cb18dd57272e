import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Store } from '../../../kernel/store/store.js';
import { OutgoingQueue, type PersistenceLimits } from './outgoing-queue.js';
import { type AnyPacket, decodePacket, encodePacket, queuedCopy } from './packet-codec.js';
import { MQTT_SESSION_TABLES, type MqttSessionTables } from './session-tables.js';
import { type MatchedSub, type SubOptions, SubscriptionIndex } from './subscription-index.js';
import { topicMatches } from './topic-match.js';

interface ClientRef {
  id: string;
}
interface BrokerRef {
  id: string;
}

export type { PersistenceLimits } from './outgoing-queue.js';

/** The owner of `devices/<owner>/…`, what retained messages are counted per; '' for other topics. */
export function ownerOf(topic: string): string {
  if (!topic.startsWith('devices/')) return '';
  const end = topic.indexOf('/', 8);
  return end < 0 ? '' : topic.slice(8, end);
}

/**
 * aedes's persistence (the async interface of aedes-persistence 11, which aedes 1.2 calls) kept
 * in Fjord's store, SQLite or PostgreSQL. Every change is written through before the promise
 * aedes waits on resolves, so what was acknowledged survives a kill -9. Retained messages and
 * subscriptions are also held in memory, loaded at setup: aedes looks subscribers up on every
 * publish, and that must not be a query. That cache is only right while this process is the
 * store's one broker: scaled out, the broker uses Redis persistence instead (docs/iot.md).
 */
export class StorePersistence {
  private broker: BrokerRef | null = null;
  private destroyed = false;
  private readonly db: Kysely<MqttSessionTables>;
  private readonly retained = new Map<string, AnyPacket>();
  private readonly retainedPerOwner = new Map<string, number>();
  private readonly subs = new SubscriptionIndex();
  private readonly outgoing: OutgoingQueue;

  constructor(store: Store, limits: PersistenceLimits | null = null) {
    this.db = store.typed<MqttSessionTables>();
    this.outgoing = new OutgoingQueue(this.db, limits);
  }

  /** Empties every table the broker keeps (the abstract test suite starts each test empty). */
  static async wipe(store: Store): Promise<void> {
    const db = store.typed<MqttSessionTables>();
    for (const table of MQTT_SESSION_TABLES) await db.deleteFrom(table).execute();
  }

  /**
   * After an emulator reset emptied the tables: the copies kept in memory go too, so no retained
   * message or subscription of before the reset is served after it.
   */
  async reload(): Promise<void> {
    this.retained.clear();
    this.retainedPerOwner.clear();
    this.subs.clear();
    this.outgoing.forget();
    if (this.broker) await this.setup(this.broker);
  }

  async setup(broker: BrokerRef): Promise<void> {
    this.broker = broker;
    for (const row of await this.db.selectFrom('iot_mqtt_retained').selectAll().execute()) {
      this.retained.set(row.topic, decodePacket(row.packet));
      this.countRetained(row.owner, 1);
    }
    for (const row of await this.db.selectFrom('iot_mqtt_subscriptions').selectAll().execute())
      this.subs.remember(row.client_id, row.topic, JSON.parse(row.options) as SubOptions);
    await this.outgoing.load();
  }

  // --- retained ---------------------------------------------------------------------------------

  async storeRetained(pkt: AnyPacket): Promise<void> {
    const packet = { ...pkt };
    const had = this.retained.has(packet.topic);
    const owner = ownerOf(packet.topic);
    if (packet.payload.length === 0) {
      if (!had) return;
      this.retained.delete(packet.topic);
      this.countRetained(owner, -1);
      await this.db.deleteFrom('iot_mqtt_retained').where('topic', '=', packet.topic).execute();
      return;
    }
    this.retained.set(packet.topic, packet);
    if (!had) this.countRetained(owner, 1);
    const text = encodePacket(packet);
    await this.db
      .insertInto('iot_mqtt_retained')
      .values({ topic: packet.topic, owner, packet: text })
      .onConflict((oc) => oc.column('topic').doUpdateSet({ packet: text }))
      .execute();
  }

  /** Retained messages under a device's topic root now. */
  retainedCount(owner: string): number {
    return this.retainedPerOwner.get(owner) ?? 0;
  }

  /** Whether a retained message is kept on exactly this topic. */
  hasRetained(topic: string): boolean {
    return this.retained.has(topic);
  }

  createRetainedStream(pattern: string): Readable {
    return this.createRetainedStreamCombi([pattern]);
  }

  createRetainedStreamCombi(patterns: string[]): Readable {
    const found: AnyPacket[] = [];
    for (const pattern of patterns)
      for (const [topic, packet] of this.retained) if (topicMatches(pattern, topic)) found.push(packet);
    return Readable.from(found);
  }

  private countRetained(owner: string, by: number) {
    const n = (this.retainedPerOwner.get(owner) ?? 0) + by;
    if (n > 0) this.retainedPerOwner.set(owner, n);
    else this.retainedPerOwner.delete(owner);
  }

  // --- subscriptions ----------------------------------------------------------------------------

  async addSubscriptions(client: ClientRef, subs: (SubOptions & { topic: string })[]): Promise<void> {
    // One row per topic (the last one given wins): PostgreSQL refuses to upsert a row twice in one statement.
    const rows = new Map<string, { client_id: string; topic: string; options: string }>();
    for (const sub of subs) {
      const options: SubOptions = { qos: sub.qos, rh: sub.rh, rap: sub.rap, nl: sub.nl };
      if (sub.subscriptionIdentifier !== undefined)
        options.subscriptionIdentifier = sub.subscriptionIdentifier;
      this.subs.remember(client.id, sub.topic, options);
      rows.set(sub.topic, { client_id: client.id, topic: sub.topic, options: JSON.stringify(options) });
    }
    if (rows.size === 0) return;
    await this.db
      .insertInto('iot_mqtt_subscriptions')
      .values([...rows.values()])
      .onConflict((oc) =>
        oc.columns(['client_id', 'topic']).doUpdateSet((eb) => ({ options: eb.ref('excluded.options') })),
      )
      .execute();
  }

  async removeSubscriptions(client: ClientRef, topics: string[]): Promise<void> {
    const stored = this.subs.ofClient(client.id);
    if (!stored) return;
    for (const topic of topics) this.subs.forget(client.id, topic);
    if (topics.length === 0) return;
    await this.db
      .deleteFrom('iot_mqtt_subscriptions')
      .where('client_id', '=', client.id)
      .where('topic', 'in', topics)
      .execute();
  }

  async subscriptionsByClient(client: ClientRef): Promise<(SubOptions & { topic: string })[]> {
    const stored = this.subs.ofClient(client.id);
    return stored ? [...stored].map(([topic, options]) => ({ topic, ...options })) : [];
  }

  async countOffline(): Promise<{ subsCount: number; clientsCount: number }> {
    return { subsCount: this.subs.qosCount, clientsCount: this.subs.clientCount };
  }

  async subscriptionsByTopic(topic: string): Promise<MatchedSub[]> {
    return this.subs.matching(topic);
  }

  async cleanSubscriptions(client: ClientRef): Promise<void> {
    const stored = this.subs.ofClient(client.id);
    if (!stored) return;
    for (const topic of [...stored.keys()]) this.subs.forget(client.id, topic);
    await this.db.deleteFrom('iot_mqtt_subscriptions').where('client_id', '=', client.id).execute();
  }

  getClientList(topic: string): Readable {
    return Readable.from(this.subs.clientsOn(topic));
  }

  // --- messages queued for sessions (outgoing-queue.ts) -------------------------------------------

  async outgoingEnqueue(sub: { clientId: string }, packet: AnyPacket): Promise<void> {
    await this.outgoingEnqueueCombi([sub], packet);
  }

  async outgoingEnqueueCombi(subs: { clientId: string }[], packet: AnyPacket): Promise<void> {
    return this.outgoing.enqueue(subs, packet);
  }

  async outgoingUpdate(client: ClientRef, packet: AnyPacket): Promise<void> {
    return this.outgoing.update(client.id, packet);
  }

  async outgoingClearMessageId(client: ClientRef, packet: AnyPacket): Promise<AnyPacket | undefined> {
    return this.outgoing.clearMessageId(client.id, packet);
  }

  outgoingStream(client: ClientRef): Readable {
    return this.outgoing.stream(client.id);
  }

  // --- inbound QoS 2, awaiting PUBREL -------------------------------------------------------------

  async incomingStorePacket(client: ClientRef, packet: AnyPacket): Promise<void> {
    const copy = queuedCopy(packet);
    copy.messageId = packet.messageId;
    const text = encodePacket(copy);
    await this.db
      .insertInto('iot_mqtt_incoming')
      .values({ client_id: client.id, message_id: packet.messageId, packet: text })
      .onConflict((oc) => oc.columns(['client_id', 'message_id']).doUpdateSet({ packet: text }))
      .execute();
  }

  async incomingGetPacket(client: ClientRef, packet: AnyPacket): Promise<AnyPacket> {
    const row = await this.db
      .selectFrom('iot_mqtt_incoming')
      .select('packet')
      .where('client_id', '=', client.id)
      .where('message_id', '=', packet.messageId)
      .executeTakeFirst();
    if (!row) throw new Error('no such packet');
    return decodePacket(row.packet);
  }

  async incomingDelPacket(client: ClientRef, packet: AnyPacket): Promise<void> {
    const r = await this.db
      .deleteFrom('iot_mqtt_incoming')
      .where('client_id', '=', client.id)
      .where('message_id', '=', packet.messageId)
      .executeTakeFirst();
    if (Number(r.numDeletedRows) === 0) throw new Error('no such packet');
  }

  async cleanIncoming(client: ClientRef): Promise<void> {
    await this.db.deleteFrom('iot_mqtt_incoming').where('client_id', '=', client.id).execute();
  }

  // --- wills --------------------------------------------------------------------------------------

  async putWill(client: ClientRef, packet: AnyPacket): Promise<void> {
    packet.brokerId = this.broker!.id;
    packet.clientId = client.id;
    const text = encodePacket(packet);
    await this.db
      .insertInto('iot_mqtt_wills')
      .values({ client_id: client.id, broker_id: packet.brokerId, packet: text })
      .onConflict((oc) => oc.column('client_id').doUpdateSet({ broker_id: packet.brokerId, packet: text }))
      .execute();
  }

  async getWill(client: ClientRef): Promise<AnyPacket | undefined> {
    const row = await this.db
      .selectFrom('iot_mqtt_wills')
      .select('packet')
      .where('client_id', '=', client.id)
      .executeTakeFirst();
    return row ? decodePacket(row.packet) : undefined;
  }

  async delWill(client: ClientRef): Promise<AnyPacket | undefined> {
    const will = await this.getWill(client);
    if (will) await this.db.deleteFrom('iot_mqtt_wills').where('client_id', '=', client.id).execute();
    return will;
  }

  /** Wills left by brokers not in `brokers` (the ones alive): those whose clients died with them. */
  streamWill(brokers: Record<string, unknown> = {}): Readable {
    const rows = this.db.selectFrom('iot_mqtt_wills').select(['broker_id', 'packet']).execute();
    return Readable.from(
      (async function* () {
        for (const row of await rows) if (!brokers[row.broker_id]) yield decodePacket(row.packet);
      })(),
    );
  }

  // --- sessions that expired -----------------------------------------------------------------------

  /**
   * Everything kept for one session (subscriptions, queued and in-flight messages, its will): what
   * an MQTT 5 session leaves when it expires while its broker was not running to time it.
   */
  async wipeSession(clientId: string): Promise<void> {
    await this.cleanSubscriptions({ id: clientId });
    await this.outgoing.wipe(clientId);
    await this.cleanIncoming({ id: clientId });
    await this.db.deleteFrom('iot_mqtt_wills').where('client_id', '=', clientId).execute();
  }

  /** The store's handle on the broker tables, for the session deadlines kept beside them. */
  get tables(): Kysely<MqttSessionTables> {
    return this.db;
  }

  async destroy(): Promise<void> {
    if (this.destroyed) throw new Error('destroyed called twice!');
    this.destroyed = true;
    this.retained.clear();
    this.subs.clear();
  }
}
