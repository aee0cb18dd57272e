import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** Where the CLI sends requests, and with which credentials. */
export interface CliContext {
  url: string;
  /** A PAT or service key (X-API-Key). */
  token: string | null;
  /** An operator token (Authorization: Bearer), for /admin/v1 operations. */
  operatorToken: string | null;
  /** Where the context came from, for messages. */
  source: string;
}

/** `fjord login` writes here: `$XDG_CONFIG_HOME/fjord/config.json` (or ~/.config/fjord). */
export const configFile = () =>
  join(process.env['XDG_CONFIG_HOME'] || join(homedir(), '.config'), 'fjord', 'config.json');

/**
 * The first of: `--url`/`--token`/`--operator-token`; FJORD_URL/FJORD_TOKEN/FJORD_OPERATOR_TOKEN;
 * the file `fjord login` wrote; the local emulator's dev-credentials.json in FJORD_DATA_DIR
 * (./.fjord by default) — so against a local `npm start` the CLI needs no setup at all.
 */
export function resolveContext(flags: {
  url?: string;
  token?: string;
  'operator-token'?: string;
}): CliContext {
  const env = process.env;
  if (flags.url || env['FJORD_URL']) {
    return {
      url: trim(flags.url ?? env['FJORD_URL']!),
      token: flags.token ?? env['FJORD_TOKEN'] ?? null,
      operatorToken: flags['operator-token'] ?? env['FJORD_OPERATOR_TOKEN'] ?? null,
      source: flags.url ? '--url' : 'FJORD_URL',
    };
  }
  const saved = readJson(configFile()) as { url?: string; token?: string; operator_token?: string } | null;
  if (saved?.url)
    return {
      url: trim(saved.url),
      token: flags.token ?? saved.token ?? null,
      operatorToken: flags['operator-token'] ?? saved.operator_token ?? null,
      source: configFile(),
    };
  const devFile = join(resolve(env['FJORD_DATA_DIR'] || '.fjord'), 'dev-credentials.json');
  const dev = readJson(devFile) as { api_url?: string; pat?: string; operator_token?: string | null } | null;
  if (dev?.api_url)
    return {
      url: trim(dev.api_url),
      token: flags.token ?? dev.pat ?? null,
      operatorToken: flags['operator-token'] ?? dev.operator_token ?? null,
      source: devFile,
    };
  throw new CliError(
    'no Fjord to talk to: run `fjord login --url URL --token TOKEN`, set FJORD_URL and FJORD_TOKEN, or start a local Fjord (npm start) in this folder',
    2,
  );
}

export function saveLogin(url: string, token: string | undefined, operatorToken: string | undefined) {
  const file = configFile();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(
    file,
    `${JSON.stringify({ url: trim(url), ...(token ? { token } : {}), ...(operatorToken ? { operator_token: operatorToken } : {}) }, null, 2)}\n`,
    { mode: 0o600 },
  );
  return file;
}

export function forgetLogin(): boolean {
  const file = configFile();
  if (!existsSync(file)) return false;
  rmSync(file);
  return true;
}

/** A failure the CLI reports in one line, with the exit code scripts rely on (1: refused, 2: usage). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

const trim = (url: string) => url.replace(/\/+$/, '');

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}
