import { toE164 } from '../phone.js';
import type { SmsEncoding } from '../segmentation.js';

/** One message to hand to the network, already split into its parts. */
export interface OutboundSms {
  messageId: string;
  /** E.164 number or alphanumeric sender id. */
  from: string;
  /** E.164 number. */
  to: string;
  encoding: SmsEncoding;
  parts: string[];
}

/** A delivery receipt for one submitted part. */
export interface Receipt {
  smscMessageId: string;
  delivered: boolean;
  /** The network's reason when not delivered (e.g. `UNDELIV err:001`). */
  error: string | null;
}

/** A mobile-originated message. */
export interface InboundSms {
  from: string;
  to: string;
  text: string;
}

/** What a driver reports back: the SMS pipeline implements it. */
export interface DriverSink {
  receipt(r: Receipt): Promise<void>;
  inbound(m: InboundSms): Promise<void>;
}

/** A submission the network refused. `permanent` ones fail the message; others are retried. */
export class SubmitError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'SubmitError';
  }
}

/**
 * Refuses a destination that is not a valid E.164 number, as a permanent failure. The pipeline
 * only accepts valid numbers, but a stored one can change later (a GDPR erasure masks it to
 * `+47********`): such a string must never reach the network.
 */
export function assertDestination(to: string): void {
  if (toE164(to) !== to)
    throw new SubmitError(`destination ${JSON.stringify(to)} is not a valid E.164 number`, true);
}

/** A way to reach the mobile network: a real SMSC over SMPP, or the built-in sandbox. */
export interface SmsDriver {
  readonly name: 'smpp' | 'sandbox';
  readonly simulated: boolean;
  readonly detail: string;
  /** Resolves once the network can take a submission now (throws a transient SubmitError if not). */
  ready(): Promise<void>;
  /** Submits every part; returns the network's id for each, in part order. */
  submit(sms: OutboundSms): Promise<string[]>;
  /** Opens the connection (role worker); receipts and inbound messages arrive while it is open. */
  start(): Promise<void>;
  stop(): Promise<void>;
}
