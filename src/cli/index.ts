import { spawn } from 'node:child_process';
import { ALIASES, findAlias, isAliasRoot } from './aliases.js';
import { CliError, forgetLogin, resolveContext, saveLogin } from './context.js';
import { loadOperations } from './operations.js';
import { print } from './output.js';
import { callOperation } from './request.js';

export const CLI_USAGE = `API commands (against the Fjord of \`fjord login\`, FJORD_URL/FJORD_TOKEN, or the local emulator):

  login --url URL --token TOKEN [--operator-token T]   remember where and how to connect
  logout
  op list [FILTER]                    every operation this Fjord serves
  op <operationId> [ARGS] [--field value…] [--body JSON|@file|-]
${ALIASES.map((a) => `  ${[...a.words, ...(a.args ?? []).map((x) => `<${x}>`)].join(' ')}`).join('\n')}
  db connect <db_type> <db_name>      open psql or mariadb with the database's credentials

  completion                          a bash completion script: source <(fjord completion)

  Options: -o json (default: a table) · --wait (create commands: until the resource is ready)
           --url · --token · --operator-token
  Exit codes: 0 done · 1 refused by Fjord (the message says why) · 2 usage
`;

/** True when `command` is one of the API commands (main.ts hands them over). */
export const isCliCommand = (command: string | undefined) =>
  command === 'login' ||
  command === 'logout' ||
  command === 'op' ||
  command === 'completion' ||
  isAliasRoot(command);

/** Runs an API command; resolves to the process exit code. */
export async function runCli(argv: string[], out = (s: string) => process.stdout.write(s)): Promise<number> {
  try {
    const { words, flags, options } = parse(argv);
    if (options.help) {
      out(CLI_USAGE);
      return 0;
    }
    if (words[0] === 'login') {
      if (!options.url || (!options.token && !options['operator-token']))
        throw new CliError('login needs --url and --token (or --operator-token)', 2);
      out(`saved to ${saveLogin(options.url, options.token, options['operator-token'])}\n`);
      return 0;
    }
    if (words[0] === 'completion') {
      out(completionScript());
      return 0;
    }
    if (words[0] === 'logout') {
      out(forgetLogin() ? 'logged out\n' : 'not logged in\n');
      return 0;
    }
    const ctx = resolveContext(options);
    const ops = await loadOperations(ctx);
    if (words[0] === 'db' && words[1] === 'connect') return await connect(ctx, ops, words.slice(2));
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
    let answer = await callOperation(ctx, op, {
      positional: words.slice(alias.words.length),
      positionalNames: alias.args ?? [],
      flags,
      body: options.body,
    });
    if (options.wait && alias.wait) answer = await waitFor(ctx, ops, alias.wait, answer);
    print(answer, options.output, out);
    return 0;
  } catch (err) {
    if (err instanceof CliError) {
      process.stderr.write(`fjord: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

interface Options {
  url?: string;
  token?: string;
  'operator-token'?: string;
  body?: string;
  output: 'table' | 'json';
  help: boolean;
  wait: boolean;
}

/** Words, `--field value` pairs and the CLI's own options. */
function parse(argv: string[]): { words: string[]; flags: [string, string][]; options: Options } {
  const words: string[] = [];
  const flags: [string, string][] = [];
  const options: Options = { output: 'table', help: false, wait: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') options.help = true;
    else if (arg === '--wait') options.wait = true;
    else if (arg === '-o' || arg === '--output') options.output = argv[++i] === 'json' ? 'json' : 'table';
    else if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new CliError(`--${name} needs a value`, 2);
      if (name === 'url' || name === 'token' || name === 'operator-token' || name === 'body')
        options[name] = value;
      else flags.push([name, value]);
    } else words.push(arg);
  }
  return { words, flags, options };
}

/** `fjord db connect`: the database's own client, with its credentials, attached to this terminal. */
async function connect(
  ctx: Parameters<typeof callOperation>[0],
  ops: Awaited<ReturnType<typeof loadOperations>>,
  args: string[],
): Promise<number> {
  const [dbType, dbName] = args;
  if (!dbType || !dbName) throw new CliError('db connect needs <db_type> <db_name>', 2);
  const creds = (await callOperation(ctx, ops.get('getDatabaseCredentials')!, {
    positional: [dbType, dbName],
    flags: [],
  })) as {
    host: string;
    port: number;
    username: string;
    password: string;
    db_name?: string;
    connection_string?: string;
  };
  const [cmd, cmdArgs, env] =
    dbType === 'postgresql'
      ? ['psql', [creds.connection_string ?? ''], {}]
      : [
          'mariadb',
          ['-h', creds.host, '-P', String(creds.port), '-u', creds.username, '--protocol=tcp', dbName],
          { MYSQL_PWD: creds.password },
        ];
  return await new Promise<number>((resolve) => {
    const child = spawn(cmd, cmdArgs as string[], { stdio: 'inherit', env: { ...process.env, ...env } });
    child.on('error', () => {
      process.stderr.write(`fjord: ${cmd} is not installed\n`);
      resolve(1);
    });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

/** Polls the resource a create answered until its status is final (every second, up to 30 minutes). */
async function waitFor(
  ctx: Parameters<typeof callOperation>[0],
  ops: Awaited<ReturnType<typeof loadOperations>>,
  wait: NonNullable<(typeof ALIASES)[number]['wait']>,
  created: unknown,
): Promise<unknown> {
  const id = (created as { id?: string } | null)?.id;
  const read = ops.get(wait.op);
  if (!id || !read) return created;
  const deadline = Date.now() + 30 * 60_000;
  for (let answer = created; ; ) {
    const status = (answer as { status?: string }).status;
    if (status && wait.until.includes(status)) return answer;
    if (Date.now() > deadline) throw new CliError(`still ${status} after 30 minutes`);
    process.stderr.write(`… ${status ?? 'waiting'}\n`);
    await new Promise((r) => setTimeout(r, 1000));
    answer = await callOperation(ctx, read, { positional: [id], positionalNames: [wait.param], flags: [] });
  }
}

/** Bash completion of the command words (`complete -F`), from the same table the CLI runs on. */
function completionScript(): string {
  const words = new Map<string, Set<string>>();
  const add = (prefix: string, next: string) => {
    if (!words.has(prefix)) words.set(prefix, new Set());
    words.get(prefix)!.add(next);
  };
  for (const a of ALIASES)
    for (let i = 0; i < a.words.length; i++) add(a.words.slice(0, i).join(' '), a.words[i]!);
  for (const w of [
    'login',
    'logout',
    'op',
    'completion',
    'start',
    'migrate',
    'admin',
    'openapi',
    'emulator',
    'gpu-worker',
  ])
    add('', w);
  add('db', 'connect');
  add('op', 'list');
  const cases = [...words]
    .map(([prefix, next]) => `    "${prefix}") words="${[...next].sort().join(' ')}" ;;`)
    .join('\n');
  return `# bash completion for fjord: source <(fjord completion)
_fjord() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prefix="\${COMP_WORDS[*]:1:COMP_CWORD-1}" words=""
  case "$prefix" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _fjord fjord
`;
}
