import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestFjord } from '../helpers/fjord.js';

const PAT = 'fjp_seededCiToken0123456789abcdef';
const NARROW_PAT = 'fjp_seededReadOnly0123456789abcd';
const DNS_KEY = 'fjk_seededDnsKey0123456789abcdefg';

function seedFile(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'fjord-seed-')), 'seed.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

function ed25519Line(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-seed-ssh-'));
  execFileSync('ssh-keygen', ['-t', 'ed25519', '-N', '', '-q', '-C', 'seed', '-f', join(dir, 'k')]);
  return readFileSync(join(dir, 'k.pub'), 'utf8');
}

describe('seeding at boot (FJORD_SEED_FILE)', () => {
  let t: TestFjord;
  let path: string;
  beforeAll(async () => {
    path = seedFile({
      customers: [
        {
          email: 'CI@Example.test',
          customer_type: 'business',
          company: 'CI AS',
          pats: [{ token: PAT }, { token: NARROW_PAT, scopes: ['regions:read'] }],
          service_keys: [{ token: DNS_KEY, service: 'DNS' }],
          ssh_keys: [{ name: 'deploy', public_key: ed25519Line() }],
        },
      ],
    });
    t = await TestFjord.create({ FJORD_SEED_FILE: path });
  });
  afterAll(() => t.close());

  it('creates the customers with credentials whose secrets the seed fixes', async () => {
    const profile = await t.request('GET', '/v1/account/profile', { key: PAT });
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({
      email: 'ci@example.test',
      customer_type: 'business',
      company: 'CI AS',
    });
    expect((await t.request('GET', '/v1/regions', { key: NARROW_PAT })).status).toBe(200);
    expect((await t.request('GET', '/v1/account/profile', { key: NARROW_PAT })).status).toBe(403);
    const keys = await t.request('GET', '/v1/account/api-keys', { key: PAT });
    expect(keys.body.map((k: { service: string | null }) => k.service)).toContain('dns');
    expect((await t.request('GET', '/v1/regions', { key: DNS_KEY })).status).toBe(200);
    const ssh = await t.request('GET', '/v1/account/ssh-keys', { key: PAT });
    expect(ssh.body.map((k: { name: string }) => k.name)).toEqual(['deploy']);
  });

  it('is idempotent and comes back after a reset', async () => {
    await t.operator('POST', '/admin/v1/reset');
    expect((await t.request('GET', '/v1/account/profile', { key: PAT })).status).toBe(200);
    await t.operator('POST', '/admin/v1/reset');
    const keys = await t.request('GET', '/v1/account/api-keys', { key: PAT });
    expect(keys.body).toHaveLength(3);
    const ssh = await t.request('GET', '/v1/account/ssh-keys', { key: PAT });
    expect(ssh.body).toHaveLength(1);
    const customers = await t.operator('GET', '/admin/v1/customers');
    expect(customers.body.total).toBe(1);
  });

  it('checks the whole file before writing anything: a bad SSH key on the second customer leaves no first one', async () => {
    const good = readFileSync(path, 'utf8');
    writeFileSync(
      path,
      JSON.stringify({
        customers: [
          { email: 'first@example.test', pats: [{ token: 'fjp_firstOfTwo0123456789abcdefgh' }] },
          { email: 'second@example.test', ssh_keys: [{ name: 'broken', public_key: 'ssh-ed25519 AAAA' }] },
        ],
      }),
    );
    try {
      const reset = await t.operator('POST', '/admin/v1/reset');
      expect(reset.status).toBe(409);
      expect(reset.body.detail.code).toBe('invalid_seed');
      expect(reset.body.detail.message).toMatch(/ssh_keys\/0\/public_key/);
      // Nothing was erased or written: the customer of the good seed is still the only one.
      const customers = await t.operator('GET', '/admin/v1/customers');
      expect(customers.body.customers.map((c: { email: string }) => c.email)).toEqual(['ci@example.test']);
    } finally {
      writeFileSync(path, good);
      await t.operator('POST', '/admin/v1/reset');
    }
  });

  it('refuses a seed that is not valid, naming the problem', async () => {
    const bad = seedFile({ customers: [{ email: 'x@example.test', pats: [{ token: 'short' }] }] });
    await expect(TestFjord.create({ FJORD_SEED_FILE: bad })).rejects.toThrow(/pats\/0\/token/);
    const unknownService = seedFile({
      customers: [
        {
          email: 'y@example.test',
          service_keys: [{ token: DNS_KEY.replace('Dns', 'Xyz'), service: 'mainframe' }],
        },
      ],
    });
    await expect(TestFjord.create({ FJORD_SEED_FILE: unknownService })).rejects.toThrow(/mainframe/);
  });
});
