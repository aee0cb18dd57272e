import assert from 'node:assert';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { StorePersistence } from '../../src/areas/iot/mqtt/store-persistence.js';
import { runAedesAbstractSuite } from '../helpers/aedes-abstract.js';
import { TestFjord } from '../helpers/fjord.js';

/**
 * The broker's persistence in Fjord's store against aedes-persistence's own abstract test suite
 * (the contract every aedes persistence must pass), on whichever store this run uses. The Redis
 * persistence of a scaled-out install runs the same suite in iot-mqtt-persistence-redis.test.ts.
 */

let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create();
});
afterAll(async () => {
  await t?.close();
});

describe('aedes-persistence abstract suite on the Fjord store', () => {
  runAedesAbstractSuite({
    persistence: async () => {
      await StorePersistence.wipe(t.kernel.store);
      return new StorePersistence(t.kernel.store);
    },
  });
});

describe('the persistence after an emulator reset', () => {
  it('forgets what it kept in memory once the tables are emptied', async () => {
    await StorePersistence.wipe(t.kernel.store);
    const kept = new StorePersistence(t.kernel.store);
    await kept.setup({ id: 'test-broker' } as never);
    await kept.storeRetained({
      cmd: 'publish',
      topic: 'devices/d_reset/state',
      payload: Buffer.from('on'),
      qos: 1,
      retain: true,
      dup: false,
    } as never);
    assert.equal(kept.hasRetained('devices/d_reset/state'), true);
    // What the reset does to the store (truncateAll), then what the area's onReset does.
    await StorePersistence.wipe(t.kernel.store);
    await kept.reload();
    assert.equal(kept.hasRetained('devices/d_reset/state'), false);
    assert.equal(kept.retainedCount('d_reset'), 0);
  });
});
