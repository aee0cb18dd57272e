import { defineArea } from '../wiring.js';
import { MqttBroker } from './broker.js';
import { IotGroups } from './groups.js';
import { iotMigrations } from './migrations.js';
import { iotRoutes } from './routes.js';
import { IotService } from './service.js';
import { TelemetryStream } from './telemetry-stream.js';

export { IotService } from './service.js';
export type { IotEvent } from './telemetry-stream.js';

/** IoT, the device side: devices with MQTT credentials (the broker on the `mqtt` role builds on it). */
export const iotArea = defineArea({
  name: 'iot',
  needs: [],
  migrations: iotMigrations,
  async setup(kernel) {
    const stream = new TelemetryStream((err) => kernel.log.error({ err }, 'iot stream listener failed'));
    const iot = new IotService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      {
        host: () => new URL(kernel.baseUrl()).hostname,
        port: (): number => broker.port(),
      },
      stream,
    );
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
    return {
      service: iot,
      routes: iotRoutes(iot, new IotGroups(kernel.store, kernel.clock, kernel.limits, kernel.identity)),
      servers: [broker],
    };
  },
});
