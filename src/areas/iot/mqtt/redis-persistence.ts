import { Readable } from 'node:stream';
import type { Redis } from 'ioredis';
import { lazyPackage } from '../../../kernel/lazy.js';
import type { PersistenceLimits } from './outgoing-queue.js';
import type { AnyPacket } from './packet-codec.js';
import { ownerOf } from './store-persistence.js';
import type { SubOptions } from './subscription-index.js';

const ioredis = lazyPackage<typeof import('ioredis')>('ioredis');

/** aedes-persistence-redis 12's async class: the persistence aedes 2 calls, kept in Redis. */
interface AsyncRedisPersistence {
  setup(broker: object): Promise<void>;
  destroy(): Promise<void>;
  [method: string]: (...args: never[]) => unknown;
}
const asyncRedisPersistence = lazyPackage<
  new (opts: {
    conn: Redis;
    maxSessionDelivery: number;
  }) => AsyncRedisPersistence
>('aedes-persistence-redis/asyncPersistence.js');

/**
 * A resumed session gets every message queued for it (LRANGE 0 -1), as on the store: the package's
 * default sends the first 1000 only, and the plan's queue limit may be higher.
 */
const EVERY_QUEUED = -1;

/** Every key the broker keeps starts with this, apart from the rate limits' and anyone else's. */
export const MQTT_KEY_PREFIX = 'fjord:mqtt:';

interface ClientRef {
  id: string;
  brokerId?: string;
}

// Key names of aedes-persistence-redis 12.0.0 (pinned in package.json), read here for the limits
// it does not keep: the retained hash, a session's queue list, the will list.
const RETAINED = 'retained';
const WILLS = 'will';
const queueKey = (clientId: string) => `outgoing:${encodeURIComponent(clientId)}`;
/** Fjord's own: the retained topics under one device's root, counted for its plan's limit. */
const retainedOfKey = (owner: string) => `fjord-retained-of:${owner}`;

/**
 * The broker's persistence when processes are scaled out (FJORD_REDIS_URL): aedes-persistence-redis
 * 12 under the `fjord:mqtt:` prefix, with what Fjord adds to any persistence — the per-plan limits
 * of retained messages per device and of messages queued per session, and ending one session's
 * state (expiry, reset). Every `mqtt` process sharing the Redis sees the same retained messages and
 * sessions; subscriptions are also held in each process's memory, kept in step through the
 * broker's emitter (mqemitter-redis), as aedes-persistence-redis does.
 */
export class RedisPersistence {
  private inner: AsyncRedisPersistence;
  private db: Redis;
  private broker: object | null = null;

  constructor(
    private readonly url: string,
    private readonly limits: PersistenceLimits | null = null,
    private readonly onError: (err: Error) => void = () => {},
  ) {
    this.db = this.connect();
    this.inner = new (asyncRedisPersistence())({ conn: this.db, maxSessionDelivery: EVERY_QUEUED });
  }

  private connect(): Redis {
    const db = new (ioredis().Redis)(this.url, { keyPrefix: MQTT_KEY_PREFIX, lazyConnect: false });
    db.on('error', (err: Error) => this.onError(err));
    return db;
  }

  private call<T>(method: string, ...args: unknown[]): T {
    return (this.inner[method] as (...a: unknown[]) => T)(...args);
  }

  async setup(broker: object): Promise<void> {
    this.broker = broker;
    await this.inner.setup(broker);
  }

  // --- retained, counted per device ----------------------------------------------------------------

  async storeRetained(packet: AnyPacket): Promise<void> {
    const owner = ownerOf(packet.topic);
    const empty = packet.payload.length === 0;
    // Counted first, dropped last: a crash between the two writes counts one too many, never one too few.
    if (owner && !empty) await this.db.sadd(retainedOfKey(owner), packet.topic);
    await this.call<Promise<void>>('storeRetained', packet);
    if (owner && empty) await this.db.srem(retainedOfKey(owner), packet.topic);
  }

  /** Retained messages under a device's topic root now, in every process. */
  async retainedCount(owner: string): Promise<number> {
    return this.db.scard(retainedOfKey(owner));
  }

  async hasRetained(topic: string): Promise<boolean> {
    return (await this.db.hexists(RETAINED, topic)) === 1;
  }

  // aedes 2.0.0-beta.1 pipes what these answer: streams, where the package answers async iterables.

  createRetainedStream(pattern: string): Readable {
    return this.createRetainedStreamCombi([pattern]);
  }

  createRetainedStreamCombi(patterns: string[]): Readable {
    return Readable.from(this.call<AsyncIterable<AnyPacket>>('createRetainedStreamCombi', patterns));
  }

  // --- subscriptions ---------------------------------------------------------------------------------

  addSubscriptions(client: ClientRef, subs: (SubOptions & { topic: string })[]): Promise<void> {
    return this.call('addSubscriptions', client, subs);
  }

  removeSubscriptions(client: ClientRef, topics: string[]): Promise<void> {
    return this.call('removeSubscriptions', client, topics);
  }

  subscriptionsByClient(client: ClientRef): Promise<(SubOptions & { topic: string })[]> {
    return this.call('subscriptionsByClient', client);
  }

  countOffline(): Promise<{ subsCount: number; clientsCount: number }> {
    return this.call('countOffline');
  }

  subscriptionsByTopic(topic: string): Promise<unknown[]> {
    return this.call('subscriptionsByTopic', topic);
  }

  cleanSubscriptions(client: ClientRef): Promise<void> {
    return this.call('cleanSubscriptions', client);
  }

  getClientList(topic: string): Readable {
    return Readable.from(this.call<Iterable<string>>('getClientList', topic));
  }

  // --- messages queued for sessions, within the plan's limit -----------------------------------------

  async outgoingEnqueue(sub: { clientId: string }, packet: AnyPacket): Promise<void> {
    await this.outgoingEnqueueCombi([sub], packet);
  }

  async outgoingEnqueueCombi(subs: { clientId: string }[], packet: AnyPacket): Promise<void> {
    const room = await this.withRoom(subs, packet.topic);
    if (room.length > 0) await this.call<Promise<void>>('outgoingEnqueueCombi', room, packet);
  }

  /** The subscriptions whose session has room for one more message (its queue counted in Redis). */
  private async withRoom<S extends { clientId: string }>(subs: S[], topic: string): Promise<S[]> {
    if (!this.limits || subs.length === 0) return subs;
    const maxes = await Promise.all(subs.map((s) => this.limits!.queuedPerSession(s.clientId)));
    const limited = subs.flatMap((s, i) => (maxes[i] === null ? [] : [s.clientId]));
    if (limited.length === 0) return subs;
    const pipeline = this.db.pipeline();
    for (const id of limited) pipeline.llen(queueKey(id));
    const lengths = new Map<string, number>();
    for (const [i, [err, n]] of ((await pipeline.exec()) ?? []).entries()) {
      if (err) throw err;
      lengths.set(limited[i]!, Number(n));
    }
    return subs.filter((s, i) => {
      const max = maxes[i];
      if (max === null || max === undefined || (lengths.get(s.clientId) ?? 0) < max) return true;
      this.limits!.dropped?.(s.clientId, topic);
      return false;
    });
  }

  outgoingUpdate(client: ClientRef, packet: AnyPacket): Promise<void> {
    return this.call('outgoingUpdate', client, packet);
  }

  outgoingClearMessageId(client: ClientRef, packet: AnyPacket): Promise<AnyPacket | undefined> {
    return this.call('outgoingClearMessageId', client, packet);
  }

  outgoingStream(client: ClientRef): Readable {
    return Readable.from(this.call<AsyncIterable<AnyPacket>>('outgoingStream', client));
  }

  // --- inbound QoS 2 ---------------------------------------------------------------------------------

  incomingStorePacket(client: ClientRef, packet: AnyPacket): Promise<void> {
    return this.call('incomingStorePacket', client, packet);
  }

  incomingGetPacket(client: ClientRef, packet: AnyPacket): Promise<AnyPacket> {
    return this.call('incomingGetPacket', client, packet);
  }

  incomingDelPacket(client: ClientRef, packet: AnyPacket): Promise<void> {
    return this.call('incomingDelPacket', client, packet);
  }

  cleanIncoming(client: ClientRef): Promise<void> {
    return this.call('cleanIncoming', client);
  }

  // --- wills -----------------------------------------------------------------------------------------

  putWill(client: ClientRef, packet: AnyPacket): Promise<void> {
    return this.call('putWill', client, packet);
  }

  getWill(client: ClientRef): Promise<AnyPacket | null> {
    return this.call('getWill', client);
  }

  /**
   * A will is kept under the broker that took it. Without a broker id (a will of a removed device,
   * dropped by the publish check) every will of that client id goes, whichever broker took it.
   */
  async delWill(client: ClientRef): Promise<AnyPacket | null> {
    if (client.brokerId !== undefined) return this.call('delWill', client);
    let found: AnyPacket | null = null;
    for (const brokerId of await this.willBrokersOf(client.id))
      found = (await this.call<Promise<AnyPacket | null>>('delWill', { id: client.id, brokerId })) ?? found;
    return found;
  }

  streamWill(brokers?: Record<string, unknown>): Readable {
    return Readable.from(this.call<AsyncIterable<AnyPacket>>('streamWill', brokers));
  }

  /** Brokers holding a will of this client (will keys are `will:<broker id>:<client id>`). */
  private async willBrokersOf(clientId: string): Promise<string[]> {
    const tail = `:${encodeURIComponent(clientId)}`;
    return (await this.db.lrange(WILLS, 0, -1))
      .filter((key) => key.endsWith(tail))
      .map((key) => key.slice(WILLS.length + 1, key.length - tail.length));
  }

  // --- sessions that end, and a reset ----------------------------------------------------------------

  /** Everything kept for one session: subscriptions, queued and in-flight messages, its will. */
  async wipeSession(clientId: string): Promise<void> {
    await this.cleanSubscriptions({ id: clientId });
    await this.db.del(queueKey(clientId));
    await this.cleanIncoming({ id: clientId });
    await this.delWill({ id: clientId });
  }

  /**
   * After an emulator reset: every key under the prefix goes, and this process's copy of the
   * subscriptions with them (other processes keep theirs until they restart).
   */
  async reload(): Promise<void> {
    const [old, oldDb] = [this.inner, this.db];
    const stream = this.db.scanStream({ match: `${MQTT_KEY_PREFIX}*`, count: 500 });
    for await (const keys of stream as AsyncIterable<string[]>)
      if (keys.length) await this.db.del(...keys.map((k) => k.slice(MQTT_KEY_PREFIX.length)));
    this.db = this.connect();
    this.inner = new (asyncRedisPersistence())({ conn: this.db, maxSessionDelivery: EVERY_QUEUED });
    if (!this.broker) return void oldDb.disconnect();
    await this.inner.setup(this.broker);
    await old.destroy();
  }

  async destroy(): Promise<void> {
    await this.inner.destroy();
  }
}
