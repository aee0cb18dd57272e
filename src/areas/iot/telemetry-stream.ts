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

/** What a listener asks of the stream (by default: every event but the per-point ones). */
export interface ListenOptions {
  /** Also one `telemetry` event per accepted point (the live view of a device). */
  points?: boolean;
  /**
   * Whether the listener wants a customer's `message` events, asked before one is built: the
   * alarm engine, for instance, wants none from a customer it knows has no rules.
   */
  wantsMessagesOf?: (customerId: string) => boolean;
}

/**
 * An in-process stream; a listener that throws is isolated from the others and from the broker.
 *
 * Events cost nothing nobody wants: the one-event-per-point `telemetry` kind goes only to the
 * listeners that ask for it (a message's points are also in its `message` event), and a
 * `message` event is built only when some listener wants the customer's. Built for nobody, the
 * two were a tenth of the garbage a telemetry load made.
 */
export class TelemetryStream {
  private readonly listeners = new Map<IotListener, ListenOptions>();
  private readonly pointListeners = new Set<IotListener>();

  constructor(private readonly onListenerError: (err: unknown) => void = () => {}) {}

  subscribe(listener: IotListener, options: ListenOptions = {}): () => void {
    this.listeners.set(listener, options);
    if (options.points) this.pointListeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      this.pointListeners.delete(listener);
    };
  }

  /** Whether anyone wants `telemetry` events, one per point. */
  get wantsPoints(): boolean {
    return this.pointListeners.size > 0;
  }

  /** Whether anyone wants the customer's `message` events. */
  wantsMessagesOf(customerId: string): boolean {
    for (const { wantsMessagesOf } of this.listeners.values())
      if (!wantsMessagesOf || wantsMessagesOf(customerId)) return true;
    return false;
  }

  emit(event: IotEvent): void {
    for (const listener of event.kind === 'telemetry' ? this.pointListeners : this.listeners.keys()) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }
}
