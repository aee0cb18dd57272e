import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { lazyPackage } from '../../../kernel/lazy.js';
import type { Store } from '../../../kernel/store/store.js';
import type { PersistenceLimits } from './outgoing-queue.js';
import type { AnyPacket } from './packet-codec.js';
import { RedisPersistence } from './redis-persistence.js';
import type { MqttSessionTables } from './session-tables.js';
import { StorePersistence } from './store-persistence.js';

/**
 * What the broker needs of its persistence beyond aedes's interface: the per-device retained
 * count for the plan's limit (in memory on the store, a Redis round trip scaled out), ending one
 * session, and forgetting everything after an emulator reset.
 */
export interface BrokerPersistence {
  storeRetained(packet: AnyPacket): Promise<void>;
  retainedCount(owner: string): number | Promise<number>;
  hasRetained(topic: string): boolean | Promise<boolean>;
  incomingGetPacket(client: { id: string }, packet: AnyPacket): Promise<AnyPacket>;
  cleanIncoming(client: { id: string }): Promise<void>;
  delWill(client: { id: string; brokerId?: string }): Promise<AnyPacket | null | undefined>;
  outgoingStream(client: { id: string }): Readable;
  wipeSession(clientId: string): Promise<void>;
  reload(): Promise<void>;
  destroy(): Promise<void>;
}

/** Where the broker keeps its state, and how messages reach the other `mqtt` processes. */
export interface BrokerState {
  persistence: BrokerPersistence;
  /** aedes's emitter: mqemitter-redis when scaled out; undefined for aedes's own, in memory. */
  mq?: object;
  /** Whether other `mqtt` processes share this state (a session's connection may be in another). */
  shared: boolean;
  /** The store's broker tables: MQTT 5 session deadlines are kept there in both modes. */
  tables: Kysely<MqttSessionTables>;
}

const mqemitterRedis =
  lazyPackage<(opts: object) => { state: NodeJS.EventEmitter; close(cb?: () => void): void }>(
    'mqemitter-redis',
  );

/**
 * The one choice between single node and scaled out: with FJORD_REDIS_URL the broker keeps
 * retained messages and sessions in Redis (aedes-persistence-redis) and fans messages out through
 * it (mqemitter-redis), so several processes serve the same devices; without it, in Fjord's store,
 * loaded into memory, for one `mqtt` process per store.
 */
export function brokerState(
  store: Store,
  redisUrl: string | null,
  limits: PersistenceLimits,
  log: Logger,
): BrokerState {
  const tables = store.typed<MqttSessionTables>();
  if (!redisUrl) return { persistence: new StorePersistence(store, limits), shared: false, tables };
  const onError = (err: Error) => log.warn({ err: err.message }, 'mqtt: redis error');
  const mq = redisEmitter(redisUrl, onError);
  return { persistence: new RedisPersistence(redisUrl, limits, onError), mq, shared: true, tables };
}

/** The broker's emitter scaled out: each publish goes through Redis to every `mqtt` process. */
export function redisEmitter(
  redisUrl: string,
  onError: (err: Error) => void,
): object & { close(cb?: () => void): void } {
  const mq = mqemitterRedis()({
    connectionString: redisUrl,
    // As aedes's own emitter: `a/#` also matches `a` (MQTT-4.7.1-2).
    matchEmptyLevels: true,
    concurrency: 100,
  });
  mq.state.on('error', onError);
  return mq;
}
