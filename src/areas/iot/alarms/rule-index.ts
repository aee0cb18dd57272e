/**
 * The rule side of the engine: a rule as the hot path judges it (loaded once per read of the
 * account's rules) and the index that says which rules a message can touch. Apart from the engine
 * because it is pure (no store, no state) and the inactivity sweep loads rules the same way.
 */
import {
  type Condition,
  type Filter,
  SEVERITIES,
  SEVERITY_RANK,
  type Severity,
  scheduleActive,
} from './conditions.js';
import type { DeviceFacts } from './device-cache.js';
import { type RuleInput, ruleInputOf } from './rules.js';
import type { IotRulesTable } from './tables.js';

/** A condition judged on messages, as the hot path needs it. */
export interface JudgedCondition {
  severity: Severity;
  rank: number;
  condition: Condition;
  filters: Filter[];
  /** Its key in a device's held state (repeating and duration conditions). */
  heldKey: string;
}

export interface LoadedRule {
  row: IotRulesTable;
  input: RuleInput;
  /** The conditions judged on messages, worst severity first (worked out once per load). */
  judged: JudgedCondition[];
  clearFilters: Filter[] | null;
  /** Its inactivity alarms clear on telemetry, or on a connection. */
  clearsOnTelemetry: boolean;
  clearsOnConnect: boolean;
  /** Some filter reads the device's metadata (parsed only then). */
  readsAttributes: boolean;
  /**
   * The telemetry keys its conditions read: a message is judged by the rules that read one of its
   * keys. Null when a condition reads no telemetry key (only attributes): judged on every message.
   */
  keys: string[] | null;
  /** The minute (epoch) whose schedule answer is cached, and that answer. */
  scheduleMinute: number;
  scheduleOpen: boolean;
  /** The message being judged last touched it (a rule reading two keys of a message runs once). */
  stamp: number;
}

export function load(row: IotRulesTable): LoadedRule {
  const input = ruleInputOf(row);
  const inactivity = inactivityConditions(input);
  const judged = SEVERITIES.flatMap((s): JudgedCondition[] => {
    const c = input.severities[s];
    return c && c.type !== 'inactivity'
      ? [
          {
            severity: s,
            rank: SEVERITY_RANK[s],
            condition: c,
            filters: c.filters ?? [],
            heldKey: `${row.id}|${s}`,
          },
        ]
      : [];
  });
  const conditions = [
    ...judged.map((j) => j.condition),
    ...(input.clear_condition ? [input.clear_condition] : []),
  ];
  const filters = conditions.flatMap((c) => c.filters ?? []);
  const telemetryKeys = (c: Condition) =>
    (c.filters ?? []).filter((f) => (f.source ?? 'telemetry') === 'telemetry').map((f) => f.key);
  const everyMessage = conditions.some((c) => telemetryKeys(c).length === 0);
  return {
    row,
    input,
    judged,
    clearFilters: input.clear_condition ? (input.clear_condition.filters ?? []) : null,
    clearsOnTelemetry: inactivity.some(([, c]) => (c.inactivity_basis ?? 'telemetry') === 'telemetry'),
    clearsOnConnect: inactivity.some(([, c]) => c.inactivity_basis === 'connection'),
    readsAttributes: filters.some((f) => f.source === 'attribute'),
    keys: everyMessage ? null : [...new Set(conditions.flatMap(telemetryKeys))],
    scheduleMinute: -1,
    scheduleOpen: true,
    stamp: 0,
  };
}

/** Whether the rule's schedule lets it be judged at `ms` (worked out once a minute). */
export function scheduled(r: LoadedRule, ms: number): boolean {
  const schedule = r.input.schedule;
  if (!schedule) return true;
  const minute = Math.floor(ms / 60_000);
  if (minute !== r.scheduleMinute) {
    r.scheduleOpen = scheduleActive(schedule, ms);
    r.scheduleMinute = minute;
  }
  return r.scheduleOpen;
}

/** Which rules a message can touch: by the keys they read. */
export interface RuleIndex {
  byKey: Map<string, LoadedRule[]>;
  /** Rules with a condition that reads no telemetry key. */
  everyMessage: LoadedRule[];
  clearsOnTelemetry: LoadedRule[];
  clearsOnConnect: LoadedRule[];
}

/** An account's enabled rules, as last read, and their index. */
export interface RuleSet extends RuleIndex {
  at: number;
  rules: LoadedRule[];
  /** Every rule targets every device: the set is every device's index. */
  allDevices: boolean;
}

export function indexOf(rules: LoadedRule[]): RuleIndex {
  const byKey = new Map<string, LoadedRule[]>();
  const everyMessage: LoadedRule[] = [];
  for (const r of rules) {
    if (r.judged.length === 0 && !r.clearFilters) continue; // inactivity only: the clock judges it
    if (r.keys === null) everyMessage.push(r);
    else
      for (const k of r.keys) {
        const list = byKey.get(k);
        if (list) list.push(r);
        else byKey.set(k, [r]);
      }
  }
  return {
    byKey,
    everyMessage,
    clearsOnTelemetry: rules.filter((r) => r.clearsOnTelemetry),
    clearsOnConnect: rules.filter((r) => r.clearsOnConnect),
  };
}

export function targets(rule: IotRulesTable, d: DeviceFacts): boolean {
  switch (rule.target_type) {
    case 'all':
      return true;
    case 'device':
      return d.row.device_id === rule.target_value;
    case 'group':
      return d.groups.includes(rule.target_value ?? '');
    case 'profile':
      return d.row.profile_id === rule.target_value;
    case 'device_type':
      return d.row.device_type === rule.target_value;
  }
}

export const inactivityConditions = (input: RuleInput) =>
  SEVERITIES.flatMap((s) => {
    const c = input.severities[s];
    return c?.type === 'inactivity' ? [[s, c] as [Severity, Condition]] : [];
  });
