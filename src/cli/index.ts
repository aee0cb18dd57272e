import type { Action, ActionContext } from './actions/action.js';
import { ACTIONS, findAction } from './actions/index.js';
import { ALIASES, type Alias, findAlias, isAliasRoot, type Wait } from './aliases.js';
import { completionScript } from './completion.js';
import { type CliContext, CliError, forgetLogin, resolveContext, saveLogin } from './context.js';
import { commandHelp } from './help.js';
import { loadOperations, type Operation, shippedOperations } from './operations.js';
import { OUTPUT_FORMATS, type OutputFormat, print } from './output.js';
import { callOperation } from './request.js';
import { Progress, pollUntil } from './wait.js';

/** Every named command, grouped by all its words but the last: `iot device  list create get …`. */
function commandGroups(): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const c of [...ALIASES, ...ACTIONS]) {
    const prefix = c.words.slice(0, -1).join(' ') || c.words[0]!;
    const last = c.words.length > 1 ? c.words.at(-1)! : '';
    if (!groups.has(prefix)) groups.set(prefix, []);
    if (last && !groups.get(prefix)!.includes(last)) groups.get(prefix)!.push(last);
  }
  return [...groups];
}

export const CLI_USAGE = `API commands (against the Fjord of \`fjord login\`, FJORD_URL/FJORD_TOKEN, or the local emulator):

  login --url URL --token TOKEN [--operator-token T]   remember where and how to connect
  logout
  op list [FILTER]                    every operation this Fjord serves
  op <operationId> [ARGS] [--field value…] [--body JSON|@file|-]
${commandGroups()
  .map(([prefix, verbs]) => `  ${prefix.padEnd(20)}${verbs.join(' ')}`.trimEnd())
  .join('\n')}
  completion                          a bash completion script: source <(fjord completion)

  fjord <command> --help              the command's arguments and flags (types, allowed values,
                                      required ones), an example and its answer's fields
  Options: -o table|json|yaml (a table by default) · --wait (create and start commands: until
           the resource is ready, with a progress line) · --url · --token · --operator-token
  Exit codes: 0 done · 1 refused by Fjord (the message says why) · 2 usage
`;

/** True when `command` is one of the API commands (main.ts hands them over). */
export const isCliCommand = (command: string | undefined) =>
  command === 'login' ||
  command === 'logout' ||
  command === 'op' ||
  command === 'completion' ||
  isAliasRoot(command) ||
  ACTIONS.some((a) => a.words[0] === command);

/** Runs an API command; resolves to the process exit code. */
export async function runCli(
  argv: string[],
  out = (s: string) => process.stdout.write(s),
  err = (s: string) => process.stderr.write(s),
): Promise<number> {
  try {
    const { words, flags, options, switches, passthrough } = parse(argv);
    if (options.help) {
      out(await helpFor(words, options));
      return 0;
    }
    if (words[0] === 'login') {
      if (!options.url || (!options.token && !options['operator-token']))
        throw new CliError('login needs --url and --token (or --operator-token)', 2);
      out(`saved to ${saveLogin(options.url, options.token, options['operator-token'])}\n`);
      return 0;
    }
    if (words[0] === 'completion') {
      out(completionScript([...ALIASES, ...ACTIONS].map((c) => c.words)));
      return 0;
    }
    if (words[0] === 'logout') {
      out(forgetLogin() ? 'logged out\n' : 'not logged in\n');
      return 0;
    }
    const ctx = resolveContext(options);
    const ops = await loadOperations(ctx);
    const call = (opId: string, input: Partial<Parameters<typeof callOperation>[2]>) => {
      const op = ops.get(opId);
      if (!op) throw new CliError(`this Fjord does not serve ${opId}`, 1);
      return callOperation(ctx, op, { positional: [], flags: [], ...input });
    };
    const action = findAction(words);
    if (action) {
      const a: ActionContext = {
        ctx,
        ops,
        call,
        flags,
        switches,
        passthrough,
        output: options.output,
        out,
        err,
      };
      const code = await action.run(a, words.slice(action.words.length));
      if (a.flags.length) err(`fjord: ignored ${a.flags.map(([n]) => `--${n}`).join(' ')}\n`);
      return code;
    }
    if (passthrough.length) throw new CliError('only db connect, vps ssh take words after --', 2);
    if (words[0] === 'op') {
      if (words[1] === 'list' || words[1] === undefined) {
        const filter = words[2]?.toLowerCase();
        const rows = [...ops.values()]
          .filter((o) => !filter || `${o.id} ${o.path}`.toLowerCase().includes(filter))
          .map((o) => ({ operation: o.id, method: o.method, path: o.path, summary: o.summary }));
        print(rows, options.output, out);
        return 0;
      }
      const op = ops.get(words[1]);
      if (!op) throw new CliError(`this Fjord has no operation ${words[1]} (fjord op list)`, 2);
      print(
        await callOperation(ctx, op, { positional: words.slice(2), flags, body: options.body }),
        options.output,
        out,
      );
      return 0;
    }
    const alias = findAlias(words);
    if (!alias) throw new CliError(`unknown command: fjord ${words.join(' ')} (fjord --help)`, 2);
    const op = ops.get(alias.op);
    if (!op) throw new CliError(`this Fjord does not serve ${alias.op}`, 1);
    const positional = words.slice(alias.words.length);
    let answer = await callOperation(ctx, op, {
      positional,
      positionalNames: alias.args ?? [],
      flags,
      body: options.body,
    });
    if (options.wait) {
      if (!alias.wait) throw new CliError(`fjord ${alias.words.join(' ')} has nothing to wait for`, 2);
      const given = Object.fromEntries((alias.args ?? []).map((name, i) => [name, positional[i]]));
      answer = await waitFor(ctx, ops, alias.wait, answer, given, err);
    }
    print(answer, options.output, out);
    return 0;
  } catch (e) {
    if (e instanceof CliError) {
      err(`fjord: ${e.message}\n`);
      return e.exitCode;
    }
    throw e;
  }
}

interface Options {
  url?: string;
  token?: string;
  'operator-token'?: string;
  body?: string;
  output: OutputFormat;
  help: boolean;
  wait: boolean;
}

/** Value-less flags: the CLI's own and those of its actions (`--rotate`, `--follow`). */
const SWITCHES = new Set(['wait', ...ACTIONS.flatMap((a) => a.switches ?? [])]);

/** Words, `--field value` pairs, switches, the CLI's own options, and the words after `--`. */
function parse(argv: string[]) {
  const words: string[] = [];
  const flags: [string, string][] = [];
  const switches = new Set<string>();
  const options: Options = { output: 'table', help: false, wait: false };
  const end = argv.indexOf('--');
  const passthrough = end >= 0 ? argv.slice(end + 1) : [];
  const args = end >= 0 ? argv.slice(0, end) : argv;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--help' || arg === '-h') options.help = true;
    else if (arg === '-o' || arg === '--output' || arg.startsWith('--output=')) {
      const value = arg.startsWith('--output=') ? arg.slice(9) : args[++i];
      if (!OUTPUT_FORMATS.includes(value as OutputFormat))
        throw new CliError(`-o takes ${OUTPUT_FORMATS.join(', ')}`, 2);
      options.output = value as OutputFormat;
    } else if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
      if (eq < 0 && SWITCHES.has(name)) {
        if (name === 'wait') options.wait = true;
        else switches.add(name);
        continue;
      }
      const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
      if (value === undefined) throw new CliError(`--${name} needs a value`, 2);
      if (name === 'url' || name === 'token' || name === 'operator-token' || name === 'body')
        options[name] = value;
      else flags.push([name, value]);
    } else words.push(arg);
  }
  return { words, flags, options, switches, passthrough };
}

/**
 * `--help` for the words given: a command's own page (from the OpenAPI document shipped with this
 * `fjord`, or the server's for an operation it does not know), the commands under a group
 * (`fjord iot --help`), or the whole list.
 */
async function helpFor(words: string[], options: Options): Promise<string> {
  const action = findAction(words);
  const alias = action ? undefined : findAlias(words);
  const opId = action?.op ?? alias?.op ?? (words[0] === 'op' ? words[1] : undefined);
  if (opId) {
    const op = await operationForHelp(opId, options);
    if (!op) return `fjord: no operation ${opId} is known here (fjord op list)\n`;
    if (action) return commandHelp(op, { words: action.words, args: action.args, extra: actionHelp(action) });
    if (alias) return commandHelp(op, { words: alias.words, args: alias.args ?? [], alias });
    return commandHelp(op, { words: ['op', op.id] });
  }
  const under = [...ALIASES, ...ACTIONS].filter(
    (c) => words.length && words.every((w, i) => c.words[i] === w),
  );
  if (under.length === 0) return CLI_USAGE;
  const shipped = shippedOperations();
  const rows = under.map((c) => {
    const args = 'run' in c ? c.args : ((c as Alias).args ?? []);
    return [[...c.words, ...args.map((x) => `<${x}>`)].join(' '), shipped?.get(c.op)?.summary ?? ''];
  });
  const width = Math.max(...rows.map(([l]) => l!.length));
  return `${rows.map(([l, s]) => `  fjord ${l!.padEnd(width)}  ${s}`.trimEnd()).join('\n')}\n\nfjord <command> --help describes one.\n`;
}

function actionHelp(action: Action): string {
  const switches = (action.switches ?? []).map((s) => `--${s}`).join(' ');
  return `${action.help}${switches ? `\nSwitches (no value): ${switches}` : ''}\nThe fields below are those of the operation it starts with.`;
}

async function operationForHelp(opId: string, options: Options): Promise<Operation | undefined> {
  const shipped = shippedOperations()?.get(opId);
  if (shipped) return shipped;
  try {
    return (await loadOperations(resolveContext(options))).get(opId);
  } catch {
    return undefined;
  }
}

/** Polls the resource a command answered until its status is final, with a progress line on stderr. */
async function waitFor(
  ctx: CliContext,
  ops: Map<string, Operation>,
  wait: Wait,
  answered: unknown,
  given: Record<string, string | undefined>,
  err: (s: string) => void,
): Promise<unknown> {
  const fields = (answered ?? {}) as Record<string, unknown>;
  const id = (fields[wait.from ?? 'id'] as string | undefined) ?? given[wait.param];
  const read = ops.get(wait.op);
  if (!id || !read) throw new CliError(`cannot wait: the answer names no ${wait.from ?? 'id'}`);
  const names = [wait.param, ...(wait.also ?? []).map(([p]) => p)];
  const values = [
    id,
    ...(wait.also ?? []).map(([p, f]) => (fields[f] as string | undefined) ?? given[p] ?? ''),
  ];
  const readBack = () => callOperation(ctx, read, { positional: values, positionalNames: names, flags: [] });
  // An action (start, stop) answers something other than the resource: read it once first.
  const first = typeof fields['status'] === 'string' ? answered : await readBack();
  return await pollUntil<unknown>({
    first,
    read: readBack,
    status: (a) => (a as { status?: string } | null)?.status,
    detail: wait.detail ? (a) => (a as Record<string, string | null>)[wait.detail!] : undefined,
    isDone: (s) => s !== undefined && wait.until.includes(s),
    progress: new Progress(err),
  });
}
