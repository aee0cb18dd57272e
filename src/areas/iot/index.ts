import { defineArea } from '../wiring.js';
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
        port: () => kernel.config.ports.mqtt,
      },
      stream,
    );
    kernel.registry.addCredentialKind({
      name: 'mqtt-device',
      area: 'iot',
      doc: 'A device’s MQTT username and password, presented to the broker (role `mqtt`)',
    });
    return { service: iot, routes: iotRoutes(iot) };
  },
});
