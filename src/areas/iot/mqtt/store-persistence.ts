import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Store } from '../../../kernel/store/store.js';
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

export interface PersistenceLimits {
  /** Messages a session may have queued (null: unlimited); past it new ones are dropped. */
  queuedPerSession(clientId: string): Promise<number | null>;
  /** Told of each message dropped that way, for the log. */
  dropped?(clientId: string, topic: string): void;
}

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
  private readonly queued = new Map<string, number>();
  private seq = 0;

  constructor(
    store: Store,
    private readonly limits: PersistenceLimits | null = null,
  ) {
    this.db = store.typed<MqttSessionTables>();
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
    this.queued.clear();
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
    const queues = await this.db
      .selectFrom('iot_mqtt_outgoing')
      .select((eb) => ['client_id', eb.fn.countAll<number>().as('n'), eb.fn.max('seq').as('top')])
      .groupBy('client_id')
      .execute();
    for (const q of queues) {
      this.queued.set(q.client_id, Number(q.n));
      this.seq = Math.max(this.seq, Number(q.top));
    }
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

  // --- messages queued for sessions ---------------------------------------------------------------

  async outgoingEnqueue(sub: { clientId: string }, packet: AnyPacket): Promise<void> {
    await this.outgoingEnqueueCombi([sub], packet);
  }

  async outgoingEnqueueCombi(subs: { clientId: string }[], packet: AnyPacket): Promise<void> {
    if (subs.length === 0) return;
    const text = encodePacket(queuedCopy(packet));
    const rows = [];
    for (const sub of subs) {
      const max = this.limits ? await this.limits.queuedPerSession(sub.clientId) : null;
      const n = this.queued.get(sub.clientId) ?? 0;
      if (max !== null && n >= max) {
        this.limits?.dropped?.(sub.clientId, packet.topic);
        continue;
      }
      this.queued.set(sub.clientId, n + 1);
      rows.push({
        client_id: sub.clientId,
        seq: ++this.seq,
        broker_id: String(packet.brokerId ?? ''),
        broker_counter: Number(packet.brokerCounter ?? 0),
        message_id: null,
        packet: text,
      });
    }
    if (rows.length) await this.db.insertInto('iot_mqtt_outgoing').values(rows).execute();
  }

  async outgoingUpdate(client: ClientRef, packet: AnyPacket): Promise<void> {
    const byCounter = await this.db
      .updateTable('iot_mqtt_outgoing')
      .set({ message_id: packet.messageId })
      .where('client_id', '=', client.id)
      .where('broker_id', '=', String(packet.brokerId ?? ''))
      .where('broker_counter', '=', Number(packet.brokerCounter ?? 0))
      .executeTakeFirst();
    if (Number(byCounter.numUpdatedRows) > 0) return;
    // Another packet under this packet id (a PUBREL, or another broker's): it replaces the queued one.
    const other = await this.db
      .selectFrom('iot_mqtt_outgoing')
      .select('seq')
      .where('client_id', '=', client.id)
      .where('message_id', '=', packet.messageId)
      .where('broker_id', '!=', String(packet.brokerId ?? ''))
      .orderBy('seq')
      .executeTakeFirst();
    if (!other) throw new Error('no such packet');
    await this.db
      .updateTable('iot_mqtt_outgoing')
      .set({
        broker_id: String(packet.brokerId ?? ''),
        broker_counter: Number(packet.brokerCounter ?? 0),
        message_id: packet.messageId,
        packet: encodePacket(packet),
      })
      .where('client_id', '=', client.id)
      .where('seq', '=', other.seq)
      .execute();
  }

  async outgoingClearMessageId(client: ClientRef, packet: AnyPacket): Promise<AnyPacket | undefined> {
    const row = await this.db
      .selectFrom('iot_mqtt_outgoing')
      .select(['seq', 'packet', 'message_id'])
      .where('client_id', '=', client.id)
      .where('message_id', '=', packet.messageId)
      .orderBy('seq')
      .executeTakeFirst();
    if (!row) return undefined;
    const gone = await this.db
      .deleteFrom('iot_mqtt_outgoing')
      .where('client_id', '=', client.id)
      .where('seq', '=', row.seq)
      .executeTakeFirst();
    // Two acknowledgements racing: only the one that deleted the row counts it and answers it.
    if (Number(gone.numDeletedRows) === 0) return undefined;
    const n = (this.queued.get(client.id) ?? 1) - 1;
    if (n > 0) this.queued.set(client.id, n);
    else this.queued.delete(client.id);
    return withMessageId(decodePacket(row.packet), row.message_id);
  }

  outgoingStream(client: ClientRef): Readable {
    const rows = this.db
      .selectFrom('iot_mqtt_outgoing')
      .select(['packet', 'message_id'])
      .where('client_id', '=', client.id)
      .orderBy('seq')
      .execute();
    return Readable.from(
      (async function* () {
        for (const row of await rows) yield withMessageId(decodePacket(row.packet), row.message_id);
      })(),
    );
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
    await this.db.deleteFrom('iot_mqtt_outgoing').where('client_id', '=', clientId).execute();
    this.queued.delete(clientId);
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

function withMessageId(packet: AnyPacket, messageId: number | null): AnyPacket {
  if (messageId !== null) packet.messageId = messageId;
  else if (packet.qos > 0) packet.messageId = undefined;
  return packet;
}
