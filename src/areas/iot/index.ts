import { defineArea } from '../wiring.js';
import { Alarms } from './alarms/alarms.js';
import { type ChannelType, NotificationSettings } from './alarms/channels.js';
import { RuleEngine } from './alarms/engine.js';
import { alarmFacts } from './alarms/facts.js';
import { type AlertSenders, Notifier, RENOTIFY_JOB } from './alarms/notifier.js';
import { iotAlarmRoutes } from './alarms/routes.js';
import { Rules } from './alarms/rules.js';
import { RULES_TICK_JOB, RULES_TICK_SECONDS, RuleSweep } from './alarms/sweep.js';
import { iotAlarmMigrations } from './alarms/tables.js';
import { MqttBroker } from './broker.js';
import { Profiles } from './catalogue/profiles.js';
import { iotCatalogueRoutes } from './catalogue/routes.js';
import { iotCatalogueMigrations } from './catalogue/tables.js';
import { IotGroups } from './groups.js';
import { IotInsights } from './insights.js';
import { iotMigrations } from './migrations.js';
import { BrokerPolicy, MQTT_LIMITS } from './mqtt/broker-policy.js';
import { brokerState } from './mqtt/broker-state.js';
import { mqttSessionMigrations } from './mqtt/session-tables.js';
import { RETENTION_JOB, Retention } from './retention.js';
import { iotRoutes } from './routes.js';
import { iotLiveRoutes } from './routes-live.js';
import { certificateNames } from './self-signed.js';
import { IotService } from './service.js';
import { IotTags } from './tags.js';
import { TelemetryQueries } from './telemetry-queries.js';
import { TelemetryStream } from './telemetry-stream.js';

export { IotService } from './service.js';
export type { IotEvent } from './telemetry-stream.js';

/** IoT, the device side: devices with MQTT credentials (the broker on the `mqtt` role builds on it). */
export const iotArea = defineArea({
  name: 'iot',
  needs: [],
  // E-mail and SMS alarm notifications go out through these areas when they run.
  optional: ['verify', 'sms'],
  migrations: {
    ...iotMigrations,
    ...iotCatalogueMigrations,
    ...iotAlarmMigrations,
    ...mqttSessionMigrations,
  },
  async setup(kernel, { verify, sms }) {
    const stream = new TelemetryStream((err) => kernel.log.error({ err }, 'iot stream listener failed'));
    // The address devices are handed: FJORD_MQTT_PUBLIC_ADDRESS behind a load balancer, else the
    // API's host name on the broker's port.
    const published = kernel.config.mqttPublicAddress;
    const mqtt = {
      host: () => published?.host ?? new URL(kernel.baseUrl()).hostname,
      port: (): number => published?.port ?? broker.port(),
    };
    const iot = new IotService(kernel.store, kernel.clock, kernel.identity, kernel.limits, mqtt, stream);
    kernel.registry.addCredentialKind({
      name: 'mqtt-device',
      area: 'iot',
      doc: 'A device’s MQTT username and password, presented to the broker (role `mqtt`)',
    });
    const listeners = kernel.config.mqttListeners;
    const mqttLog = kernel.log.child({ role: 'mqtt' });
    const policy = new BrokerPolicy(kernel.identity, kernel.limits, kernel.limiter, iot.repo);
    const broker = new MqttBroker(iot, mqttLog, {
      policy,
      // Retained messages and sessions in the store, or in Redis when scaled out (made when the broker starts).
      state: () =>
        brokerState(
          kernel.store,
          kernel.config.redisUrl,
          {
            queuedPerSession: (clientId) => policy.limitForClient(MQTT_LIMITS.queuedPerSession, clientId),
            dropped: (clientId, topic) =>
              mqttLog.warn({ client: clientId, topic }, 'mqtt: session queue full, message dropped'),
          },
          mqttLog,
        ),
      host: kernel.config.host,
      port: kernel.config.ports.mqtt,
      tls: {
        port: listeners.tlsPort,
        pair: listeners.tls,
        dataDir: kernel.config.dataDir,
        names: () => certificateNames(kernel.config.host, new URL(kernel.baseUrl()).hostname),
      },
      wsPort: listeners.wsPort,
      onListening: (protocol, address) => kernel.registry.addListener({ role: 'mqtt', protocol, address }),
    });
    // Suspension acts on connected devices too, in every process (the store's status notice).
    kernel.identity.onCustomerStatusChanged((customerId) => broker.dropCustomer(customerId));
    kernel.registry.addBackend({
      area: 'iot',
      name: 'broker',
      driver: 'aedes (MQTT 3.1.1 and 5, embedded)',
      simulated: false,
      detail: kernel.config.redisUrl
        ? 'telemetry stored in the Fjord store; retained messages and sessions in Redis, shared by every mqtt process'
        : 'telemetry, retained messages and sessions stored in the Fjord store',
    });
    const insights = new IotInsights(iot, kernel.clock, kernel.identity, kernel.limits, mqtt, () =>
      broker.listening()
        ? { connected: () => broker.connectedCount(), malformed: () => broker.malformed }
        : null,
    );
    insights.listenerPorts = () => ({ mqtts: broker.tlsPort(), websocket: broker.wsPort() });
    // Part 2: rules judged on the telemetry stream and the clock, alarms, notifications.
    const alarms = new Alarms(kernel.store, kernel.clock);
    const rules = new Rules(kernel.store, kernel.clock, kernel.limits, kernel.identity);
    const engine = new RuleEngine(kernel.store, alarms, kernel.log.child({ area: 'iot' }));
    rules.changed = (ruleId) => engine.forgetRules(ruleId);
    engine.attach(stream);
    const senders: AlertSenders = {
      mail: verify
        ? async (customerId, to, subject, text) =>
            (await verify.sendNotificationMail(customerId, { to, subject, text })).messageId
        : undefined,
      sms: sms
        ? async (customerId, to, message) =>
            (await sms.sendSystemMessage({ customerId, to, message, kind: 'ALERT' })).messageId
        : undefined,
    };
    const available = new Set<ChannelType>([
      'webhook',
      ...(verify ? ['email' as const] : []),
      ...(sms ? ['sms' as const] : []),
    ]);
    const settings = new NotificationSettings(kernel.store, kernel.clock, kernel.limits, available);
    const notifier = new Notifier(
      kernel.store,
      kernel.clock,
      settings,
      alarms,
      kernel.webhooks,
      senders,
      kernel.log,
    );
    insights.alarms = alarmFacts(kernel.store, alarms);
    const sweep = new RuleSweep(kernel.store, kernel.clock, alarms);
    kernel.jobs.register(RULES_TICK_JOB, { run: async () => void (await sweep.tick()) });
    kernel.jobs.register(RENOTIFY_JOB, { run: async () => void (await notifier.renotify()) });
    await kernel.jobs.schedule(RULES_TICK_JOB, RULES_TICK_JOB, RULES_TICK_SECONDS);
    await kernel.jobs.schedule(RENOTIFY_JOB, RENOTIFY_JOB, 60);
    const profiles = new Profiles(kernel.store, kernel.clock, kernel.limits, (customerId, profileId) =>
      rules.repo.rulesTargeting(customerId, 'profile', profileId),
    );
    const retention = new Retention(kernel.store, kernel.clock, kernel.limits, kernel.identity, kernel.log);
    kernel.jobs.register(RETENTION_JOB, { run: async () => void (await retention.run()) });
    await kernel.jobs.schedule(RETENTION_JOB, RETENTION_JOB, 3600);
    // Devices are services of the account (GET /v1/account/services), the first 1000 of them.
    kernel.registry.addServiceProvider(async (customerId) =>
      (await iot.list(customerId, {}, { page: 1, size: 1000, limit: 1000, offset: 0 })).devices.map((d) => ({
        id: d.device_id,
        service_type: 'iot',
        name: d.name,
        status: d.is_active ? d.connection_status : 'inactive',
        region: null,
        created_at: d.created_at,
        metadata: {
          device_type: d.device_type,
          is_online: d.is_online,
          last_seen: d.last_seen,
          messages_24h: d.messages_24h,
          mqtt: `${mqtt.host()}:${mqtt.port()}`,
        },
        api: {
          kind: 'rest',
          openapi: `${kernel.baseUrl()}/openapi.json`,
          docs: `${kernel.baseUrl()}/docs`,
          base_url: `${kernel.baseUrl()}/v1/iot/devices/${encodeURIComponent(d.device_id)}`,
        },
      })),
    );
    return {
      service: iot,
      routes: [
        ...iotRoutes({
          iot,
          groups: new IotGroups(kernel.store, kernel.clock, kernel.limits, kernel.identity),
          tags: new IotTags(kernel.store, kernel.clock, kernel.limits, iot),
          insights,
          telemetry: new TelemetryQueries(iot),
        }),
        ...iotLiveRoutes(iot),
        ...iotCatalogueRoutes(iot.datapoints, profiles, insights),
        ...iotAlarmRoutes(rules, alarms, settings, notifier),
      ],
      servers: [broker],
      onReset: () => broker.afterReset(),
    };
  },
});
