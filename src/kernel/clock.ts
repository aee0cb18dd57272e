/**
 * The one clock all code reads. In emulator mode it can be moved forward, so TTLs, schedules
 * and provisioning finish on demand; it never moves backward.
 */
export interface Clock {
  now(): Date;
  nowMs(): number;
}

export class SystemClock implements Clock {
  protected offsetMs = 0;
  now(): Date {
    return new Date(this.nowMs());
  }
  nowMs(): number {
    return Date.now() + this.offsetMs;
  }
}

export class AdjustableClock extends SystemClock {
  advance(seconds: number): void {
    if (!(seconds >= 0) || !Number.isFinite(seconds)) throw new RangeError('the clock only moves forward');
    // Whole milliseconds: every stored time is an integer epoch-ms (bigint on PostgreSQL).
    this.offsetMs += Math.round(seconds * 1000);
  }
  /** Adopts an offset saved by this or another process; never moves the clock backward. */
  adoptOffsetMs(ms: number): void {
    if (Number.isFinite(ms) && ms > this.offsetMs) this.offsetMs = Math.round(ms);
  }
  /** Back to real time: only an emulator reset does this, after it has erased every stored time. */
  rewindToZero(): void {
    this.offsetMs = 0;
  }
  get offsetMilliseconds(): number {
    return this.offsetMs;
  }
  get offsetSeconds(): number {
    return this.offsetMs / 1000;
  }
}

export const isoOf = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
