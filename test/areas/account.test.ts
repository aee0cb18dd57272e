import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer('alice@example.test', 'business');
  b = await t.customer('bob@example.test');
});
afterAll(() => t.close());

const hasSshKeygen = (() => {
  try {
    execFileSync('ssh-keygen', ['-?'], { stdio: 'ignore' });
    return true;
  } catch (e) {
    return (e as { status?: number }).status !== undefined;
  }
})();

function sshKey(type: string, bits?: number) {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-ssh-'));
  const file = join(dir, 'id');
  execFileSync('ssh-keygen', [
    '-t',
    type,
    ...(bits ? ['-b', String(bits)] : []),
    '-N',
    '',
    '-q',
    '-C',
    'me@host',
    '-f',
    file,
  ]);
  const line = readFileSync(`${file}.pub`, 'utf8');
  const listing = execFileSync('ssh-keygen', ['-lf', `${file}.pub`], { encoding: 'utf8' }).trim();
  return { line, fingerprint: listing.split(' ')[1]! };
}

describe('account profile', () => {
  it('returns the spec fields', async () => {
    const r = await t.request('GET', '/v1/account/profile', { key: a.pat });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      customer_id: a.id,
      email: 'alice@example.test',
      first_name: 'Test',
      last_name: 'User',
      company: null,
      customer_type: 'business',
      status: 'active',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    expect(r.headers['x-ratelimit-limit']).toBeDefined();
    expect(r.headers['x-ratelimit-remaining']).toBeDefined();
    expect(Number(r.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
    expect(r.headers['x-request-id']).toBeTruthy();
  });

  it('accepts the PAT as a bearer token too', async () => {
    const r = await t.request('GET', '/v1/account/profile', { bearer: a.pat });
    expect(r.status).toBe(200);
  });
});

describe('api keys', () => {
  it('creates a service key shown once, which then works for its service', async () => {
    const r = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'LLM-API', description: 'chat bot' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      key_type: 'service',
      service: 'llm-api',
      scopes: [],
      description: 'chat bot',
    });
    expect(r.body.key).toMatch(/^fjk_/);
    expect(r.body.key.startsWith(r.body.key_prefix)).toBe(true);
    expect(r.body.warning).toBeTruthy();
    expect(r.body.expires_at).toBeNull();

    const list = await t.request('GET', '/v1/account/api-keys', { key: a.pat });
    expect(list.status).toBe(200);
    const entry = list.body.find((k: { id: string }) => k.id === r.body.id);
    expect(entry).toMatchObject({ is_active: true, key_prefix: r.body.key_prefix, last_used_at: null });
    expect(list.text).not.toContain(r.body.key);
    for (const k of list.body) expect(k).not.toHaveProperty('key');

    // A service key reaches the routes that take any service key, and is refused by account routes.
    expect((await t.request('GET', '/v1/regions', { key: r.body.key })).status).toBe(200);
    expect((await t.request('GET', '/v1/account/profile', { key: r.body.key })).status).toBe(403);
    const after = await t.request('GET', '/v1/account/api-keys', { key: a.pat });
    expect(after.body.find((k: { id: string }) => k.id === r.body.id).last_used_at).not.toBeNull();
  });

  it('refuses an unknown service with 422', async () => {
    const r = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'mainframe' },
    });
    expect(r.status).toBe(422);
    expect(r.body.detail.code).toBe('unknown_service');
  });

  it('creates PATs with scopes and expiry, and enforces the expiry', async () => {
    const r = await t.request('POST', '/v1/account/api-keys/pat', {
      key: a.pat,
      body: { scopes: ['ssh_keys:read'], description: 'ci', expires_in_days: 30 },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ key_type: 'account', service: null, scopes: ['ssh_keys:read'] });
    expect(r.body.key).toMatch(/^fjp_/);
    const expires = Date.parse(r.body.expires_at) - Date.parse(r.body.created_at);
    expect(expires).toBe(30 * 86400_000);
    expect((await t.request('GET', '/v1/account/ssh-keys', { key: r.body.key })).status).toBe(200);
    expect((await t.request('GET', '/v1/account/api-keys', { key: r.body.key })).status).toBe(403);
  });

  it('refuses unknown scopes and scopes the calling PAT does not hold', async () => {
    const bad = await t.request('POST', '/v1/account/api-keys/pat', {
      key: a.pat,
      body: { scopes: ['root:all'] },
    });
    expect(bad.status).toBe(422);
    const narrow = await t.request('POST', '/v1/account/api-keys/pat', {
      key: a.pat,
      body: { scopes: ['api_keys:write'] },
    });
    const escalate = await t.request('POST', '/v1/account/api-keys/pat', {
      key: narrow.body.key,
      body: { scopes: ['database:write'] },
    });
    expect(escalate.status).toBe(403);
    expect(escalate.body.detail.code).toBe('scope_not_held');
    const same = await t.request('POST', '/v1/account/api-keys/pat', {
      key: narrow.body.key,
      body: { scopes: ['api_keys:write'] },
    });
    expect(same.status).toBe(201);
  });

  it('validates the bodies with the failing paths', async () => {
    const r = await t.request('POST', '/v1/account/api-keys/pat', {
      key: a.pat,
      body: { scopes: [], expires_in_days: 0 },
    });
    expect(r.status).toBe(422);
    const paths = r.body.detail.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['/body/scopes', '/body/expires_in_days']));
  });

  it('revokes at once: the very next request gets 401', async () => {
    const created = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns' },
    });
    const pat = await t.request('POST', '/v1/account/api-keys/pat', {
      key: a.pat,
      body: { scopes: ['regions:read'] },
    });
    expect((await t.request('GET', '/v1/regions', { key: pat.body.key })).status).toBe(200);
    const del = await t.request('DELETE', `/v1/account/api-keys/${pat.body.id}`, { key: a.pat });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ ok: true, revoked: pat.body.id, success: true, message: expect.any(String) });
    expect((await t.request('GET', '/v1/regions', { key: pat.body.key })).status).toBe(401);
    const again = await t.request('DELETE', `/v1/account/api-keys/${pat.body.id}`, { key: a.pat });
    expect(again.status).toBe(404);
    const list = await t.request('GET', '/v1/account/api-keys', { key: a.pat });
    expect(list.body.map((k: { id: string }) => k.id)).not.toContain(pat.body.id);
    expect(list.body.map((k: { id: string }) => k.id)).toContain(created.body.id);
  });

  it('never writes a secret into the logs', async () => {
    const created = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'dns' },
    });
    await t.request('GET', '/v1/regions', { key: created.body.key });
    await t.request('GET', '/v1/regions', { bearer: created.body.key });
    const all = t.logs.join('');
    expect(all.length).toBeGreaterThan(0);
    expect(all).not.toContain(created.body.key);
    expect(all).not.toContain(a.pat);
  });
});

describe('ssh keys', () => {
  it.skipIf(!hasSshKeygen)('agrees with ssh-keygen on RSA, Ed25519 and ECDSA fingerprints', async () => {
    for (const [type, bits, label] of [
      ['rsa', 3072, 'ssh-rsa'],
      ['ed25519', undefined, 'ssh-ed25519'],
      ['ecdsa', 256, 'ecdsa-sha2-nistp256'],
      ['ecdsa', 384, 'ecdsa-sha2-nistp384'],
      ['ecdsa', 521, 'ecdsa-sha2-nistp521'],
    ] as const) {
      const k = sshKey(type, bits);
      const r = await t.request('POST', '/v1/account/ssh-keys', {
        key: a.pat,
        body: { name: `${type}${bits}`, public_key: k.line },
      });
      expect(r.status, type).toBe(201);
      expect(r.body).toEqual({
        id: expect.any(String),
        name: `${type}${bits}`,
        fingerprint: k.fingerprint,
        key_type: label,
        created_at: expect.any(String),
        vm_count: 0,
      });
    }
    const list = await t.request('GET', '/v1/account/ssh-keys', { key: a.pat });
    expect(list.body.length).toBeGreaterThanOrEqual(5);
  });

  it('refuses anything but an RSA, Ed25519 or ECDSA public key line with 422', async () => {
    for (const bad of [
      'not a key',
      'ssh-dss AAAAB3NzaC1kc3MAAACBAP',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----',
    ]) {
      const r = await t.request('POST', '/v1/account/ssh-keys', {
        key: a.pat,
        body: { name: 'x', public_key: bad },
      });
      expect(r.status).toBe(422);
      expect(r.body.detail.code).toBe('invalid_ssh_key');
    }
  });

  it.skipIf(!hasSshKeygen)(
    'refuses the same key twice on one account, deletes, and isolates tenants',
    async () => {
      const k = sshKey('ed25519');
      const first = await t.request('POST', '/v1/account/ssh-keys', {
        key: a.pat,
        body: { name: 'laptop', public_key: k.line },
      });
      expect(first.status).toBe(201);
      const dup = await t.request('POST', '/v1/account/ssh-keys', {
        key: a.pat,
        body: { name: 'again', public_key: k.line },
      });
      expect(dup.status).toBe(409);
      // Another customer may hold the same public key.
      const other = await t.request('POST', '/v1/account/ssh-keys', {
        key: b.pat,
        body: { name: 'bob', public_key: k.line },
      });
      expect(other.status).toBe(201);

      await expectTenantIsolation(t, { key: a.pat }, { key: b.pat }, [
        { method: 'DELETE', url: `/v1/account/ssh-keys/${first.body.id}` },
      ]);
      const bList = await t.request('GET', '/v1/account/ssh-keys', { key: b.pat });
      expect(bList.body.map((x: { id: string }) => x.id)).toEqual([other.body.id]);

      const del = await t.request('DELETE', `/v1/account/ssh-keys/${first.body.id}`, { key: a.pat });
      expect(del.body).toEqual({
        ok: true,
        deleted: first.body.id,
        success: true,
        message: expect.any(String),
      });
      expect(
        (await t.request('DELETE', `/v1/account/ssh-keys/${first.body.id}`, { key: a.pat })).status,
      ).toBe(404);
    },
  );
});

describe('tenant isolation of api keys', () => {
  it('hides and protects one customer’s keys from another', async () => {
    const k = await t.request('POST', '/v1/account/api-keys/service', {
      key: a.pat,
      body: { service: 'vps' },
    });
    await expectTenantIsolation(t, { key: a.pat }, { key: b.pat }, [
      { method: 'DELETE', url: `/v1/account/api-keys/${k.body.id}` },
    ]);
    const bKeys = await t.request('GET', '/v1/account/api-keys', { key: b.pat });
    expect(bKeys.body.map((x: { id: string }) => x.id)).not.toContain(k.body.id);
    expect((await t.request('GET', '/v1/regions', { key: k.body.key })).status).toBe(200);
  });
});

describe('services list', () => {
  it('is an empty array until areas register services', async () => {
    const r = await t.request('GET', '/v1/account/services', { key: a.pat });
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
  });
});

describe('audit trail', () => {
  it('records key and SSH key changes for the customer only', async () => {
    const { entries } = await t.kernel.audit.list(a.id, { area: 'account' });
    const actions = new Set(entries.map((e) => e.action));
    expect(actions).toContain('api_key.created');
    expect(actions).toContain('api_key.revoked');
    expect(entries.every((e) => e.actor_type === 'pat')).toBe(true);
    const other = await t.kernel.audit.list(b.id, { area: 'account' });
    expect(other.entries.every((e) => !entries.some((x) => x.id === e.id))).toBe(true);
  });
});

describe('auth matrix', () => {
  it('answers 401/403 correctly on every account route', async () => {
    await expectAuthMatrix(t, 'Account');
  });
});

describe('what a PAT may mint', () => {
  it('creates service keys only for services it may change itself', async () => {
    const narrow = await t.kernel.identity.createPat(a.id, ['api_keys:write'], null);
    const refused = await t.request('POST', '/v1/account/api-keys/service', {
      key: narrow.key,
      body: { service: 'storage' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.detail.code).toBe('scope_not_held');
    const dnsWriter = await t.kernel.identity.createPat(a.id, ['api_keys:write', 'dns:write'], null);
    const ok = await t.request('POST', '/v1/account/api-keys/service', {
      key: dnsWriter.key,
      body: { service: 'DNS' },
    });
    expect(ok.status).toBe(201);
    const llm = await t.request('POST', '/v1/account/api-keys/service', {
      key: dnsWriter.key,
      body: { service: 'llm-api' },
    });
    expect(llm.status).toBe(403);
  });

  it('never mints a key that outlives it', async () => {
    const shortLived = await t.kernel.identity.createPat(a.id, ['api_keys:write', 'dns:write'], null, 2);
    const pat = await t.request('POST', '/v1/account/api-keys/pat', {
      key: shortLived.key,
      body: { scopes: ['dns:write'] },
    });
    expect(pat.status).toBe(201);
    expect(pat.body.expires_at).toBe(shortLived.view.expires_at);
    const longer = await t.request('POST', '/v1/account/api-keys/pat', {
      key: shortLived.key,
      body: { scopes: ['dns:write'], expires_in_days: 30 },
    });
    expect(longer.body.expires_at).toBe(shortLived.view.expires_at);
    const shorter = await t.request('POST', '/v1/account/api-keys/pat', {
      key: shortLived.key,
      body: { scopes: ['dns:write'], expires_in_days: 1 },
    });
    expect(Date.parse(shorter.body.expires_at)).toBeLessThan(Date.parse(shortLived.view.expires_at!));
    const service = await t.request('POST', '/v1/account/api-keys/service', {
      key: shortLived.key,
      body: { service: 'dns' },
    });
    expect(service.body.expires_at).toBe(shortLived.view.expires_at);
  });

  it('does not replay one credential’s answer to another with the same Idempotency-Key', async () => {
    const narrow = await t.kernel.identity.createPat(a.id, ['api_keys:write'], null);
    const body = { scopes: ['dns:write', 'storage:write'] };
    const headers = { 'idempotency-key': 'shared-key-1' };
    const full = await t.request('POST', '/v1/account/api-keys/pat', { key: a.pat, body, headers });
    expect(full.status).toBe(201);
    const other = await t.request('POST', '/v1/account/api-keys/pat', { key: narrow.key, body, headers });
    expect(other.status).toBe(403);
    expect(other.text).not.toContain(full.body.key);
    const again = await t.request('POST', '/v1/account/api-keys/pat', { key: a.pat, body, headers });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.key).toBe(full.body.key);
  });
});
