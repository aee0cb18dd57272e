import { randomString } from '../../../kernel/ids.js';
import type { JobQueue } from '../../../kernel/jobs/queue.js';
import { assertDestination, type DriverSink, type OutboundSms, type SmsDriver } from './driver.js';

export const SANDBOX_RECEIPT_JOB = 'sms.sandbox.receipt';

export interface SandboxOptions {
  /** Seconds on Fjord's clock between submission and the delivery receipt. */
  deliverySeconds: number;
  /** Numbers whose messages fail (`UNDELIV`), as a real network reports an unreachable phone. */
  failNumbers: ReadonlySet<string>;
}

/**
 * The built-in SMSC: accepts every submission, and after `deliverySeconds` on the clock reports
 * each part delivered — or failed for the configured numbers. Nothing leaves the machine, so it
 * registers as simulated. Inbound messages come from the operator API.
 */
export class SandboxDriver implements SmsDriver {
  readonly name = 'sandbox';
  readonly simulated = true;
  readonly detail: string;

  constructor(
    private readonly jobs: JobQueue,
    private readonly sink: DriverSink,
    private readonly opts: SandboxOptions,
  ) {
    this.detail = `built-in SMSC: delivered after ${opts.deliverySeconds}s; ${opts.failNumbers.size} failing number(s)`;
    jobs.register<{ ids: string[]; to: string }>(SANDBOX_RECEIPT_JOB, {
      run: async ({ ids, to }) => {
        const failed = this.opts.failNumbers.has(to);
        for (const smscMessageId of ids) {
          await this.sink.receipt({
            smscMessageId,
            delivered: !failed,
            error: failed ? 'UNDELIV err:001 (sandbox: configured to fail)' : null,
          });
        }
      },
    });
  }

  async submit(sms: OutboundSms): Promise<string[]> {
    assertDestination(sms.to);
    const ids = sms.parts.map(() => `sbx-${randomString(20)}`);
    await this.jobs.enqueue(
      SANDBOX_RECEIPT_JOB,
      { ids, to: sms.to },
      { delaySeconds: this.opts.deliverySeconds },
    );
    return ids;
  }

  async ready(): Promise<void> {}

  async start(): Promise<void> {}
  async stop(): Promise<void> {}
}
