import type { IdentityService } from '../../../kernel/auth/identity.js';
import type { Clock } from '../../../kernel/clock.js';
import { AppError } from '../../../kernel/errors.js';
import { newId } from '../../../kernel/ids.js';
import type { Limits } from '../../../kernel/limits/quotas.js';
import type { Store } from '../../../kernel/store/store.js';
import { CatalogueRepo } from '../catalogue/repo.js';
import { IotRepo } from '../repo.js';
import {
  type Condition,
  conditionProblem,
  type Schedule,
  SEVERITIES,
  type Severity,
  validTimezone,
} from './conditions.js';
import { AlarmRepo } from './repo.js';
import type { IotRulesTable } from './tables.js';

export interface RuleTarget {
  type: IotRulesTable['target_type'];
  value?: string | null;
}
export interface RuleInput {
  name: string;
  description?: string | null;
  enabled?: boolean;
  target?: RuleTarget;
  severities: Partial<Record<Severity, Condition>>;
  clear_condition?: Condition | null;
  schedule?: Schedule | null;
}
export type RulePatch = Partial<RuleInput>;

export const ruleErrors = {
  notFound: () => new AppError('not_found', 'rule_not_found', 'No such alarm rule.'),
  invalid: (path: string, message: string) =>
    new AppError('invalid', 'invalid_rule', `${path.replace('/body/', '')}: ${message}`, {
      errors: [{ path, message }],
    }),
  quota: (max: number, plan: string) =>
    new AppError(
      'forbidden',
      'quota_exceeded',
      `The ${plan} plan allows ${max} alarm rules; delete one or change plan.`,
    ),
};

/** Alarm rules: which devices, which condition per severity, when it clears, when it is active. */
export class Rules {
  readonly repo: AlarmRepo;
  /** Told of every change, so the engine of this process drops what it cached. */
  changed: (ruleId: string) => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: Limits,
    private readonly identity: IdentityService,
  ) {
    this.repo = AlarmRepo.of(store);
  }

  async create(customerId: string, input: RuleInput) {
    const target = await this.checkTarget(customerId, input.target ?? { type: 'all' });
    this.checkConditions(input);
    const now = this.clock.nowMs();
    const row: IotRulesTable = {
      id: newId(),
      customer_id: customerId,
      name: input.name,
      description: input.description ?? null,
      enabled: input.enabled === false ? 0 : 1,
      target_type: target.type,
      target_value: target.value,
      severities: JSON.stringify(input.severities),
      clear_condition: input.clear_condition ? JSON.stringify(input.clear_condition) : null,
      schedule: input.schedule ? JSON.stringify(input.schedule) : null,
      created_at: now,
      updated_at: now,
    };
    const plan = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
    const max = this.limits.of('iot.rules', plan);
    await this.store.unitOfWork({ locks: [`iot:rules:${customerId}`] }, async ({ tx }) => {
      const repo = AlarmRepo.over(tx);
      if (max !== null && (await repo.countRules(customerId)) >= max) throw ruleErrors.quota(max, plan);
      await repo.insertRule(row);
    });
    this.changed(row.id);
    return ruleView(row);
  }

  async list(customerId: string) {
    return { rules: (await this.repo.rules(customerId)).map(ruleView) };
  }

  async get(customerId: string, id: string) {
    return ruleView(await this.row(customerId, id));
  }

  /** Applies from the next message; counters and durations of the old conditions start again. */
  async update(customerId: string, id: string, patch: RulePatch) {
    const row = await this.row(customerId, id);
    const merged: RuleInput = {
      ...ruleInputOf(row),
      ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
    };
    const target = await this.checkTarget(customerId, merged.target ?? { type: 'all' });
    this.checkConditions(merged);
    const next: IotRulesTable = {
      ...row,
      name: merged.name,
      description: merged.description ?? null,
      enabled: merged.enabled === false ? 0 : 1,
      target_type: target.type,
      target_value: target.value,
      severities: JSON.stringify(merged.severities),
      clear_condition: merged.clear_condition ? JSON.stringify(merged.clear_condition) : null,
      schedule: merged.schedule ? JSON.stringify(merged.schedule) : null,
      updated_at: this.clock.nowMs(),
    };
    await this.store.unitOfWork({ locks: [`iot:rule:${id}`] }, async ({ tx }) => {
      const repo = AlarmRepo.over(tx);
      const { id: _id, customer_id: _c, created_at: _at, ...rest } = next;
      await repo.updateRule(id, rest);
      await repo.clearRuleState(id);
    });
    this.changed(id);
    return ruleView(next);
  }

  async setEnabled(customerId: string, id: string, enabled: boolean) {
    const row = await this.row(customerId, id);
    const patch = { enabled: enabled ? 1 : 0, updated_at: this.clock.nowMs() };
    await this.store.unitOfWork({ locks: [`iot:rule:${id}`] }, async ({ tx }) => {
      await AlarmRepo.over(tx).updateRule(id, patch);
      // A disabled rule forgets its counters: re-enabled, it starts from the next message.
      if (!enabled) await AlarmRepo.over(tx).clearRuleState(id);
    });
    this.changed(id);
    return ruleView({ ...row, ...patch });
  }

  /** The rule goes; its alarms stay in the history with the rule's name. */
  async remove(customerId: string, id: string) {
    await this.row(customerId, id);
    await this.store.unitOfWork({ locks: [`iot:rule:${id}`] }, ({ tx }) => AlarmRepo.over(tx).deleteRule(id));
    this.changed(id);
  }

  private checkConditions(input: RuleInput) {
    const given = SEVERITIES.filter((s) => input.severities[s]);
    if (given.length === 0)
      throw ruleErrors.invalid('/body/severities', 'give a condition for at least one severity');
    for (const s of given) {
      const problem = conditionProblem(input.severities[s]!, `/body/severities/${s}`);
      if (problem) throw ruleErrors.invalid(problem.path, problem.message);
    }
    if (input.clear_condition) {
      const problem = conditionProblem(input.clear_condition, '/body/clear_condition', true);
      if (problem) throw ruleErrors.invalid(problem.path, problem.message);
    }
    const s = input.schedule;
    if (s) {
      if (!validTimezone(s.timezone))
        throw ruleErrors.invalid('/body/schedule/timezone', 'not an IANA time zone');
      if (s.days.length === 0) throw ruleErrors.invalid('/body/schedule/days', 'at least one day');
    }
  }

  private async checkTarget(
    customerId: string,
    t: RuleTarget,
  ): Promise<{ type: RuleTarget['type']; value: string | null }> {
    if (t.type === 'all') return { type: 'all', value: null };
    const value = t.value ?? '';
    if (!value) throw ruleErrors.invalid('/body/target/value', `a ${t.type} target names one`);
    const found =
      t.type === 'device'
        ? await IotRepo.of(this.store).device(customerId, value)
        : t.type === 'group'
          ? await IotRepo.of(this.store).group(customerId, value)
          : t.type === 'profile'
            ? await CatalogueRepo.of(this.store).profile(customerId, value)
            : true;
    if (!found) throw ruleErrors.invalid('/body/target/value', `no such ${t.type}: ${value}`);
    return { type: t.type, value };
  }

  private async row(customerId: string, id: string) {
    const row = await this.repo.rule(customerId, id);
    if (!row) throw ruleErrors.notFound();
    return row;
  }
}

export function ruleInputOf(r: IotRulesTable): RuleInput {
  return {
    name: r.name,
    description: r.description,
    enabled: r.enabled === 1,
    target: { type: r.target_type, value: r.target_value },
    severities: JSON.parse(r.severities) as RuleInput['severities'],
    clear_condition: r.clear_condition ? (JSON.parse(r.clear_condition) as Condition) : null,
    schedule: r.schedule ? (JSON.parse(r.schedule) as Schedule) : null,
  };
}

export const ruleView = (r: IotRulesTable) => {
  const input = ruleInputOf(r);
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    enabled: r.enabled === 1,
    target: { type: r.target_type, value: r.target_value },
    severities: input.severities,
    clear_condition: input.clear_condition ?? null,
    schedule: input.schedule ?? null,
    created_at: new Date(Number(r.created_at)).toISOString(),
    updated_at: new Date(Number(r.updated_at)).toISOString(),
  };
};
