import assert from 'node:assert';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { redisEmitter } from '../../src/areas/iot/mqtt/broker-state.js';
import { RedisPersistence } from '../../src/areas/iot/mqtt/redis-persistence.js';
import { runAedesAbstractSuite } from '../helpers/aedes-abstract.js';
import { startThrowawayRedis } from '../helpers/redis.js';

/**
 * The broker's persistence when scaled out (FJORD_REDIS_URL): aedes-persistence-redis as Fjord
 * wraps it (key prefix, the per-plan limits), with Fjord's Redis emitter, against
 * aedes-persistence's abstract suite — the same harness as the store's persistence — and the
 * limits Fjord adds. A throwaway redis-server of its own; without one the file fails.
 */
let redis: Awaited<ReturnType<typeof startThrowawayRedis>>;
let admin: Redis;
const emitters: { close(cb?: () => void): void }[] = [];

beforeAll(async () => {
  redis = await startThrowawayRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  await Promise.all(emitters.map((mq) => new Promise<void>((resolve) => mq.close(() => resolve()))));
  admin?.disconnect();
  await redis?.stop();
});

const failOnError = (err: Error) => {
  throw err;
};

describe('aedes-persistence abstract suite on Redis', () => {
  runAedesAbstractSuite({
    persistence: async () => {
      await admin.flushdb();
      return new RedisPersistence(redis.url, null, failOnError);
    },
    buildEmitter: () => {
      const mq = redisEmitter(redis.url, failOnError);
      emitters.push(mq);
      return mq;
    },
  });
});

describe('what Fjord adds to the Redis persistence', () => {
  const broker = () => {
    const mq = redisEmitter(redis.url, failOnError) as unknown as {
      emit: unknown;
      on: unknown;
      removeListener: unknown;
      close(cb?: () => void): void;
    };
    emitters.push(mq);
    const bind = (f: unknown) => (f as (...a: unknown[]) => unknown).bind(mq);
    return {
      id: 'fjord-test',
      mq,
      publish: bind(mq.emit),
      subscribe: bind(mq.on),
      unsubscribe: bind(mq.removeListener),
      counter: 0,
    };
  };
  const publish = (topic: string, payload: string, extra: object = {}) =>
    ({
      cmd: 'publish',
      topic,
      payload: Buffer.from(payload),
      qos: 1,
      retain: true,
      dup: false,
      ...extra,
    }) as never;

  it('keeps its keys under the fjord:mqtt: prefix, and counts retained messages per device', async () => {
    await admin.flushdb();
    const kept = new RedisPersistence(redis.url, null, failOnError);
    await kept.setup(broker());
    await kept.storeRetained(publish('devices/d_a/state', 'on'));
    await kept.storeRetained(publish('devices/d_a/state', 'off'));
    await kept.storeRetained(publish('devices/d_a/mode', 'eco'));
    await kept.storeRetained(publish('devices/d_b/state', 'on'));
    assert.equal(await kept.retainedCount('d_a'), 2);
    assert.equal(await kept.hasRetained('devices/d_a/mode'), true);
    await kept.storeRetained(publish('devices/d_a/mode', ''));
    assert.equal(await kept.retainedCount('d_a'), 1);
    assert.equal(await kept.hasRetained('devices/d_a/mode'), false);
    const keys = await admin.keys('*');
    assert.ok(keys.length > 0);
    assert.deepEqual(
      keys.filter((k) => !k.startsWith('fjord:mqtt:')),
      [],
    );
    await kept.destroy();
  });

  it('drops messages past the session queue limit, and wipes one session entirely', async () => {
    await admin.flushdb();
    const dropped: string[] = [];
    const kept = new RedisPersistence(
      redis.url,
      {
        queuedPerSession: async (clientId) => (clientId === 'd_small' ? 2 : null),
        dropped: (clientId, topic) => dropped.push(`${clientId} ${topic}`),
      },
      failOnError,
    );
    const b = broker();
    await kept.setup(b);
    await kept.addSubscriptions({ id: 'd_small' }, [{ topic: 'devices/d_small/#', qos: 1 } as never]);
    for (let i = 1; i <= 4; i++) {
      const packet = {
        ...(publish('devices/d_small/inbox', `m${i}`) as object),
        retain: false,
        brokerId: b.id,
        brokerCounter: i,
      };
      await kept.outgoingEnqueueCombi([{ clientId: 'd_small' }, { clientId: 'd_big' }], packet as never);
    }
    const queued = async (id: string) => {
      const out: string[] = [];
      for await (const p of kept.outgoingStream({ id })) out.push(String((p as { payload: Buffer }).payload));
      return out;
    };
    assert.deepEqual(await queued('d_small'), ['m1', 'm2']);
    assert.deepEqual(await queued('d_big'), ['m1', 'm2', 'm3', 'm4']);
    assert.deepEqual(dropped, ['d_small devices/d_small/inbox', 'd_small devices/d_small/inbox']);

    await kept.putWill({ id: 'd_small' }, publish('devices/d_small/lwt', 'gone', { retain: false }));
    await kept.wipeSession('d_small');
    assert.deepEqual(await queued('d_small'), []);
    assert.deepEqual(await kept.subscriptionsByClient({ id: 'd_small' }), []);
    assert.equal(await kept.getWill({ id: 'd_small' }), null);
    assert.deepEqual(await queued('d_big'), ['m1', 'm2', 'm3', 'm4']);
    await kept.destroy();
  });

  it('deletes a will by client id alone (a removed device’s), whichever broker took it', async () => {
    await admin.flushdb();
    const kept = new RedisPersistence(redis.url, null, failOnError);
    await kept.setup(broker());
    await kept.putWill({ id: 'd_gone' }, publish('devices/d_gone/lwt', 'bye', { retain: false }));
    const will = await kept.delWill({ id: 'd_gone' });
    assert.equal(String((will as { payload: Buffer }).payload), 'bye');
    const left: unknown[] = [];
    for await (const w of kept.streamWill({})) left.push(w);
    assert.deepEqual(left, []);
    await kept.destroy();
  });
});
