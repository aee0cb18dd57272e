import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateOpenApiDocument, serialiseOpenApi } from '../../src/app/openapi-document.js';
import { TestFjord } from '../helpers/fjord.js';

const SPEC_ENDPOINTS = [
  'GET /v1/account/profile',
  'GET /v1/account/api-keys',
  'POST /v1/account/api-keys/service',
  'POST /v1/account/api-keys/pat',
  'DELETE /v1/account/api-keys/{key_id}',
  'GET /v1/account/ssh-keys',
  'POST /v1/account/ssh-keys',
  'DELETE /v1/account/ssh-keys/{key_id}',
  'GET /v1/account/services',
  'GET /v1/regions',
  'GET /v1/regions/{region_code}',
  'GET /v1/regions/{region_code}/pricing',
];

// biome-ignore lint/suspicious/noExplicitAny: the document is plain JSON
let doc: any;
let t: TestFjord;

beforeAll(async () => {
  doc = await generateOpenApiDocument();
  t = await TestFjord.create();
});
afterAll(() => t.close());

describe('the OpenAPI document', () => {
  it('matches the committed openapi.json (run `npm run openapi` after changing a route)', () => {
    const committed = readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8');
    expect(serialiseOpenApi(doc)).toBe(committed);
  });

  it('is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('holds every endpoint of the Account and Regions areas', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`),
    );
    for (const e of SPEC_ENDPOINTS) expect(operations).toContain(e);
  });

  it('gives every operation an id, a tag, a summary, its security and its error responses', () => {
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops as Record<string, Record<string, unknown>>)) {
        const label = `${method} ${path}`;
        expect(op['operationId'], label).toEqual(expect.any(String));
        expect(ids.has(op['operationId'] as string), `${label} duplicate operationId`).toBe(false);
        ids.add(op['operationId'] as string);
        expect((op['tags'] as string[]).length, label).toBe(1);
        expect(op['summary'], label).toEqual(expect.any(String));
        expect(op['security'], label).toBeDefined();
        expect(op['x-fjord-access'], label).toBeDefined();
        const statuses = Object.keys(op['responses'] as object);
        // A WebSocket's success is 101 Switching Protocols (the console's terminal); a browser
        // sign-in step's is a redirect (the console's OIDC start and callback).
        expect(
          statuses.some((s) => s.startsWith('2') || s.startsWith('3') || s === '101'),
          label,
        ).toBe(true);
        const access = op['x-fjord-access'] as { kind: string };
        if (access.kind !== 'public') expect(statuses, label).toEqual(expect.arrayContaining(['401', '429']));
        if (access.kind === 'customer') expect(statuses, label).toContain('403');
      }
    }
  });

  it('is served at /openapi.json and rendered at /docs', async () => {
    const served = await t.request('GET', '/openapi.json');
    expect(served.status).toBe(200);
    expect(served.body.openapi).toBe('3.1.0');
    expect(Object.keys(served.body.paths)).toEqual(Object.keys(doc.paths));
    const docs = await t.request('GET', '/docs/');
    expect(docs.status).toBe(200);
    expect(docs.headers['content-type']).toMatch(/text\/html/);
  });
});

describe('the route table', () => {
  it('declares every route completely', () => {
    for (const r of t.fjord.routes) {
      const label = `${r.method} ${r.url}`;
      expect(r.operationId, label).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(r.tag, label).toBeTruthy();
      expect(r.summary.length, label).toBeGreaterThan(5);
      expect(r.access, label).toBeDefined();
      expect(Object.keys(r.response).length, label).toBeGreaterThan(0);
      if (r.url.includes(':')) expect(r.params, `${label} has path params without a schema`).toBeDefined();
    }
  });
});
