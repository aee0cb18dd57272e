import { CliError } from './context.js';

/**
 * What `--wait` shows while it polls, on stderr: on a terminal one line rewritten in place
 * (`⠋ provisioning · creating_nodes · 12s`), elsewhere a plain line only when the status (or
 * the detail, such as a cluster's provisioning step) changes — so a log or CI output is not
 * filled with the same status every second.
 */
export class Progress {
  private last = '';
  private frame = 0;
  private readonly started = Date.now();
  private readonly tty: boolean;

  constructor(
    private readonly write: (s: string) => void = (s) => process.stderr.write(s),
    tty: boolean = process.stderr.isTTY === true,
  ) {
    this.tty = tty;
  }

  /** Reports the state seen at one poll. */
  update(status: string, detail?: string | null) {
    const state = detail ? `${status} · ${detail}` : status;
    if (this.tty) {
      const spinner = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏'[this.frame++ % 10];
      this.write(`\r\x1b[K${spinner} ${state} · ${elapsed(Date.now() - this.started)}`);
    } else if (state !== this.last) {
      this.write(`${state}\n`);
    }
    this.last = state;
  }

  /** Ends the progress line (a terminal gets the final state and the time it took). */
  done(status: string) {
    if (this.tty) this.write(`\r\x1b[K${status} after ${elapsed(Date.now() - this.started)}\n`);
    else if (status !== this.last) this.write(`${status}\n`);
  }
}

const elapsed = (ms: number) => {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
};

/**
 * Polls `read` (every `intervalMs`) until `isDone` says the answer is final, reporting each
 * answer's status on `progress`; gives up after `timeoutMs`.
 */
export async function pollUntil<T>(opts: {
  first: T;
  read: () => Promise<T>;
  status: (answer: T) => string | undefined;
  detail?: (answer: T) => string | null | undefined;
  isDone: (status: string | undefined) => boolean;
  progress: Progress;
  intervalMs?: number;
  timeoutMs?: number;
}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30 * 60_000);
  for (let answer = opts.first; ; ) {
    const status = opts.status(answer);
    if (opts.isDone(status)) {
      opts.progress.done(status ?? 'done');
      return answer;
    }
    opts.progress.update(status ?? 'waiting', opts.detail?.(answer));
    if (Date.now() > deadline)
      throw new CliError(
        `still ${status} after ${Math.round((opts.timeoutMs ?? 1_800_000) / 60_000)} minutes`,
      );
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 1000));
    answer = await opts.read();
  }
}
