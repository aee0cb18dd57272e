import { type Compilable, CompiledQuery, type Kysely, type Selectable } from 'kysely';
import type { ApiKeysTable, CustomersTable, KernelTables } from '../store/kernel-tables.js';
import type { Store } from '../store/store.js';

export type CustomerRow = Selectable<CustomersTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ApiKeyWithCustomer = ApiKeyRow & { customer_status: string };

/** The only place with queries on customers, API keys and OIDC identities. */
export class IdentityRepo {
  private readonly db: Kysely<KernelTables>;
  constructor(store: Store) {
    this.db = store.typed<KernelTables>();
  }

  insertCustomer(row: CustomerRow) {
    return this.db.insertInto('customers').values(row).execute();
  }
  customerById(id: string): Promise<CustomerRow | undefined> {
    return this.byOneParameter(this.customerByIdSql, id);
  }
  private readonly customerByIdSql = compileOnce(() =>
    this.db.selectFrom('customers').selectAll().where('id', '=', ''),
  );
  customerByEmail(email: string) {
    return this.db.selectFrom('customers').selectAll().where('email', '=', email).executeTakeFirst();
  }
  listCustomers(limit: number, offset: number) {
    return this.db
      .selectFrom('customers')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute();
  }
  async countCustomers(): Promise<number> {
    const r = await this.db
      .selectFrom('customers')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
  updateCustomer(id: string, patch: Partial<Omit<CustomerRow, 'id' | 'short_id' | 'created_at'>>) {
    return this.db.updateTable('customers').set(patch).where('id', '=', id).executeTakeFirst();
  }

  insertApiKey(row: ApiKeyRow) {
    return this.db.insertInto('api_keys').values(row).execute();
  }
  listApiKeys(customerId: string) {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  apiKeyByHash(hash: string): Promise<ApiKeyWithCustomer | undefined> {
    return this.byOneParameter(this.apiKeyByHashSql, hash);
  }
  private readonly apiKeyByHashSql = compileOnce(() =>
    this.db
      .selectFrom('api_keys')
      .innerJoin('customers', 'customers.id', 'api_keys.customer_id')
      .selectAll('api_keys')
      .select('customers.status as customer_status')
      .where('api_keys.key_hash', '=', ''),
  );

  /** Runs a lookup compiled once by compileOnce() with its one parameter; the first row. */
  private async byOneParameter<Row>(sql: () => string, value: string): Promise<Row | undefined> {
    const { rows } = await this.db.executeQuery(CompiledQuery.raw(sql(), [value]) as CompiledQuery<Row>);
    return rows[0];
  }
  async revokeApiKey(customerId: string, keyId: string, at: number): Promise<boolean> {
    const r = await this.db
      .updateTable('api_keys')
      .set({ is_active: 0, revoked_at: at })
      .where('id', '=', keyId)
      .where('customer_id', '=', customerId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
  touchApiKey(id: string, at: number) {
    return this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  oidcIdentity(issuer: string, subject: string) {
    return this.db
      .selectFrom('oidc_identities')
      .selectAll()
      .where('issuer', '=', issuer)
      .where('subject', '=', subject)
      .executeTakeFirst();
  }
  linkOidcIdentity(issuer: string, subject: string, customerId: string, at: number) {
    return this.db
      .insertInto('oidc_identities')
      .values({ issuer, subject, customer_id: customerId, created_at: at })
      .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
      .execute();
  }
}

/**
 * The lookups every authenticated request makes (the key, and for most handlers the customer) are
 * built and compiled once: building and compiling a Kysely query cost about as much CPU as SQLite
 * takes to run it (bench/README.md). The query must have exactly one parameter.
 */
function compileOnce(build: () => Compilable<unknown>): () => string {
  let sql: string | null = null;
  return () => {
    if (sql === null) {
      const compiled = build().compile();
      if (compiled.parameters.length !== 1) throw new Error(`expected one parameter in ${compiled.sql}`);
      sql = compiled.sql;
    }
    return sql;
  };
}
