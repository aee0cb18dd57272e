import { defineArea } from '../wiring.js';
import { MqttBroker } from './broker.js';
import { Profiles } from './catalogue/profiles.js';
import { iotCatalogueRoutes } from './catalogue/routes.js';
import { iotCatalogueMigrations } from './catalogue/tables.js';
import { IotGroups } from './groups.js';
import { IotInsights } from './insights.js';
import { iotMigrations } from './migrations.js';
import { RETENTION_JOB, Retention } from './retention.js';
import { iotRoutes } from './routes.js';
import { IotService } from './service.js';
import { IotTags } from './tags.js';
import { TelemetryStream } from './telemetry-stream.js';

export { IotService } from './service.js';
export type { IotEvent } from './telemetry-stream.js';

/** IoT, the device side: devices with MQTT credentials (the broker on the `mqtt` role builds on it). */
export const iotArea = defineArea({
  name: 'iot',
  needs: [],
  migrations: { ...iotMigrations, ...iotCatalogueMigrations },
  async setup(kernel) {
    const stream = new TelemetryStream((err) => kernel.log.error({ err }, 'iot stream listener failed'));
    const mqtt = {
      host: () => new URL(kernel.baseUrl()).hostname,
      port: (): number => broker.port(),
    };
    const iot = new IotService(kernel.store, kernel.clock, kernel.identity, kernel.limits, mqtt, stream);
    kernel.registry.addCredentialKind({
      name: 'mqtt-device',
      area: 'iot',
      doc: 'A device’s MQTT username and password, presented to the broker (role `mqtt`)',
    });
    const broker = new MqttBroker(iot, kernel.log.child({ role: 'mqtt' }), {
      host: kernel.config.host,
      port: kernel.config.ports.mqtt,
      onListening: (address) =>
        kernel.registry.addListener({ role: 'mqtt', protocol: 'mqtt (tcp)', address }),
    });
    // Suspension acts on connected devices too, in every process (the store's status notice).
    kernel.identity.onCustomerStatusChanged((customerId) => broker.dropCustomer(customerId));
    kernel.registry.addBackend({
      area: 'iot',
      name: 'broker',
      driver: 'aedes (MQTT 3.1.1, embedded)',
      simulated: false,
      detail: 'telemetry stored in the Fjord store',
    });
    const insights = new IotInsights(iot, kernel.clock, kernel.identity, kernel.limits, mqtt, () =>
      broker.listening()
        ? { connected: () => broker.connectedCount(), malformed: () => broker.malformed }
        : null,
    );
    const profiles = new Profiles(kernel.store, kernel.clock, kernel.limits, async () => []);
    const retention = new Retention(kernel.store, kernel.clock, kernel.limits, kernel.identity, kernel.log);
    kernel.jobs.register(RETENTION_JOB, { run: async () => void (await retention.run()) });
    await kernel.jobs.schedule(RETENTION_JOB, RETENTION_JOB, 3600);
    return {
      service: iot,
      routes: [
        ...iotRoutes({
          iot,
          groups: new IotGroups(kernel.store, kernel.clock, kernel.limits, kernel.identity),
          tags: new IotTags(kernel.store, kernel.clock, iot),
          insights,
        }),
        ...iotCatalogueRoutes(iot.datapoints, profiles, insights),
      ],
      servers: [broker],
    };
  },
});
