import type { CliContext } from '../context.js';
import type { Operation } from '../operations.js';
import type { OutputFormat } from '../output.js';
import type { CallInput } from '../request.js';

/** What an action gets: where Fjord is, its operations, the command line, and where to print. */
export interface ActionContext {
  ctx: CliContext;
  ops: Map<string, Operation>;
  /** Calls an operation by id (throws CliError when this Fjord does not serve it or refuses). */
  call(opId: string, input: Partial<CallInput>): Promise<unknown>;
  /** `--field value` flags the action did not consume itself. */
  flags: [string, string][];
  /** Switches given on the command line (`--rotate`, `--follow`). */
  switches: Set<string>;
  /** Words after `--`, handed to the program the action starts (psql, ssh). */
  passthrough: string[];
  output: OutputFormat;
  out(s: string): void;
  err(s: string): void;
}

/**
 * A command that takes more than one call or starts another program. `op` is the operation
 * whose fields its `--help` lists; `switches` are its value-less flags.
 */
export interface Action {
  words: string[];
  args: string[];
  op: string;
  switches?: string[];
  help: string;
  run(a: ActionContext, args: string[]): Promise<number>;
}

/** The value of `--name` (dashes or underscores), removed from the flags the action passes on. */
export function takeFlag(a: ActionContext, name: string): string | undefined {
  const i = a.flags.findIndex(([n]) => n.replace(/-/g, '_') === name);
  if (i < 0) return undefined;
  const [, value] = a.flags[i]!;
  a.flags.splice(i, 1);
  return value;
}
