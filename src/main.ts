import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pkg from '../package.json' with { type: 'json' };
import { createCustomerWithPat } from './app/admin-routes.js';
import { banner } from './app/banner.js';
import { type DevCredentials, devCredentialsPath } from './app/dev-credentials.js';
import { ALL_MIGRATIONS, Fjord } from './app/fjord.js';
import { buildKernel } from './app/kernel-factory.js';
import { generateOpenApiDocument, serialiseOpenApi } from './app/openapi-document.js';
import { CLI_USAGE, isCliCommand, runCli } from './cli/index.js';
import { type Config, ConfigError, loadConfig, type Role } from './config/config.js';
import { VARIABLES } from './config/variables.js';
import { AppError } from './kernel/errors.js';
import { isPlan } from './kernel/limits/quotas.js';
import { createLogger } from './kernel/log.js';
import { openStore } from './kernel/store/store.js';

const USAGE = `usage: fjord <command>   (fjord --version, fjord <command> --help)

  start [--roles api,s3,dns,mqtt,rtmp,worker]   run Fjord (all roles by default)
  migrate                                        apply database migrations and exit
  admin customer create --email E [--type private|business]
                        [--first-name F] [--last-name L] [--company C] [--plan P]
  admin customer list
  admin customer plan (--id ID | --email E) --plan free|basic|pro|enterprise
  gpu-worker --url URL --token fjw_… [--engines reference-image,reference-video,reference-speech]
                                                 serve GPU jobs of the reference engines
  openapi                                        print the OpenAPI document
  emulator inbox [--to R] [--kind email|voice] [--url U]
                                                 e-mails and calls the simulated drivers
                                                 delivered, newest first (a running Fjord's)
`;

function config(): Config {
  try {
    return loadConfig(process.env, (msg) => process.stderr.write(`warning: ${msg}\n`));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`fjord: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

async function start(args: string[]) {
  const t0 = performance.now();
  const { values } = parseArgs({ args, options: { roles: { type: 'string' } } });
  const cfg = config();
  const roles = values.roles ? (values.roles.split(',').map((r) => r.trim()) as Role[]) : cfg.roles;
  const bad = roles.filter((r) => !(VARIABLES.FJORD_ROLES.values as readonly string[]).includes(r));
  if (bad.length) {
    process.stderr.write(`fjord: unknown role(s) ${bad.join(', ')}\n`);
    process.exit(2);
  }
  let fjord: Fjord;
  try {
    fjord = await Fjord.create({ config: cfg });
    await fjord.start(roles);
  } catch (err) {
    // Start-up problems an operator can fix (a bad seed file, a port in use, an unreachable
    // store) are one clear line, not a stack trace.
    process.stderr.write(`fjord: cannot start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  process.stdout.write(banner(fjord, roles, Math.round(performance.now() - t0)) + '\n');
  // bin/run-bundle.js keeps the code the start compiled for the next start.
  process.emit('fjord:ready' as 'beforeExit', 0);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    fjord.kernel.log.info({ signal }, 'stopping');
    await fjord.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

async function migrate() {
  const cfg = config();
  const store = await openStore(cfg);
  const applied = await store.migrate(ALL_MIGRATIONS());
  process.stdout.write(`${JSON.stringify({ applied })}\n`);
  await store.close();
}

async function admin(args: string[]) {
  const [noun, verb, ...rest] = args;
  if (noun !== 'customer' || !verb) throw new UsageError();
  const cfg = config();
  const store = await openStore(cfg);
  await store.migrate(ALL_MIGRATIONS());
  const kernel = buildKernel({
    config: { ...cfg, devCredentials: false },
    store,
    log: createLogger('silent'),
  });
  try {
    if (verb === 'create') {
      const { values } = parseArgs({
        args: rest,
        options: {
          email: { type: 'string' },
          type: { type: 'string', default: 'private' },
          'first-name': { type: 'string' },
          'last-name': { type: 'string' },
          company: { type: 'string' },
          plan: { type: 'string', default: 'free' },
        },
      });
      if (!values.email || !/^[^@\s]+@[^@\s]+$/.test(values.email))
        throw new UsageError('--email is required');
      if (values.type !== 'private' && values.type !== 'business')
        throw new UsageError('--type is private or business');
      if (!['free', 'basic', 'pro', 'enterprise'].includes(values.plan ?? '')) {
        throw new UsageError('--plan is free, basic, pro or enterprise');
      }
      const out = await createCustomerWithPat(kernel, {
        email: values.email,
        customerType: values.type,
        firstName: values['first-name'] ?? null,
        lastName: values['last-name'] ?? null,
        company: values.company ?? null,
        plan: values.plan,
      });
      process.stdout.write(`${JSON.stringify(out)}\n`);
    } else if (verb === 'plan') {
      const { values } = parseArgs({
        args: rest,
        options: { id: { type: 'string' }, email: { type: 'string' }, plan: { type: 'string' } },
      });
      if (!isPlan(values.plan)) throw new UsageError('--plan is free, basic, pro or enterprise');
      const customer = values.id
        ? await kernel.identity.getCustomer(values.id)
        : values.email
          ? await kernel.identity.findCustomerByEmail(values.email)
          : undefined;
      if (values.id === undefined && values.email === undefined)
        throw new UsageError('name the customer with --id or --email');
      if (!customer) {
        process.stderr.write('fjord admin: no such customer\n');
        process.exitCode = 1;
        return;
      }
      await kernel.identity.setCustomerPlan(customer.id, values.plan);
      process.stdout.write(
        `${JSON.stringify({ customer_id: customer.id, email: customer.email, plan: values.plan })}\n`,
      );
    } else if (verb === 'list') {
      const rows = await kernel.identity.listCustomers(1000, 0);
      process.stdout.write(
        `${JSON.stringify(rows.map((c) => ({ customer_id: c.id, email: c.email, status: c.status, plan: c.plan })))}\n`,
      );
    } else {
      throw new UsageError();
    }
  } finally {
    // disconnect, not quit: a QUIT sent before the connection is up is refused (no offline queue)
    // and the socket then stays open, so the command never exited with FJORD_REDIS_URL set.
    kernel.redis?.disconnect();
    await store.close();
  }
}

async function openapi() {
  process.stdout.write(serialiseOpenApi(await generateOpenApiDocument()));
}

class UsageError extends Error {}

/** `fjord gpu-worker`: the reference worker, against any Fjord whose operator issued a token. */
async function gpuWorker(args: string[]) {
  const { values } = parseArgs({
    args,
    options: { url: { type: 'string' }, token: { type: 'string' }, engines: { type: 'string' } },
  });
  if (!values.url || !values.token) throw new UsageError('gpu-worker needs --url and --token');
  const { runReferenceWorker } = await import('./areas/gpu/reference-worker.js');
  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
  await runReferenceWorker({
    baseUrl: values.url.replace(/\/+$/, ''),
    token: values.token,
    engines: values.engines?.split(',').map((e) => e.trim()),
    signal: stop.signal,
    log: (line) => process.stdout.write(`${line}\n`),
  }).catch((err) => {
    if (!stop.signal.aborted) throw err;
  });
}

/**
 * `fjord emulator inbox`: asks the running Fjord of this data dir (its address and operator token
 * from dev-credentials.json, or --url and FJORD_OPERATOR_TOKEN) and prints one JSON line per
 * message: the simulated drivers keep them in that process's memory.
 */
async function emulatorInbox(args: string[]) {
  const [verb, ...rest] = args;
  if (verb !== 'inbox') throw new UsageError('emulator takes `inbox`');
  const { values } = parseArgs({
    args: rest,
    options: { to: { type: 'string' }, kind: { type: 'string' }, url: { type: 'string' } },
  });
  const cfg = config();
  let url = values.url;
  let token = cfg.operatorToken ?? undefined;
  try {
    const dev = JSON.parse(readFileSync(devCredentialsPath(cfg.dataDir), 'utf8')) as DevCredentials;
    url ??= dev.api_url;
    token ??= dev.operator_token ?? undefined;
  } catch {
    // no development credentials: the environment must name both
  }
  if (!url || !token) throw new UsageError('no running Fjord found: give --url and set FJORD_OPERATOR_TOKEN');
  const query = new URLSearchParams();
  if (values.to) query.set('to', values.to);
  if (values.kind) query.set('kind', values.kind);
  const res = await fetch(`${url}/admin/v1/emulator/inbox?${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const body = (await res.json()) as { messages?: unknown[]; detail?: { message?: string } };
  if (!res.ok)
    throw new AppError('unavailable', 'inbox_failed', body.detail?.message ?? `HTTP ${res.status}`);
  for (const m of body.messages ?? []) process.stdout.write(`${JSON.stringify(m)}\n`);
}

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  // The API commands (bucket, dns, db, … and op) are a client of a running Fjord.
  if (isCliCommand(command)) {
    process.exitCode = await runCli(argv);
    return;
  }
  // Asking for help or the version never does anything else (no migration, no start).
  if (argv.some((a) => a === '--help' || a === '-h') || command === 'help') {
    process.stdout.write(`${USAGE}\n${CLI_USAGE}`);
    return;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`fjord ${pkg.version}\n`);
    return;
  }
  try {
    switch (command) {
      case 'start':
        return await start(rest);
      case 'migrate':
        return await migrate();
      case 'admin':
        return await admin(rest);
      case 'openapi':
        return await openapi();
      case 'gpu-worker':
        return await gpuWorker(rest);
      case 'emulator':
        return await emulatorInbox(rest);
      default:
        throw new UsageError(command ? `unknown command ${command}` : '');
    }
  } catch (err) {
    // parseArgs refuses unknown options and missing values with a TypeError carrying a code.
    const parseError = (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    if (err instanceof UsageError || parseError) {
      const message = (err as Error).message;
      process.stderr.write(`${message ? `fjord: ${message}\n` : ''}${USAGE}\n${CLI_USAGE}`);
      process.exit(2);
    }
    if (err instanceof AppError) {
      process.stderr.write(`fjord: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exit(1);
});
