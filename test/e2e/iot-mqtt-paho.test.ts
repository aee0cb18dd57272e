// The Eclipse Paho MQTT interoperability suites (3.1.1 and 5) against Fjord's broker, through
// scripts/paho/run.ts, when an operator's checkout of eclipse/paho.mqtt.testing is named in
// PAHO_CHECKOUT. The suites are not shipped with Fjord and cannot be fetched by CI, so without
// it this file is skipped; docs/iot.md holds the figures of a run with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interopDir, type Login, runWithRetry } from '../../scripts/paho/run.js';
import { type BrokerFixture, useBroker } from '../helpers/mqtt-fixture.js';

const checkout = process.env.PAHO_CHECKOUT;

/** The tests docs/iot.md says pass on Fjord; every one of them must. */
const PASSING = {
  '3.1.1': [
    'testBasic',
    'test_keepalive',
    'test_offline_message_queueing',
    'test_overlapping_subscriptions',
    'test_redelivery_on_reconnect',
    'test_retained_messages',
    'test_subscribe_failure',
    'test_unsubscribe',
    'test_zero_length_clientid',
  ],
  '5': ['test_assigned_clientid', 'test_basic', 'test_zero_length_clientid'],
} as const;

describe.skipIf(!checkout)('Paho interoperability suites (PAHO_CHECKOUT names a checkout)', () => {
  let f: BrokerFixture;
  let login: Login;
  if (checkout) f = useBroker();
  beforeAll(async () => {
    const d = await f.device('paho');
    login = {
      host: '127.0.0.1',
      port: d.port,
      username: d.username,
      password: d.password,
      topicRoot: `${d.topic_root}/`,
      stop: async () => {},
    };
  });
  afterAll(() => login?.stop());

  for (const version of ['3.1.1', '5'] as const) {
    it(`MQTT ${version}: the tests documented as passing pass`, { timeout: 600_000 }, async () => {
      const r = await runWithRetry(interopDir(checkout!), version, login, { connackWait: '3' });
      const failing = PASSING[version].filter((name) => r.results[name] !== 'ok');
      expect(failing, r.log.slice(-4000)).toEqual([]);
    });
  }
});
