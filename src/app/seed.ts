import { readFileSync } from 'node:fs';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { AccountService } from '../areas/account/service.js';
import { parseSshPublicKey } from '../areas/account/ssh-public-key.js';
import { ALL_SCOPES, isKnownScope, normaliseService } from '../kernel/auth/catalogue.js';
import { AppError } from '../kernel/errors.js';
import type { Kernel } from '../kernel/kernel.js';

const Token = (prefix: string) =>
  Type.String({
    pattern: `^${prefix}[A-Za-z0-9_-]{20,100}$`,
    description: `A fixed secret starting with ${prefix}`,
  });

export const SeedFile = Type.Object(
  {
    customers: Type.Array(
      Type.Object(
        {
          email: Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$' }),
          customer_type: Type.Optional(Type.Union([Type.Literal('private'), Type.Literal('business')])),
          first_name: Type.Optional(Type.String()),
          last_name: Type.Optional(Type.String()),
          company: Type.Optional(Type.String()),
          plan: Type.Optional(Type.Union(['free', 'basic', 'pro', 'enterprise'].map((p) => Type.Literal(p)))),
          pats: Type.Optional(
            Type.Array(
              Type.Object(
                {
                  token: Token('fjp_'),
                  scopes: Type.Optional(Type.Array(Type.String(), { description: 'Omitted: every scope' })),
                  description: Type.Optional(Type.String()),
                },
                { additionalProperties: false },
              ),
            ),
          ),
          service_keys: Type.Optional(
            Type.Array(
              Type.Object(
                { token: Token('fjk_'), service: Type.String(), description: Type.Optional(Type.String()) },
                { additionalProperties: false },
              ),
            ),
          ),
          ssh_keys: Type.Optional(
            Type.Array(
              Type.Object(
                { name: Type.String(), public_key: Type.String() },
                { additionalProperties: false },
              ),
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type Seed = Static<typeof SeedFile>;

export function readSeedFile(path: string): Seed {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`FJORD_SEED_FILE ${path}: ${(err as Error).message}`);
  }
  if (!Value.Check(SeedFile, data)) {
    const problems = [...Value.Errors(SeedFile, data)]
      .slice(0, 10)
      .map((e) => `${e.path || '/'} ${e.message}`);
    throw new Error(`FJORD_SEED_FILE ${path} is not a valid seed:\n  ${problems.join('\n  ')}`);
  }
  const problems = seedProblems(data);
  if (problems.length > 0) {
    throw new Error(`FJORD_SEED_FILE ${path} is not a valid seed:\n  ${problems.slice(0, 10).join('\n  ')}`);
  }
  return data;
}

/**
 * What the schema cannot see: unknown scopes and services, SSH keys that do not parse, a secret
 * or e-mail given twice. Checked for the whole file before anything is written, so a bad seed
 * changes nothing instead of leaving half its customers behind.
 */
export function seedProblems(seed: Seed): string[] {
  const problems: string[] = [];
  const emails = new Set<string>();
  const tokens = new Set<string>();
  seed.customers.forEach((c, i) => {
    const at = `/customers/${i}`;
    const email = c.email.toLowerCase();
    if (emails.has(email)) problems.push(`${at}/email ${c.email} is given twice`);
    emails.add(email);
    const secret = (token: string, where: string) => {
      if (tokens.has(token)) problems.push(`${where} repeats a secret given earlier in the file`);
      tokens.add(token);
    };
    c.pats?.forEach((pat, j) => {
      secret(pat.token, `${at}/pats/${j}/token`);
      for (const scope of pat.scopes ?? [])
        if (!isKnownScope(scope)) problems.push(`${at}/pats/${j}/scopes: unknown scope ${scope}`);
    });
    c.service_keys?.forEach((key, j) => {
      secret(key.token, `${at}/service_keys/${j}/token`);
      if (!normaliseService(key.service))
        problems.push(`${at}/service_keys/${j}/service: unknown service ${key.service}`);
    });
    c.ssh_keys?.forEach((ssh, j) => {
      try {
        parseSshPublicKey(ssh.public_key);
      } catch (err) {
        problems.push(`${at}/ssh_keys/${j}/public_key: ${(err as Error).message}`);
      }
    });
  });
  return problems;
}

/**
 * Seeding at boot, as emulator users know it from LocalStack: customers with credentials whose
 * secrets the seed fixes, so a test suite can hard-code them. Applied at every start and after
 * every reset, and idempotent: a customer is matched by e-mail, a key by its secret, an SSH key by
 * its fingerprint; nothing that exists is changed.
 */
export async function applySeed(kernel: Kernel, account: AccountService, seed: Seed): Promise<void> {
  const system = { kind: 'operator', id: 'operator' } as const;
  for (const c of seed.customers) {
    const customer =
      (await kernel.identity.findCustomerByEmail(c.email)) ??
      (await kernel.identity.createCustomer({
        email: c.email,
        customerType: c.customer_type,
        firstName: c.first_name ?? null,
        lastName: c.last_name ?? null,
        company: c.company ?? null,
        plan: c.plan,
      }));
    for (const pat of c.pats ?? []) {
      if (await kernel.identity.keyExists(pat.token)) continue;
      const scopes = pat.scopes ?? [...ALL_SCOPES];
      await kernel.identity.createPat(customer.id, scopes, pat.description ?? 'seeded', null, pat.token);
    }
    for (const key of c.service_keys ?? []) {
      if (await kernel.identity.keyExists(key.token)) continue;
      await kernel.identity.createServiceKey(
        customer.id,
        key.service,
        key.description ?? 'seeded',
        key.token,
      );
    }
    for (const ssh of c.ssh_keys ?? []) {
      try {
        await account.addSshKey(customer.id, system, ssh.name, ssh.public_key);
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'ssh_key_exists')) throw err;
      }
    }
  }
}
