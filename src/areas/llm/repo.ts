import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import {
  CURRENCIES,
  type Currency,
  type LlmBudgetsTable,
  type LlmTables,
  type LlmUsageTable,
} from './migrations.js';

const costColumn = (c: Currency) => `cost_${c.toLowerCase()}` as `cost_${Lowercase<Currency>}`;

export interface UsageTotals {
  model: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: Record<Currency, number>;
}

export class LlmRepo {
  private readonly db: Kysely<LlmTables>;
  constructor(store: Store) {
    this.db = store.typed<LlmTables>();
  }

  async recordUsage(row: LlmUsageTable): Promise<void> {
    await this.db.insertInto('llm_usage').values(row).execute();
  }

  /** Totals per model for a customer over [from, to). */
  async totals(customerId: string, from: number, to: number): Promise<UsageTotals[]> {
    const rows = await this.db
      .selectFrom('llm_usage')
      .select((eb) => [
        'model',
        eb.fn.countAll<number>().as('requests'),
        eb.fn.sum<number>('prompt_tokens').as('prompt_tokens'),
        eb.fn.sum<number>('completion_tokens').as('completion_tokens'),
        eb.fn.sum<number>('total_tokens').as('total_tokens'),
        ...CURRENCIES.map((c) => eb.fn.sum<number>(costColumn(c)).as(costColumn(c))),
      ])
      .where('customer_id', '=', customerId)
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .groupBy('model')
      .orderBy('model')
      .execute();
    return rows.map((r) => ({
      model: r.model,
      requests: Number(r.requests),
      prompt_tokens: Number(r.prompt_tokens ?? 0),
      completion_tokens: Number(r.completion_tokens ?? 0),
      total_tokens: Number(r.total_tokens ?? 0),
      cost: Object.fromEntries(
        CURRENCIES.map((c) => [c, round6(Number((r as Record<string, unknown>)[costColumn(c)] ?? 0))]),
      ) as Record<Currency, number>,
    }));
  }

  /** What a key has spent since `from`, in `currency`. */
  async spentSince(keyId: string, currency: Currency, from: number): Promise<number> {
    const r = await this.db
      .selectFrom('llm_usage')
      .select((eb) => eb.fn.sum<number>(costColumn(currency)).as('spent'))
      .where('key_id', '=', keyId)
      .where('created_at', '>=', from)
      .executeTakeFirst();
    return Number(r?.spent ?? 0);
  }

  budget(customerId: string, keyId: string): Promise<LlmBudgetsTable | undefined> {
    return this.db
      .selectFrom('llm_budgets')
      .selectAll()
      .where('key_id', '=', keyId)
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
  }

  budgetOfKey(keyId: string): Promise<LlmBudgetsTable | undefined> {
    return this.db.selectFrom('llm_budgets').selectAll().where('key_id', '=', keyId).executeTakeFirst();
  }

  budgets(customerId: string): Promise<LlmBudgetsTable[]> {
    return this.db
      .selectFrom('llm_budgets')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .execute();
  }

  async putBudget(row: LlmBudgetsTable): Promise<void> {
    await this.db
      .insertInto('llm_budgets')
      .values(row)
      .onConflict((oc) =>
        oc.column('key_id').doUpdateSet({
          monthly_limit: row.monthly_limit,
          currency: row.currency,
          updated_at: row.updated_at,
        }),
      )
      .execute();
  }

  async deleteBudget(customerId: string, keyId: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('llm_budgets')
      .where('key_id', '=', keyId)
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
