/**
 * What an area declares to the job queue: a kind of job (how it runs, retries and is told it was
 * abandoned) and how one is enqueued. Apart from the queue so the contract areas write against
 * reads on its own, without the claiming and leasing under it.
 */
import type { Kysely } from 'kysely';

export interface JobContext {
  jobId: string;
  attempt: number;
}

export interface JobKind<P = unknown> {
  run(payload: P, ctx: JobContext): Promise<void>;
  maxAttempts?: number;
  /** Seconds to wait before attempt `attempt + 1`. Default: 5 s doubling, at most an hour. */
  backoffSeconds?: (attempt: number) => number;
  /**
   * Jobs of this kind claimed together may run at the same time (e.g. network round trips that
   * need no order among themselves). Default: one after another, in due order.
   */
  concurrent?: boolean;
  /**
   * Called when a job of this kind is failed because its worker died during the last allowed
   * attempt (its lease ran out): the area's record of the work must not stay "processing".
   */
  abandoned?(payload: P, ctx: JobContext): Promise<void>;
}

export interface EnqueueOptions {
  runAt?: number;
  delaySeconds?: number;
  /** At most one live job per key: a second enqueue with the same key is ignored. */
  uniqueKey?: string;
  maxAttempts?: number;
  /**
   * A transaction to write the job in, so that it commits (or not) with the caller's own rows.
   * The worker is then not woken: call `wake` after the commit.
   */
  // biome-ignore lint/suspicious/noExplicitAny: any area's transaction
  db?: Kysely<any>;
}

export const defaultBackoff = (attempt: number): number => Math.min(3600, 5 * 2 ** (attempt - 1));
