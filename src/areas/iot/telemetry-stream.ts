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

/**
 * An in-process stream; a listener that throws is isolated from the others and from the broker.
 *
 * The one-event-per-point `telemetry` kind goes only to listeners that ask for it (the live view
 * of a device): a message's points are also in its `message` event, and building an event per
 * point for nobody was a tenth of the garbage a telemetry load made.
 */
export class TelemetryStream {
  private readonly listeners = new Set<IotListener>();
  private readonly pointListeners = new Set<IotListener>();

  constructor(private readonly onListenerError: (err: unknown) => void = () => {}) {}

  /** `points`: also one `telemetry` event per accepted point. */
  subscribe(listener: IotListener, options: { points?: boolean } = {}): () => void {
    this.listeners.add(listener);
    if (options.points) this.pointListeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      this.pointListeners.delete(listener);
    };
  }

  /** Whether anyone listens at all (events need not be built otherwise). */
  get listened(): boolean {
    return this.listeners.size > 0;
  }

  /** Whether anyone wants `telemetry` events, one per point. */
  get wantsPoints(): boolean {
    return this.pointListeners.size > 0;
  }

  emit(event: IotEvent): void {
    for (const listener of event.kind === 'telemetry' ? this.pointListeners : this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }
}
