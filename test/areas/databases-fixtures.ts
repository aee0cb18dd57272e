import type { TestFjord } from '../helpers/fjord.js';

export const DB_TYPES = ['postgresql', 'mariadb'] as const;
export type DbTypeName = (typeof DB_TYPES)[number];
export const marker = (dbType: DbTypeName) => (dbType === 'postgresql' ? 'pg' : 'mdb');

export interface DbCustomer {
  id: string;
  shortId: string;
  pat: string;
  key: string;
}

/** A customer on `plan` with a database service key and a full PAT. */
export async function dbCustomer(t: TestFjord, plan = 'pro'): Promise<DbCustomer> {
  const { identity } = t.kernel;
  const c = await identity.createCustomer({
    email: `db${Math.random().toString(36).slice(2)}@example.test`,
    plan,
  });
  const pat = (await identity.createFullPat(c.id, 'test')).key;
  const key = (await identity.createServiceKey(c.id, 'database', 'test')).key;
  return { id: c.id, shortId: c.short_id, pat, key };
}

/** Creates a database (form A) and returns the creation answer. */
export async function createDb(
  t: TestFjord,
  c: DbCustomer,
  dbType: DbTypeName,
  name: string,
  tier = 'standard',
) {
  const r = await t.request('POST', '/v1/databases', {
    key: c.key,
    body: { db_type: dbType, db_name: name, tier },
  });
  if (r.status !== 201) throw new Error(`create ${dbType} ${name}: ${r.status} ${r.text}`);
  return r.body as {
    technical_name: string;
    username: string;
    password: string;
    host: string;
    port: number;
    connection_string: string;
  };
}

export const creds = (b: {
  technical_name?: string;
  db_name?: string;
  username: string;
  password: string;
  host: string;
  port: number;
}) => ({
  host: b.host,
  port: b.port,
  username: b.username,
  password: b.password,
  database: (b.technical_name ?? b.db_name)!,
});
