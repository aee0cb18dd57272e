import { EventEmitter } from 'node:events';

/**
 * The seam between the device side of IoT and what reacts to it (rules, alarms, notifications):
 * each accepted telemetry point and each connect/disconnect becomes one typed event here, in the
 * process that received it. Subscribers only listen and read devices through IotService; they
 * never write the device side's tables.
 */
export type IotEvent =
  | {
      kind: 'telemetry';
      customer_id: string;
      device_id: string;
      key: string;
      /** Numbers, booleans and strings as the device sent them, after datapoint checks. */
      value: number | boolean | string;
      /** Epoch milliseconds of the point (the device's `ts`, or the time it arrived). */
      ts: number;
    }
  | {
      /** A whole accepted message, after its points: rules judge a message's values together. */
      kind: 'message';
      customer_id: string;
      device_id: string;
      /** The message's accepted values by key (the newest when a key repeats). */
      values: Record<string, number | boolean | string>;
      /** Fjord's time of arrival. */
      at: number;
    }
  | { kind: 'connected'; customer_id: string; device_id: string; at: number }
  | { kind: 'disconnected'; customer_id: string; device_id: string; at: number; reason: string }
  | { kind: 'deleted'; customer_id: string; device_id: string; at: number };

export type IotListener = (event: IotEvent) => void;

/** An in-process stream; a listener that throws is isolated from the others and from the broker. */
export class TelemetryStream {
  private readonly emitter = new EventEmitter();
  private readonly listeners = new Set<IotListener>();

  constructor(private readonly onListenerError: (err: unknown) => void = () => {}) {
    this.emitter.setMaxListeners(0);
  }

  subscribe(listener: IotListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  emit(event: IotEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }
}
