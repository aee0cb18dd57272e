import { randomUUID } from 'node:crypto';
import type { JobQueue } from '../../../kernel/jobs/queue.js';

export interface VoiceCall {
  /** Our reference for the call (the session id); comes back with the outcome. */
  reference: string;
  to: string;
  callerId: string;
  locale: string;
  /** What the call says, sentence by sentence (the code is read twice). */
  script: string[];
}

export type CallOutcome = 'answered' | 'no_answer' | 'busy';

export interface CallReport {
  reference: string;
  callId: string;
  outcome: CallOutcome;
  /** Billable seconds of an answered call; 0 otherwise. */
  durationSeconds: number;
}

/**
 * Places text-to-speech calls. Placing returns at once with the call's id; how the call went
 * comes later through the outcome listener, as telephony APIs report it with status callbacks.
 */
export interface VoiceDriver {
  readonly name: string;
  readonly simulated: boolean;
  place(call: VoiceCall): Promise<{ callId: string }>;
  onOutcome(listener: (report: CallReport) => Promise<void>): void;
}

export interface SimulatedCallRecord extends VoiceCall {
  callId: string;
  outcome: CallOutcome;
  placedAt: number;
}

/** Timings of the simulated network, on the kernel clock. */
export const SIMULATED_CALL = {
  /** A busy line answers with a busy tone almost at once. */
  busySeconds: 2,
  /** Ring-out before a call counts as unanswered, as carriers time out. */
  ringOutSeconds: 30,
  /** Rings before the callee picks up. */
  answerAfterSeconds: 4,
  /** Speech rate the reading's length is estimated from. */
  wordsPerSecond: 2.5,
};

const OUTCOME_JOB = 'verify.voice.simulated-outcome';
const KEEP = 1000;

/**
 * Places no call. Numbers listed as busy or unanswered behave like that; every other number
 * picks up and hears the script. The outcome arrives as a job on the clock after the simulated
 * ring (and reading) time, so `t.advance` moves calls on. The last 1000 scripts are kept in
 * memory, as the handset would have heard them, for developers and tests; the job carries no code.
 */
export class SimulatedVoiceDriver implements VoiceDriver {
  readonly name = 'simulated';
  readonly simulated = true;
  private readonly log: SimulatedCallRecord[] = [];
  private listener: (report: CallReport) => Promise<void> = async () => {};

  constructor(
    private readonly jobs: JobQueue,
    private readonly numbers: { noAnswer: readonly string[]; busy: readonly string[] },
    private readonly now: () => number,
  ) {
    jobs.register<CallReport>(OUTCOME_JOB, { run: (report) => this.listener(report), maxAttempts: 5 });
  }

  onOutcome(listener: (report: CallReport) => Promise<void>): void {
    this.listener = listener;
  }

  async place(call: VoiceCall): Promise<{ callId: string }> {
    const callId = `call_${randomUUID()}`;
    const outcome: CallOutcome = this.numbers.busy.includes(call.to)
      ? 'busy'
      : this.numbers.noAnswer.includes(call.to)
        ? 'no_answer'
        : 'answered';
    const words = call.script.join(' ').split(/\s+/).length;
    const durationSeconds = outcome === 'answered' ? Math.ceil(words / SIMULATED_CALL.wordsPerSecond) : 0;
    const delaySeconds =
      outcome === 'busy'
        ? SIMULATED_CALL.busySeconds
        : outcome === 'no_answer'
          ? SIMULATED_CALL.ringOutSeconds
          : SIMULATED_CALL.answerAfterSeconds + durationSeconds;
    const report: CallReport = { reference: call.reference, callId, outcome, durationSeconds };
    await this.jobs.enqueue(OUTCOME_JOB, report, { delaySeconds });
    this.log.push({ ...call, callId, outcome, placedAt: this.now() });
    if (this.log.length > KEEP) this.log.splice(0, this.log.length - KEEP);
    return { callId };
  }

  /** Forgets the call log (emulator reset). */
  clear(): void {
    this.log.length = 0;
  }

  /** Every call in the log, oldest first. */
  calls(): readonly SimulatedCallRecord[] {
    return this.log;
  }

  /** Calls placed to `to`, oldest first. */
  callsTo(to: string): SimulatedCallRecord[] {
    return this.log.filter((c) => c.to === to);
  }
}
