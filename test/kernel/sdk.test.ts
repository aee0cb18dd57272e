import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSchema, SCHEMA_FILE } from '../../sdk/generate.js';
import { createFjordClient } from '../../sdk/index.js';
import { TestFjord } from '../helpers/fjord.js';

/**
 * The SDK: its types are generated from the committed openapi.json (itself checked against the
 * server) and must not drift from it; and the client works against a running Fjord.
 */
const ROOT = join(import.meta.dirname, '..', '..');

describe('the TypeScript SDK', () => {
  let t: TestFjord;
  beforeAll(async () => {
    t = await TestFjord.create({ FJORD_API_PORT: '0' });
    await t.fjord.start(['api']);
  });
  afterAll(() => t.close());

  it('is generated from the committed OpenAPI document (run `npm run sdk` after `npm run openapi`)', async () => {
    const doc = JSON.parse(readFileSync(join(ROOT, 'openapi.json'), 'utf8'));
    expect(await generateSchema(doc)).toBe(readFileSync(SCHEMA_FILE, 'utf8'));
  });

  it('calls the API with typed paths, bodies and answers', async () => {
    const c = await t.customer();
    const fjord = createFjordClient({ baseUrl: t.kernel.baseUrl(), apiKey: c.pat });
    const profile = await fjord.GET('/v1/account/profile');
    expect(profile.response.status).toBe(200);
    expect(profile.data?.email).toBe(c.email);

    const zone = await fjord.POST('/v1/dns/zones', { body: { domain: 'sdk-example.test' } });
    expect(zone.response.status, JSON.stringify(zone.error)).toBe(201);
    const missing = await fjord.GET('/v1/dns/zones/{zone_name}', {
      params: { path: { zone_name: 'nope.test' } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ detail: { code: expect.any(String) } });

    const anonymous = createFjordClient({ baseUrl: t.kernel.baseUrl() });
    expect((await anonymous.GET('/v1/account/profile')).response.status).toBe(401);
  });

  it('serves the reference page with its renderer from Fjord itself, and GET / points to it', async () => {
    const index = await t.request('GET', '/');
    expect(index.body.reference).toBe(`${t.kernel.baseUrl()}/reference`);
    const page = await t.request('GET', '/reference');
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<script src="/reference/scalar.js"></script>');
    expect(page.text).toContain('"url":"/openapi.json"');
    expect(page.text).not.toMatch(/https?:\/\/(cdn|unpkg)/);
    const script = await t.request('GET', '/reference/scalar.js');
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.text).toContain('createApiReference');
    // Every operation carries its SDK example.
    const doc = (await t.request('GET', '/openapi.json')).body;
    const op = doc.paths['/v1/dns/zones/{zone_name}'].get;
    expect(op['x-codeSamples'][0].source).toContain(
      "fjord.GET('/v1/dns/zones/{zone_name}', { params: { path: { zone_name: '…' } } })",
    );
  });
});
