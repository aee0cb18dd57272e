import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every error code Fjord can send is documented, and every documented code exists — checked both
 * ways, as Fastify checks its error catalogue. A code is what an `AppError` carries (its second
 * argument), or what one of the few helpers that pass a code on to `AppError` is given (HELPERS).
 */
const ROOT = join(import.meta.dirname, '..', '..');

function files(dir: string, ext: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path, ext);
    return path.endsWith(ext) && !path.endsWith('.test.ts') && !path.includes('/testing/') ? [path] : [];
  });
}

/** The text of each top-level argument of the call whose `(` is at `open`, or null if unbalanced. */
function callArguments(text: string, open: number): string[] | null {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"' || c === '`') {
      // Skip the string; a template's ${…} may hold parentheses and strings of its own.
      for (i++; i < text.length && text[i] !== c; i++) {
        if (text[i] === '\\') i++;
        else if (c === '`' && text[i] === '$' && text[i + 1] === '{') {
          let inner = 1;
          for (i += 2; i < text.length && inner > 0; i++) {
            if (text[i] === '{') inner++;
            else if (text[i] === '}') inner--;
          }
          i--;
        }
      }
    } else if (c === '(' || c === '[' || c === '{') {
      depth++;
    } else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) {
        const last = text.slice(start, i).trim();
        if (last) args.push(last);
        return args;
      }
    } else if (c === ',' && depth === 1) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  return null;
}

/**
 * Calls that carry a code, and which argument it is: `new AppError(kind, code, …)` and the helpers
 * that hand a code on to it. A new helper of that kind fails the last test below until it is added.
 */
const HELPERS: { call: RegExp; arg: number; file?: string }[] = [
  { call: /\bnew AppError\(/g, arg: 1 },
  { call: /\bkernelErrors\.(?:badRequest|conflict)\(/g, arg: 0 }, // src/kernel/errors.ts
  { call: /(?<![\w.])e\(/g, arg: 1, file: 'src/areas/ip/errors.ts' },
  { call: /(?<![\w.])invalid\(/g, arg: 0, file: 'src/areas/sms/errors.ts' },
  { call: /\bdnsErrors\.invalid\(/g, arg: 2 }, // src/areas/dns/record-changes.ts (default invalid_record)
  { call: /\bdnsErrors\.conflict\(/g, arg: 1 },
];
/** `new AppError` calls whose code is a parameter of the helper they sit in (HELPERS finds the calls). */
const PASSING_ON = [
  "new AppError('bad_request', code,",
  "new AppError('conflict', code,",
  'new AppError(kind, code,',
  "new AppError('invalid', code,",
  'new AppError(err.kind, err.code,',
  "new AppError('invalid', validationCode,", // src/kernel/http/errors-to-http.ts: a route's `validationCode` // src/areas/dns/zone-import.ts: the same error, with the line named
];

const sources = files(join(ROOT, 'src'), '.ts').map((path) => ({ path, text: readFileSync(path, 'utf8') }));

/** Every code in src/, with a file that sends it. Template codes keep their `${…}` part. */
function codesInSources(): Map<string, string> {
  const codes = new Map<string, string>();
  for (const { path, text } of sources) {
    for (const { call, arg, file } of HELPERS) {
      if (file && !path.endsWith(file)) continue;
      for (const m of text.matchAll(call)) {
        const args = callArguments(text, m.index + m[0].length - 1);
        const code = args?.[arg];
        const literal = code && /^(['"`])([^'"`]+)\1$/.exec(code);
        if (literal) codes.set(literal[2]!, path.slice(ROOT.length + 1));
      }
    }
  }
  codes.set('invalid_record', 'src/areas/dns/record-changes.ts'); // dnsErrors.invalid's default
  // A route's own code for schema violations (`validationCode` on its definition).
  for (const { path, text } of sources)
    for (const m of text.matchAll(/\bvalidationCode:\s*'([a-z_]+)'/g))
      codes.set(m[1]!, path.slice(ROOT.length + 1));
  return codes;
}

const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)]
  .filter((f) => f.endsWith('.md'))
  .map((f) => ({ file: f, text: readFileSync(join(ROOT, f), 'utf8') }));

describe('error codes', () => {
  const codes = codesInSources();

  it('finds the codes (the reading of src/ works)', () => {
    expect(codes.size).toBeGreaterThan(200);
    expect(codes.get('model_not_found')).toBe('src/areas/llm/errors.ts');
    expect(codes.has('invalid_ip')).toBe(true); // through the IP area's helper
    expect(codes.has('no_recipients')).toBe(true); // through the SMS area's helper
    expect(codes.has('cname_conflict')).toBe(true); // through dnsErrors
  });

  it('every code Fjord can send is in docs/, written as `code`', () => {
    const all = docs.map((d) => d.text).join('\n');
    const missing = [...codes]
      .filter(([code]) => {
        // A code made from a template (`event_${status}`) counts when any of its forms is written
        // out (`event_live`), or the template itself (`visibility_{mode}`).
        const form = code
          .split(/\$\{[^}]*\}/)
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('(?:[a-z_]+|\\{\\w+\\})');
        return !new RegExp(`\`${form}\``).test(all);
      })
      .map(([code, path]) => `${code} (${path})`);
    expect(missing, 'document these on their area’s page').toEqual([]);
  });

  it('every code documented with its status (`409 `code``, or in a status table) exists', () => {
    const src = sources.map((s) => s.text).join('\n');
    const unknown: string[] = [];
    for (const { file, text } of docs) {
      const documented = [
        ...text.matchAll(/\b[1-5]\d\d\s*(?:\|\s*)?`([A-Za-z][A-Za-z0-9_]*)`/g),
        // Rows of `| Status | `code`, `code` | When |` tables.
        ...[...text.matchAll(/^\|\s*[1-5]\d\d\s*\|([^|\n]*)\|/gm)].flatMap((row) => [
          ...row[1]!.matchAll(/`([A-Za-z][A-Za-z0-9_]*)`/g),
        ]),
      ].map((m) => m[1]!);
      for (const code of new Set(documented))
        if (!new RegExp(`['"\`]${code}['"\`]`).test(src)) unknown.push(`${code} (${file})`);
    }
    expect(unknown, 'documented codes that src/ never sends').toEqual([]);
  });

  it('every AppError whose code is not written out is one of the helpers above', () => {
    const unread: string[] = [];
    for (const { path, text } of sources) {
      for (const m of text.matchAll(/\bnew AppError\(/g)) {
        const args = callArguments(text, m.index + m[0].length - 1);
        if (args?.[1] && /^(['"`])[^'"`]+\1$/.test(args[1])) continue;
        const site = text.slice(m.index, m.index + 60).replace(/\s+/g, ' ');
        if (!PASSING_ON.some((p) => site.startsWith(p))) unread.push(`${path}: ${site}`);
      }
    }
    expect(unread, 'a new helper that passes a code on: add it to HELPERS and PASSING_ON').toEqual([]);
  });
});
