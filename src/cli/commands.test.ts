// The named commands against the committed OpenAPI document: each names an operation that
// exists, with positional arguments it really has, and its --help lists every field.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACTIONS } from './actions/index.js';
import { ALIASES, findAlias } from './aliases.js';
import { commandHelp, exampleCommand } from './help.js';
import { type OpenApiDocument, operationsOf } from './operations.js';

const doc = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', '..', 'openapi.json'), 'utf8'),
) as OpenApiDocument;
const ops = operationsOf(doc);

describe('the named commands', () => {
  it('each names an operation of the API, with arguments that are its parameters or body fields', () => {
    for (const c of [...ALIASES, ...ACTIONS]) {
      const op = ops.get(c.op);
      expect(op, `${c.words.join(' ')} → ${c.op}`).toBeDefined();
      if ('run' in c) continue;
      for (const arg of c.args ?? op!.pathParams)
        expect(op!.pathParams.includes(arg) || op!.body?.has(arg), `${c.words.join(' ')} <${arg}>`).toBe(
          true,
        );
      // Every path parameter is a positional argument, so no command needs a flag for its resource.
      for (const p of op!.pathParams) expect(c.args ?? [], `${c.words.join(' ')} takes <${p}>`).toContain(p);
      if (c.wait) expect(ops.get(c.wait.op), c.wait.op).toBeDefined();
    }
  });

  it('no two commands have the same words, and each is found by its own words', () => {
    const spelled = [...ALIASES, ...ACTIONS].map((c) => c.words.join(' '));
    expect(new Set(spelled).size).toBe(spelled.length);
    for (const a of ALIASES) expect(findAlias([...a.words, ...(a.args ?? []).map(() => 'x')])).toBe(a);
  });

  it('covers every customer area with list, get, create and delete where the API has them', () => {
    const tagOf = new Map<string, string>();
    for (const methods of Object.values(doc.paths))
      for (const o of Object.values(methods))
        tagOf.set(o.operationId!, (o as { tags?: string[] }).tags?.[0] ?? '');
    const named = new Set([...ALIASES, ...ACTIONS].map((c) => tagOf.get(c.op)));
    for (const tag of [...new Set(tagOf.values())].filter(
      // The console's session routes serve the browser, not a command line.
      (t) => !['System', 'Operator', 'Live events (viewer)', 'Console'].includes(t),
    ))
      expect(named.has(tag), tag).toBe(true);
    const words = new Set([...ALIASES, ...ACTIONS].map((c) => c.words.join(' ')));
    for (const w of [
      'iot device create',
      'iot telemetry',
      'live event create',
      'live event stream-key',
      'speech transcribe',
      'llm chat',
      'chatbot ask',
      'ip lookup',
      'apps deploy',
      'apps logs',
      'vps ssh',
      'vps snapshot',
      'k8s kubeconfig',
      'db connect',
    ])
      expect(words.has(w), w).toBe(true);
  });

  it('--help names every field of the operation with its type, and required ones as required', () => {
    for (const a of ALIASES) {
      const op = ops.get(a.op)!;
      const help = commandHelp(op, { words: a.words, args: a.args ?? [], alias: a });
      for (const [name, f] of op.body ?? []) {
        const line = help
          .split('\n')
          .find((l) => l.trimStart().startsWith(a.args?.includes(name) ? `<${name}>` : `--${name} `));
        expect(line, `${a.words.join(' ')}: ${name}`).toBeDefined();
        if (f.required) expect(line, `${a.words.join(' ')}: ${name}`).toMatch(/\brequired\b/);
      }
      for (const name of op.queryParams.keys()) expect(help, `${a.op}: ${name}`).toContain(`--${name}`);
    }
  });

  it('help for bucket key create says --name; the device create help shows the password field', () => {
    const key = ALIASES.find((a) => a.op === 'createStorageBucketKey')!;
    const help = commandHelp(ops.get(key.op)!, { words: key.words, args: key.args ?? [] });
    expect(help).toMatch(/^ {2}--name\s+string\s+required/m);
    expect(help).toContain('usage: fjord bucket key create <bucket_name>');
    const device = ALIASES.find((a) => a.op === 'iotCreateDevice')!;
    expect(commandHelp(ops.get(device.op)!, { words: device.words, args: device.args ?? [] })).toMatch(
      /mqtt_credentials:\n(.*\n)*\s+password\s+/,
    );
  });

  it('shows enums as the values allowed, and an example that fills the required fields', () => {
    const create = ops.get('createDatabase')!;
    const help = commandHelp(create, { words: ['db', 'create'], args: [] });
    expect(help).toMatch(/--db_type\s+string\s+required\s+.*one of: postgresql, mariadb/);
    expect(exampleCommand(create, ['db', 'create'], [])).toBe('fjord db create --db_type postgresql');
  });
});
