import type { Logger } from 'pino';
import { GroupCommit } from '../../../kernel/store/group-commit.js';
import type { Store } from '../../../kernel/store/store.js';
import type { IotEvent, TelemetryStream } from '../telemetry-stream.js';
import type { Alarms } from './alarms.js';
import {
  type Filter,
  filtersMatch,
  type Scalar,
  type Schedule,
  SEVERITIES,
  SEVERITY_RANK,
  type Severity,
} from './conditions.js';
import { attributesOf, CACHE_MS, DeviceCache, type DeviceState, OPEN_REREAD_MS } from './device-cache.js';
import { AlarmRepo } from './repo.js';
import {
  indexOf,
  type JudgedCondition,
  type LoadedRule,
  load,
  type RuleIndex,
  type RuleSet,
  scheduled,
  targets,
} from './rule-index.js';
import type { IotRuleStateTable } from './tables.js';

/** Rule state rows written in one transaction of the group commit. */
const STATE_BATCH = 2000;

type StateWrite = IotRuleStateTable & { gen: number };
type Action =
  | { raise: true; rule: LoadedRule; severity: Severity; details: Record<string, unknown> }
  | { raise: false; rule: LoadedRule; details: Record<string, unknown> };

const NO_ATTRIBUTES: Record<string, unknown> = {};
/** The list of actions with `a` appended (allocated only once something must be written). */
function added(actions: Action[] | null, a: Action): Action[] {
  if (!actions) return [a];
  actions.push(a);
  return actions;
}

/**
 * Evaluates alarm rules: on each accepted message in the process that received it (against the
 * device's latest values, as ThingsBoard does), and on the clock for duration and inactivity.
 *
 * The hot path reads nothing from the store and allocates almost nothing: a message touches only
 * the rules that read one of its keys (indexed per account and device), each device's open alarms
 * and rule state are read once and then kept exact in memory (alarm moves of every process arrive
 * as store notices), and the state changes of repeating and duration conditions are written
 * through a group commit. State therefore still lives in the store: a restart or another process
 * carries on where this one stopped. One device's messages are judged in order.
 *
 * Which rules a message touches is worked out in rule-index.ts; what is kept per device (and the
 * alarm notices that keep it exact) in device-cache.ts; this class judges and writes.
 */
export class RuleEngine {
  private readonly repo: AlarmRepo;
  private rules = new Map<string, RuleSet>();
  private readonly loading = new Map<string, Promise<RuleSet>>();
  /** Each rule's `updated_at` as last loaded: a change elsewhere drops what is held for it. */
  private readonly versions = new Map<string, number>();
  private readonly devices: DeviceCache;
  private readonly queues = new Map<string, Promise<void>>();
  /** Bumped by every rule change here: a rule set read before it is read again. */
  private rulesGen = 0;
  private stamp = 0;
  /** Write generation, and per rule the generation its state was last reset in. */
  private gen = 0;
  private readonly resetAt = new Map<string, number>();
  private readonly stateWrites: GroupCommit<StateWrite>;
  /** Resolves once every state write submitted so far is committed (or failed). */
  private lastWrite: Promise<void> = Promise.resolve();

  constructor(
    store: Store,
    private readonly alarms: Alarms,
    private readonly log: Logger,
  ) {
    this.devices = new DeviceCache(store, alarms, () => this.lastWrite);
    this.repo = AlarmRepo.of(store);
    this.stateWrites = new GroupCommit<StateWrite>(
      (items) =>
        store.unitOfWork({}, async ({ tx }) => {
          // A rule edited meanwhile starts again: its older writes are dropped.
          const rows = items
            .filter((w) => (this.resetAt.get(w.rule_id) ?? -1) < w.gen)
            .map(({ gen: _gen, ...row }) => row);
          await AlarmRepo.over(tx).saveStates(rows);
        }),
      STATE_BATCH,
    );
  }

  attach(stream: TelemetryStream) {
    return stream.subscribe((e) => this.onEvent(e), {
      // A customer whose rules were read lately and are none: nothing to judge in its messages.
      wantsMessagesOf: (customerId) => {
        const set = this.rules.get(customerId);
        return !set || Date.now() - set.at >= CACHE_MS || set.rules.length > 0;
      },
    });
  }

  /**
   * A rule changed in this process (its state in the store was reset in the same transaction):
   * the account's rules are read again and what is held for the rule is dropped at once.
   */
  forgetRules(ruleId?: string) {
    this.rulesGen++;
    this.loading.clear(); // a read under way may predate the change: the next message reads again
    for (const set of this.rules.values()) set.at = 0;
    if (ruleId) this.forgetHeld(ruleId);
  }

  private forgetHeld(ruleId: string) {
    this.resetAt.set(ruleId, this.gen++);
    const keys = SEVERITIES.map((s) => `${ruleId}|${s}`);
    for (const d of this.devices.all()) if (d.held.size) for (const k of keys) d.held.delete(k);
  }

  /** Resolves when every message received so far has been judged (for tests and shutdown). */
  async settled() {
    await Promise.all([...this.queues.values()]);
    await this.lastWrite;
  }

  private onEvent(e: IotEvent) {
    if (e.kind === 'telemetry') return;
    const key = `${e.customer_id}|${e.device_id}`;
    if (e.kind === 'deleted') {
      this.devices.drop(key);
      return;
    }
    const prev = this.queues.get(key);
    let out: void | Promise<void>;
    if (prev !== undefined) out = prev.then(() => this.judge(key, e));
    else {
      try {
        out = this.judge(key, e);
      } catch (err) {
        this.failed(err, e.device_id);
        return;
      }
      if (!out) return; // judged at once: nothing to read or write
    }
    const next: Promise<void> = out
      .catch((err) => this.failed(err, e.device_id))
      .finally(() => {
        if (this.queues.get(key) === next) this.queues.delete(key);
      });
    this.queues.set(key, next);
  }

  private failed(err: unknown, device: string) {
    this.log.error({ err, device }, 'iot: rule evaluation failed');
  }

  /** Judges the event; answers a promise only when something must be read or written. */
  private judge(key: string, e: Exclude<IotEvent, { kind: 'telemetry' | 'deleted' }>): void | Promise<void> {
    const now = Date.now();
    const set = this.rules.get(e.customer_id);
    if (!set || now - set.at >= CACHE_MS)
      return this.ruleSetOf(e.customer_id).then((s) => this.judgeWith(key, e, s));
    return this.judgeWith(key, e, set);
  }

  private judgeWith(
    key: string,
    e: Exclude<IotEvent, { kind: 'telemetry' | 'deleted' }>,
    set: RuleSet,
  ): void | Promise<void> {
    if (set.rules.length === 0 || e.kind === 'disconnected') return;
    if (e.kind === 'connected') return this.judgeConnection(key, e);
    const d = this.devices.get(key);
    const now = Date.now();
    if (
      !d ||
      d.openGen !== this.devices.openGen ||
      now - d.facts.at >= CACHE_MS ||
      now - d.openAt >= OPEN_REREAD_MS
    )
      return this.devices.stateOf(key, e.customer_id, e.device_id, false).then((s) => {
        if (s) return this.judgeMessage(s, e, set);
      });
    return this.judgeMessage(d, e, set);
  }

  /** Connected again: inactivity alarms judged on the connection clear. */
  private async judgeConnection(key: string, e: Extract<IotEvent, { kind: 'connected' }>) {
    // The device may have been judged by another process meanwhile: read everything again.
    const d = await this.devices.stateOf(key, e.customer_id, e.device_id, true);
    if (!d) return;
    const set = await this.ruleSetOf(e.customer_id);
    const index = this.indexFor(d, set);
    for (const r of index.clearsOnConnect)
      if (d.open.has(r.row.id)) await this.clear(d, r, { reason: 'device connected' });
  }

  private judgeMessage(d: DeviceState, e: Extract<IotEvent, { kind: 'message' }>, set: RuleSet) {
    const values = d.latest;
    for (const k in e.values) values[k] = e.values[k]!;
    const index = this.indexFor(d, set);
    const stamp = ++this.stamp;
    const at = e.at;
    let actions: Action[] | null = null;
    if (d.open.size > 0)
      for (const r of index.clearsOnTelemetry)
        if (d.open.has(r.row.id) && scheduled(r, at)) {
          actions = added(actions, { raise: false, rule: r, details: { reason: 'telemetry received' } });
          // Resolved before the rule's other conditions are judged, which may open a new alarm.
          d.open.delete(r.row.id);
        }
    for (const k in e.values) {
      const rules = index.byKey.get(k);
      if (rules)
        for (let i = 0; i < rules.length; i++)
          actions = this.judgeRule(rules[i]!, d, values, at, stamp, actions);
    }
    for (let i = 0; i < index.everyMessage.length; i++)
      actions = this.judgeRule(index.everyMessage[i]!, d, values, at, stamp, actions);
    if (actions) return this.act(d, e.customer_id, actions);
  }

  /** One rule on one message: pushes what must be written (an alarm raised or cleared). */
  private judgeRule(
    r: LoadedRule,
    d: DeviceState,
    values: Record<string, Scalar>,
    at: number,
    stamp: number,
    actions: Action[] | null,
  ): Action[] | null {
    if (r.stamp === stamp) return actions;
    r.stamp = stamp;
    if (r.input.schedule && !scheduled(r, at)) return actions;
    const attrs = r.readsAttributes ? attributesOf(d.facts) : NO_ATTRIBUTES;
    let fired: JudgedCondition | null = null;
    for (let i = 0; i < r.judged.length; i++) {
      const j = r.judged[i]!;
      const match = filtersMatch(j.filters, values, attrs);
      const fires = j.condition.type === 'simple' ? match : this.step(d, r, j, match, at);
      if (fires && !fired) fired = j;
    }
    if (fired) {
      const open = d.open.get(r.row.id);
      // Already open at that severity or worse: a condition that stays true writes nothing.
      if (open === undefined || SEVERITY_RANK[open] < fired.rank)
        actions = added(actions, {
          raise: true,
          rule: r,
          severity: fired.severity,
          details: { condition: fired.condition.type, values: pick(values, fired.filters) },
        });
    } else if (r.clearFilters && d.open.has(r.row.id) && filtersMatch(r.clearFilters, values, attrs))
      actions = added(actions, { raise: false, rule: r, details: { values: pick(values, r.clearFilters) } });
    return actions;
  }

  /**
   * Moves a repeating or duration condition's state by one message and answers whether it fires
   * now. A change is kept at once and written through the group commit.
   */
  private step(d: DeviceState, r: LoadedRule, j: JudgedCondition, match: boolean, at: number): boolean {
    const held = d.held.get(j.heldKey);
    if (!match && (held === undefined || (held.count === 0 && held.since === null))) return false;
    const c = j.condition;
    let count = 0;
    let since: number | null = null;
    let fires: boolean;
    if (c.type === 'repeating') {
      const need = c.count ?? 1;
      // Capped at the count: a condition that stays true writes nothing more.
      count = match ? Math.min((held?.count ?? 0) + 1, need) : 0;
      fires = count >= need;
    } else {
      since = match ? (held?.since ?? at) : null;
      fires = since !== null && at - since >= (c.duration_seconds ?? 0) * 1000;
    }
    if (held && held.count === count && held.since === since) return fires;
    if (held) {
      held.count = count;
      held.since = since;
    } else d.held.set(j.heldKey, { count, since });
    this.lastWrite = this.stateWrites
      .submit([
        {
          rule_id: r.row.id,
          device_pk: d.facts.row.id,
          severity: j.severity,
          count,
          since,
          updated_at: at,
          gen: this.gen,
        },
      ])
      .catch((err) => this.failed(err, d.facts.row.device_id));
    return fires;
  }

  /** Raises and clears alarms, in order. */
  private async act(d: DeviceState, customerId: string, actions: Action[]) {
    for (const a of actions) {
      if (!a.raise) {
        await this.clear(d, a.rule, a.details);
        continue;
      }
      const outcome = await this.alarms.raise({
        customerId,
        rule: { id: a.rule.row.id, name: a.rule.row.name },
        device: { pk: d.facts.row.id, id: d.facts.row.device_id },
        severity: a.severity,
        details: a.details,
      });
      // Open already (a notice not yet here): read what is open.
      if (!outcome) await this.reread(d, a.rule.row.id);
    }
  }

  private async clear(d: DeviceState, r: LoadedRule, details: Record<string, unknown>) {
    if (!(await this.alarms.clearByRule(r.row.id, d.facts.row.id, details))) await this.reread(d, r.row.id);
  }

  private async reread(d: DeviceState, ruleId: string) {
    const open = await this.repo.openAlarm(ruleId, d.facts.row.id);
    if (open) d.open.set(ruleId, open.severity as Severity);
    else d.open.delete(ruleId);
  }

  /** The rules that apply to the device, from the account's set (shared when all target all). */
  private indexFor(d: DeviceState, set: RuleSet): RuleIndex {
    if (d.index && d.indexSet === set && d.indexFacts === d.facts) return d.index;
    d.index = set.allDevices ? set : indexOf(set.rules.filter((r) => targets(r.row, d.facts)));
    d.indexSet = set;
    d.indexFacts = d.facts;
    return d.index;
  }

  private ruleSetOf(customerId: string): Promise<RuleSet> {
    const set = this.rules.get(customerId);
    if (set && Date.now() - set.at < CACHE_MS) return Promise.resolve(set);
    const under = this.loading.get(customerId);
    if (under) return under;
    const loading: Promise<RuleSet> = this.loadRuleSet(customerId).finally(() => {
      if (this.loading.get(customerId) === loading) this.loading.delete(customerId);
    });
    this.loading.set(customerId, loading);
    return loading;
  }

  private async loadRuleSet(customerId: string): Promise<RuleSet> {
    const before = this.rules.get(customerId);
    const gen = this.rulesGen;
    const rows = await this.repo.rules(customerId);
    // A rule changed here while this was read: read again (what was read may predate it).
    if (gen !== this.rulesGen) return this.ruleSetOf(customerId);
    // A rule edited, disabled or deleted by another process starts its counters again.
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.id);
      const was = this.versions.get(row.id);
      const version = row.enabled === 1 ? Number(row.updated_at) : -1;
      if (was !== undefined && was !== version) this.forgetHeld(row.id);
      this.versions.set(row.id, version);
    }
    for (const r of before?.rules ?? [])
      if (!seen.has(r.row.id)) {
        this.forgetHeld(r.row.id);
        this.versions.delete(r.row.id);
      }
    const rules = rows.filter((r) => r.enabled === 1).map(load);
    const set: RuleSet = {
      at: Date.now(),
      rules,
      allDevices: rules.every((r) => r.row.target_type === 'all'),
      ...indexOf(rules),
    };
    this.rules.set(customerId, set);
    return set;
  }
}

/** The values a condition looked at, for the alarm's details. */
function pick(values: Record<string, Scalar>, filters: Filter[]): Record<string, Scalar> {
  const out: Record<string, Scalar> = {};
  for (const f of filters) if (values[f.key] !== undefined) out[f.key] = values[f.key]!;
  return out;
}

export type { Schedule };
