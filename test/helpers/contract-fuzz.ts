import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { SERVICES } from '../../src/kernel/auth/catalogue.js';
import { OPERATOR_TOKEN, TestFjord } from './fjord.js';

/**
 * A contract fuzzer driven by the served OpenAPI document: for every operation, requests valid
 * and hostile (wrong types, missing and extra fields, huge and deeply nested values, bad path and
 * query values, wrong content types and bodies, every credential kind), and for each answer:
 * no 5xx, a status the operation declares, and a JSON body valid against the declared schema.
 * Seeded, so a failure reproduces; the budget is the number of requests.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema objects of any shape
type Schema = any;

export interface FuzzFinding {
  operation: string;
  request: string;
  status: number;
  problem: string;
}

export interface FuzzCredentials {
  pat: string;
  operator: string;
  /** A service key for every service, by name. */
  serviceKeys: Record<string, string>;
}

/** Mulberry32: small, fast, good enough to spread cases. */
export function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  'x'.repeat(5000),
  '\u0000',
  '\ud800',
  '../../etc/passwd',
  "' OR 1=1 --",
  '<script>alert(1)</script>',
  '%00',
  'ÅØÆ-漢字-🙂',
  '-1',
  '1e309',
  'null',
  '{"a":1}',
];
const HOSTILE_PATH = [
  'x',
  '0',
  '-1',
  '00000000-0000-0000-0000-000000000000',
  'a'.repeat(300),
  '%E2%82',
  '%00',
  'ÅØ',
  '%20',
];

interface Operation {
  method: string;
  path: string;
  op: Schema;
}

export class ContractFuzzer {
  private readonly ajv: Ajv.default;
  private readonly validators = new Map<string, ValidateFunction>();
  readonly findings: FuzzFinding[] = [];
  sent = 0;

  constructor(
    private readonly t: TestFjord,
    private readonly doc: Schema,
    private readonly creds: FuzzCredentials,
    private readonly random: () => number,
  ) {
    this.ajv = addFormats.default(
      new Ajv.default({ strict: false, allErrors: false, validateFormats: true }),
    );
    this.ajv.addSchema({ ...doc, $id: 'openapi.json' });
  }

  operations(): Operation[] {
    const out: Operation[] = [];
    for (const [path, item] of Object.entries(this.doc.paths as Record<string, Record<string, Schema>>))
      for (const [method, op] of Object.entries(item))
        if (['get', 'post', 'put', 'patch', 'delete'].includes(method))
          out.push({ method: method.toUpperCase(), path, op });
    return out;
  }

  /** Sends `perOperation` requests to every operation. */
  async run(perOperation: number): Promise<void> {
    for (const operation of this.operations())
      for (let i = 0; i < perOperation; i++) await this.one(operation, i);
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)]!;
  }

  private resolve(schema: Schema): Schema {
    let s = schema;
    for (let i = 0; i < 20 && s?.$ref; i++) {
      const ref = String(s.$ref);
      const path = ref.startsWith('#/') ? ref.slice(2) : ref.replace(/^[^#]*#\/?/, '');
      s = path
        .split('/')
        .reduce((node: Schema, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
      if (!s) {
        // Fastify's shared schemas are referenced by their $id ("Error#").
        const id = ref.replace(/#.*$/, '');
        s = Object.values(this.doc.components?.schemas ?? {}).find(
          (c: Schema) => c.$id === id || c.title === id,
        );
      }
    }
    return s ?? {};
  }

  /** A value the schema accepts (as well as a quick generator can). */
  sample(schema: Schema, depth = 0): unknown {
    const s = this.resolve(schema);
    if (s.const !== undefined) return s.const;
    if (s.enum) return this.pick(s.enum);
    const variants = s.anyOf ?? s.oneOf;
    if (variants) return this.sample(this.pick(variants), depth + 1);
    if (s.allOf) return Object.assign({}, ...s.allOf.map((x: Schema) => this.sample(x, depth + 1)));
    const type = Array.isArray(s.type) ? this.pick(s.type) : s.type;
    switch (type) {
      case 'object': {
        const out: Record<string, unknown> = {};
        if (depth > 6) return out;
        for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Schema>))
          if (s.required?.includes(k) || this.random() < 0.4) out[k] = this.sample(v, depth + 1);
        return out;
      }
      case 'array': {
        if (depth > 6) return [];
        const n = Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? 2, 1 + Math.floor(this.random() * 2)));
        return Array.from({ length: n }, () => this.sample(s.items ?? {}, depth + 1));
      }
      case 'integer':
      case 'number': {
        const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0);
        const max = s.maximum ?? min + 100;
        const v = min + this.random() * (max - min);
        return type === 'integer' ? Math.floor(v) : v;
      }
      case 'boolean':
        return this.random() < 0.5;
      case 'null':
        return null;
      case 'string':
        return this.sampleString(s);
      default:
        return 'x';
    }
  }

  private sampleString(s: Schema): string {
    switch (s.format) {
      case 'email':
        return `fuzz${Math.floor(this.random() * 1e6)}@example.test`;
      case 'date':
        return '2026-11-24';
      case 'date-time':
        return '2026-11-24T12:00:00Z';
      case 'uri':
        return 'https://example.test/x';
      case 'uuid':
        return '00000000-0000-4000-8000-000000000000';
      case 'ipv4':
        return '192.0.2.1';
      case 'ipv6':
        return '2001:db8::1';
    }
    const min = s.minLength ?? 1;
    const base = `fuzz${Math.floor(this.random() * 1e6)}`;
    return base.length >= min ? base.slice(0, s.maxLength ?? 64) : base.padEnd(min, 'x');
  }

  /** A mutation of a valid body that the schema (usually) refuses. */
  private hostileBody(schema: Schema | undefined): { payload: string; contentType: string } {
    const valid = schema ? this.sample(schema) : {};
    const kind = Math.floor(this.random() * 9);
    const json = (v: unknown) => ({ payload: JSON.stringify(v), contentType: 'application/json' });
    const obj =
      valid && typeof valid === 'object' && !Array.isArray(valid) ? (valid as Record<string, unknown>) : {};
    const keys = Object.keys(obj);
    switch (kind) {
      case 0: {
        if (keys.length) delete obj[this.pick(keys)];
        return json(obj);
      }
      case 1: {
        if (keys.length) obj[this.pick(keys)] = this.pick([42, true, null, [], {}, 'x', -1.5]);
        return json(obj);
      }
      case 2:
        return json({ ...obj, unexpected_field: 'x' });
      case 3: {
        if (keys.length) obj[this.pick(keys)] = this.pick(HOSTILE_STRINGS);
        return json(obj);
      }
      case 4: {
        let deep: unknown = 1;
        for (let i = 0; i < 300; i++) deep = [deep];
        return json(keys.length ? { ...obj, [this.pick(keys)]: deep } : deep);
      }
      case 5:
        return { payload: '{"unterminated": ', contentType: 'application/json' };
      case 6:
        return {
          payload: JSON.stringify(obj),
          contentType: this.pick(['text/plain', 'application/xml', 'multipart/form-data; boundary=x']),
        };
      case 7:
        return json(this.pick([[], 'string', 123, null, [obj]]));
      default:
        // A lone surrogate, escaped as JSON allows it.
        return {
          payload: keys.length ? JSON.stringify(obj).replace(/"[^"]*"(?=[,}])/, '"\\ud800"') : '"\\udc00"',
          contentType: 'application/json',
        };
    }
  }

  private credential(op: Schema): Record<string, string> {
    const access = op['x-fjord-access'] ?? {};
    const r = this.random();
    if (r < 0.1) return {};
    if (r < 0.15) return { 'x-api-key': 'fjk_notARealKey0123456789abcdefghij' };
    if (access.kind === 'operator') return { authorization: `Bearer ${this.creds.operator}` };
    if (r < 0.3) {
      const service = this.pick(Object.keys(this.creds.serviceKeys));
      return { 'x-api-key': this.creds.serviceKeys[service]! };
    }
    if (r < 0.35) return { authorization: `Bearer ${this.creds.operator}` };
    return { 'x-api-key': this.creds.pat };
  }

  private async one({ method, path, op }: Operation, round: number): Promise<void> {
    const params = ((op.parameters ?? []) as Schema[]).map((p) => this.resolve(p));
    const hostile = round > 0 && this.random() < 0.8;
    let url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const p = params.find((x) => x.in === 'path' && x.name === name);
      const v =
        hostile && this.random() < 0.3
          ? this.pick(HOSTILE_PATH)
          : String(this.sample(p?.schema ?? { type: 'string' }));
      return /%[0-9A-Fa-f]{0,2}/.test(v) ? v : encodeHostile(v);
    });
    const query = params.filter((p) => p.in === 'query');
    const qs: string[] = [];
    for (const q of query) {
      if (!q.required && this.random() < 0.5) continue;
      const v =
        hostile && this.random() < 0.3 ? this.pick(HOSTILE_STRINGS) : String(this.sample(q.schema ?? {}));
      qs.push(`${encodeURIComponent(q.name)}=${encodeHostile(v)}`);
    }
    if (hostile && this.random() < 0.1) qs.push('unknown_param=1');
    if (qs.length) url += `?${qs.join('&')}`;

    const headers: Record<string, string> = { ...this.credential(op) };
    const bodySchema = op.requestBody?.content?.['application/json']?.schema;
    let payload: string | undefined;
    if (bodySchema || (hostile && this.random() < 0.2)) {
      if (hostile && this.random() < 0.6) {
        const b = this.hostileBody(bodySchema);
        payload = b.payload;
        headers['content-type'] = b.contentType;
      } else {
        payload = JSON.stringify(this.sample(bodySchema ?? { type: 'object' }));
        headers['content-type'] = 'application/json';
      }
    }
    this.sent++;
    const res = await this.t.fjord.http.inject({ method: method as 'GET', url, headers, payload });
    const label = `${method} ${url}${payload !== undefined ? ` ${headers['content-type']} ${payload.slice(0, 120)}` : ''}`;
    const operation = `${method} ${path}`;
    const report = (problem: string): void => {
      this.findings.push({ operation, request: label, status: res.statusCode, problem });
    };
    if (res.statusCode >= 500 && res.statusCode !== 502 && res.statusCode !== 503)
      return report('server error');
    let body: unknown;
    try {
      body = res.body ? JSON.parse(res.body) : null;
    } catch {
      body = undefined;
    }
    // A path the router does not match (a hostile parameter) is not this operation's answer.
    if (
      res.statusCode === 404 &&
      (body as { detail?: { code?: string } })?.detail?.code === 'route_not_found'
    )
      return;
    const declared = op.responses?.[String(res.statusCode)] ?? op.responses?.default;
    if (!declared) return report(`status ${res.statusCode} is not declared`);
    const content = declared.content as Record<string, { schema?: Schema }> | undefined;
    const jsonSchema = content?.['application/json']?.schema;
    if (!jsonSchema) return;
    const type = String(res.headers['content-type'] ?? '');
    if (!type.includes('application/json')) return report(`declared JSON, sent ${type || 'no content type'}`);
    if (body === undefined) return report('body is not JSON');
    // Keyed by the schema's text: most answers share a few schemas (the error body, a `$ref` to
    // the same component), and compiling one validator per operation and status was most of the
    // fuzzer's time. Refs resolve against the same document wherever the schema sits.
    const key = JSON.stringify(jsonSchema);
    let validate = this.validators.get(key);
    if (!validate) {
      const pointer = `#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${res.statusCode in (op.responses ?? {}) ? res.statusCode : 'default'}/content/application~1json/schema`;
      validate = this.ajv.compile({ $ref: `openapi.json${pointer}` });
      this.validators.set(key, validate);
    }
    if (!validate(body))
      report(`body off schema: ${this.ajv.errorsText(validate.errors)} — ${res.body.slice(0, 200)}`);
  }
}

/** encodeURIComponent, except that a lone surrogate becomes its raw (invalid UTF-8) bytes. */
function encodeHostile(v: string): string {
  try {
    return encodeURIComponent(v);
  } catch {
    return v
      .split('')
      .map((ch) => (/[\ud800-\udfff]/.test(ch) ? '%ED%A0%80' : encodeURIComponent(ch)))
      .join('');
  }
}

/** A Fjord with a customer, a service key for every service and a fuzzer over its served document. */
export async function fuzzedFjord(seed: number): Promise<{ t: TestFjord; fuzz: ContractFuzzer }> {
  const t = await TestFjord.create({ FJORD_DATABASE_ENGINES: 'simulated', FJORD_LOG_LEVEL: 'fatal' });
  const c = await t.customer();
  const serviceKeys: Record<string, string> = {};
  for (const s of SERVICES) serviceKeys[s] = (await t.kernel.identity.createServiceKey(c.id, s, null)).key;
  const doc = (await t.request('GET', '/openapi.json')).body;
  return {
    t,
    fuzz: new ContractFuzzer(t, doc, { pat: c.pat, operator: OPERATOR_TOKEN, serviceKeys }, rng(seed)),
  };
}
