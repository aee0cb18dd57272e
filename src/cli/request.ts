import { readFileSync } from 'node:fs';
import { type CliContext, CliError } from './context.js';
import type { Operation } from './operations.js';

export interface CallInput {
  /** Values for the path parameters in order, unless named by `positionalNames`. */
  positional: string[];
  positionalNames?: string[];
  /** `--name value` pairs (dashes in names read as underscores). */
  flags: [string, string][];
  /** `--body JSON`, `--body @file` or `--body -` (standard input). */
  body?: string;
}

/** The URL and request of one operation, its fields placed in the path, the query or the body. */
export function buildRequest(
  ctx: CliContext,
  op: Operation,
  input: CallInput,
): { url: string; init: RequestInit } {
  const path: Record<string, string> = {};
  const query = new URLSearchParams();
  let body: Record<string, unknown> | undefined = input.body === undefined ? undefined : readBody(input.body);
  const names = input.positionalNames ?? op.pathParams;
  if (input.positional.length > names.length)
    throw new CliError(`${op.id} takes ${names.length ? names.join(', ') : 'no positional arguments'}`, 2);
  const assign = (rawName: string, value: string) => {
    const name = rawName.replace(/-/g, '_');
    if (op.pathParams.includes(name)) path[name] = value;
    else if (op.queryParams.has(name)) query.append(name, value);
    else if (op.body && (op.body.has(name) || op.body.size === 0)) {
      body ??= {};
      body[name] = typed(name, value, op.body.get(name)?.type);
    } else
      throw new CliError(
        `${op.id} has no field --${rawName} (it takes: ${[...op.pathParams, ...op.queryParams.keys(), ...(op.body?.keys() ?? [])].map((n) => `--${n}`).join(' ') || 'nothing'}; --help describes each)`,
        2,
      );
  };
  for (const [i, value] of input.positional.entries()) assign(names[i]!, value);
  for (const [name, value] of input.flags) assign(name, value);
  const missing = op.pathParams.filter((p) => path[p] === undefined);
  if (missing.length) throw new CliError(`${op.id} needs ${missing.map((m) => `<${m}>`).join(' ')}`, 2);
  if (op.body && input.body === undefined) {
    const absent = [...op.body].filter(([name, f]) => f.required && body?.[name] === undefined);
    if (absent.length)
      throw new CliError(
        `${op.id} needs ${absent.map(([name, f]) => `--${name} (${f.type ?? 'value'})`).join(', ')}; --help describes each field`,
        2,
      );
  }
  if (op.body) body ??= {};

  const url = `${ctx.url}${op.path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(path[p]!))}${query.size ? `?${query}` : ''}`;
  const headers: Record<string, string> = {};
  if (op.admin) {
    if (!ctx.operatorToken) throw new CliError(`${op.id} is an operator operation: give --operator-token`, 2);
    headers['authorization'] = `Bearer ${ctx.operatorToken}`;
  } else if (ctx.token) headers['x-api-key'] = ctx.token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return {
    url,
    init: { method: op.method, headers, body: body === undefined ? undefined : JSON.stringify(body) },
  };
}

/** Sends one operation; resolves to the parsed answer, or throws CliError with the server's message. */
export async function callOperation(ctx: CliContext, op: Operation, input: CallInput): Promise<unknown> {
  const { url, init } = buildRequest(ctx, op, input);
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (err) {
    throw new CliError(`cannot reach Fjord at ${ctx.url}: ${(err as Error).message}`);
  }
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  if (!res.ok) throw refusal(res, parsed, text);
  return res.status === 204 ? null : parsed;
}

/** The CliError for a refused request: status, the error code and the server's message. */
export function refusal(res: Response, parsed: unknown, text: string): CliError {
  {
    const e = parsed as {
      detail?: { code?: string; message?: string };
      error?: { code?: string; message?: string };
    };
    const d = e?.detail ?? e?.error;
    return new CliError(
      `${res.status} ${d?.code ?? ''}: ${d?.message ?? (text || res.statusText)}`.replace(' :', ':'),
    );
  }
}

function readBody(spec: string): Record<string, unknown> {
  const text =
    spec === '-'
      ? readFileSync(0, 'utf8')
      : spec.startsWith('@')
        ? readFileSync(spec.slice(1), 'utf8')
        : spec;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new CliError('--body is not valid JSON', 2);
  }
}

/** A flag's text as the body field's JSON type wants it. */
function typed(name: string, value: string, type: string | undefined): unknown {
  switch (type) {
    case 'integer':
    case 'number': {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new CliError(`--${name} takes a number`, 2);
      return n;
    }
    case 'boolean':
      if (value !== 'true' && value !== 'false') throw new CliError(`--${name} takes true or false`, 2);
      return value === 'true';
    case 'array':
      return value.startsWith('[') ? parseJson(name, value) : value.split(',').map((v) => v.trim());
    case 'object':
      return parseJson(name, value);
    default:
      return value;
  }
}

function parseJson(name: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new CliError(`--${name} takes JSON`, 2);
  }
}
