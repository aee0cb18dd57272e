import type { Kysely, Migration } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

export const CURRENCIES = ['NOK', 'SEK', 'DKK', 'EUR', 'USD'] as const;
export type Currency = (typeof CURRENCIES)[number];

export interface LlmUsageTable {
  id: string;
  customer_id: string;
  /** The credential that made the request (API key, PAT or OIDC identity id). */
  key_id: string;
  model: string;
  upstream: string | null;
  agent_id: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_nok: number;
  cost_sek: number;
  cost_dkk: number;
  cost_eur: number;
  cost_usd: number;
  /** `ok`, `error` (the upstream failed or refused) or `aborted` (the client left mid-stream). */
  outcome: string;
  latency_ms: number;
  created_at: number;
}

export interface LlmBudgetsTable {
  key_id: string;
  customer_id: string;
  monthly_limit: number;
  currency: string;
  created_at: number;
  updated_at: number;
}

export interface LlmTables {
  llm_usage: LlmUsageTable;
  llm_budgets: LlmBudgetsTable;
}

export const llmMigrations: Record<string, Migration> = {
  '2026-11-24-2100-llm-usage-and-budgets': {
    async up(db: AnyDb) {
      let usage = db.schema
        .createTable('llm_usage')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('upstream', 'text')
        .addColumn('agent_id', 'text')
        .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
        .addColumn('completion_tokens', 'integer', (c) => c.notNull())
        .addColumn('total_tokens', 'integer', (c) => c.notNull());
      for (const c of CURRENCIES)
        usage = usage.addColumn(`cost_${c.toLowerCase()}`, 'real', (col) => col.notNull());
      await usage
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('llm_usage_customer_time')
        .on('llm_usage')
        .columns(['customer_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('llm_usage_key_time')
        .on('llm_usage')
        .columns(['key_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('llm_budgets')
        .addColumn('key_id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('monthly_limit', 'real', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};
