import type { Logger } from 'pino';
import type { Store } from '../../../kernel/store/store.js';
import type { IotDevicesTable } from '../migrations.js';
import { IotRepo } from '../repo.js';
import { pointValue } from '../telemetry.js';
import type { IotEvent, TelemetryStream } from '../telemetry-stream.js';
import type { Alarms } from './alarms.js';
import {
  type Condition,
  filtersMatch,
  type Scalar,
  type Schedule,
  SEVERITIES,
  SEVERITY_RANK,
  type Severity,
  scheduleActive,
} from './conditions.js';
import { AlarmRepo } from './repo.js';
import { type RuleInput, ruleInputOf } from './rules.js';
import type { IotRulesTable } from './tables.js';

/** What another process changed (rules, devices) is seen within this long; this process's at once. */
const CACHE_MS = 5_000;
const MAX_DEVICES_CACHED = 10_000;
/**
 * How long what this process knows of a rule's open alarm for a device is trusted. Alarm moves in
 * any process are announced (OPEN_CHANNEL), so this only bounds the cost of a lost notice.
 */
const OPEN_CACHE_MS = 60_000;
const OPEN_CHANNEL = 'fjord_iot_alarm_open';
/** Repeating counters and duration starts kept in memory (read again from the store past this). */
const MAX_HELD_CACHED = 200_000;

export interface LoadedRule {
  row: IotRulesTable;
  input: RuleInput;
  /** The conditions judged on messages, worst severity first (worked out once per load). */
  judged: [Severity, Condition][];
  /** Its inactivity alarms clear on telemetry, or on a connection. */
  clearsOnTelemetry: boolean;
  clearsOnConnect: boolean;
  /** Some filter reads the device's metadata (parsed only then). */
  readsAttributes: boolean;
}

export function load(row: IotRulesTable): LoadedRule {
  const input = ruleInputOf(row);
  const inactivity = inactivityConditions(input);
  const judged = SEVERITIES.flatMap((s) => {
    const c = input.severities[s];
    return c && c.type !== 'inactivity' ? [[s, c] as [Severity, Condition]] : [];
  });
  const filters = [
    ...judged.map(([, c]) => c),
    ...(input.clear_condition ? [input.clear_condition] : []),
  ].flatMap((c) => c.filters ?? []);
  return {
    row,
    input,
    judged,
    clearsOnTelemetry: inactivity.some(([, c]) => (c.inactivity_basis ?? 'telemetry') === 'telemetry'),
    clearsOnConnect: inactivity.some(([, c]) => c.inactivity_basis === 'connection'),
    readsAttributes: filters.some((f) => f.source === 'attribute'),
  };
}
const NO_ATTRIBUTES: Record<string, unknown> = {};
interface DeviceFacts {
  row: IotDevicesTable;
  groups: string[];
  at: number;
}
interface Held {
  count: number;
  since: number | null;
}

/**
 * Evaluates alarm rules: on each accepted message in the process that received it (against the
 * device's latest values, as ThingsBoard does), and on the clock for duration and inactivity.
 * Repeating counters and duration starts live in the store (cached here), so a restart or another
 * process carries on where this one stopped. One device's messages are judged in order.
 */
export class RuleEngine {
  private readonly devices: IotRepo;
  private readonly repo: AlarmRepo;
  private rules = new Map<string, { at: number; rules: LoadedRule[] }>();
  private readonly facts = new Map<string, DeviceFacts>();
  private readonly latest = new Map<string, Record<string, Scalar>>();
  private readonly held = new Map<string, Held>();
  private readonly queues = new Map<string, Promise<void>>();
  /** Per rule and device: the open alarm's severity, or null when none is open (as last seen). */
  private readonly open = new Map<string, { severity: Severity | null; at: number }>();

  constructor(
    store: Store,
    private readonly alarms: Alarms,
    private readonly log: Logger,
  ) {
    this.devices = IotRepo.of(store);
    this.repo = AlarmRepo.of(store);
    // Every process learns which alarms are open, so none needs to ask the store per message.
    alarms.onEvent((a, event) => {
      const notice = `${a.rule_id}|${a.device_pk}|${event === 'resolved' ? '' : a.severity}`;
      this.noteOpen(notice);
      store.publish(OPEN_CHANNEL, notice).catch(() => {});
    });
    store.subscribe(OPEN_CHANNEL, (notice) => (notice ? this.noteOpen(notice) : this.open.clear()));
  }

  /**
   * Opens or raises the alarm unless this process knows one of that severity or worse is open:
   * a condition that stays true costs no write per message.
   */
  private async raise(input: Parameters<Alarms['raise']>[0]) {
    const known = this.knownOpen(input.rule.id, input.device.pk);
    if (known?.severity && SEVERITY_RANK[known.severity] >= SEVERITY_RANK[input.severity]) return null;
    const outcome = await this.alarms.raise(input);
    if (!outcome)
      this.open.set(`${input.rule.id}|${input.device.pk}`, { severity: input.severity, at: Date.now() });
    return outcome;
  }

  /** Resolves the open alarm, unless this process knows none is open. */
  private async clear(ruleId: string, pk: string, details: Record<string, unknown>) {
    const known = this.knownOpen(ruleId, pk);
    if (known && known.severity === null) return;
    if (!(await this.alarms.clearByRule(ruleId, pk, details)))
      this.open.set(`${ruleId}|${pk}`, { severity: null, at: Date.now() });
  }

  private knownOpen(ruleId: string, pk: string) {
    const hit = this.open.get(`${ruleId}|${pk}`);
    return hit && Date.now() - hit.at < OPEN_CACHE_MS ? hit : undefined;
  }

  /** `<rule>|<device pk>|<severity, or empty when none is open>`, from this or another process. */
  private noteOpen(notice: string) {
    const cut = notice.lastIndexOf('|');
    const severity = notice.slice(cut + 1);
    if (this.open.size >= MAX_HELD_CACHED) this.open.clear();
    this.open.set(notice.slice(0, cut), {
      severity: severity ? (severity as Severity) : null,
      at: Date.now(),
    });
  }

  attach(stream: TelemetryStream) {
    return stream.subscribe((e) => this.onEvent(e));
  }

  /** A rule changed in this process: every cached rule, counter and duration is read again. */
  forgetRules() {
    this.rules = new Map();
    this.held.clear();
  }

  /** Resolves when every message received so far has been judged (for tests and shutdown). */
  async settled() {
    await Promise.all([...this.queues.values()]);
  }

  private onEvent(e: IotEvent) {
    if (e.kind === 'telemetry') return;
    const key = `${e.customer_id}|${e.device_id}`;
    if (e.kind === 'deleted') {
      this.facts.delete(key);
      return;
    }
    const prev = this.queues.get(key) ?? Promise.resolve();
    const next = prev
      .then(() => this.judge(e))
      .catch((err) => this.log.error({ err, device: e.device_id }, 'iot: rule evaluation failed'))
      .finally(() => {
        if (this.queues.get(key) === next) this.queues.delete(key);
      });
    this.queues.set(key, next);
  }

  private async judge(e: Exclude<IotEvent, { kind: 'telemetry' | 'deleted' }>) {
    const rules = await this.rulesOf(e.customer_id);
    if (rules.length === 0) return;
    const device = await this.factsOf(e.customer_id, e.device_id, e.kind !== 'message');
    if (!device) return;
    const applicable = rules.filter((r) => targets(r.row, device));
    if (applicable.length === 0) return;
    if (e.kind !== 'message') {
      // Connected again: inactivity alarms judged on the connection clear.
      if (e.kind === 'connected')
        for (const r of applicable)
          if (r.clearsOnConnect) await this.clear(r.row.id, device.row.id, { reason: 'device connected' });
      return;
    }
    const values = await this.latestOf(device.row.id);
    Object.assign(values, e.values);
    let attributes: Record<string, unknown> | null = null;
    for (const r of applicable) {
      if (r.input.schedule && !scheduleActive(r.input.schedule, e.at)) continue;
      if (r.clearsOnTelemetry) await this.clear(r.row.id, device.row.id, { reason: 'telemetry received' });
      if (r.readsAttributes && attributes === null) attributes = attributesOf(device.row);
      const attrs = r.readsAttributes && attributes ? attributes : NO_ATTRIBUTES;
      let fired: { severity: Severity; condition: Condition } | null = null;
      for (const [severity, c] of r.judged) {
        const match = filtersMatch(c.filters ?? [], values, attrs);
        const stepped =
          c.type === 'simple' ? match : this.step(r.row.id, device.row.id, severity, c, match, e.at);
        const fires = typeof stepped === 'boolean' ? stepped : await stepped;
        if (fires && !fired) fired = { severity, condition: c };
      }
      if (fired)
        await this.raise({
          customerId: e.customer_id,
          rule: { id: r.row.id, name: r.row.name },
          device: { pk: device.row.id, id: device.row.device_id },
          severity: fired.severity,
          details: { condition: fired.condition.type, values: pick(values, fired.condition) },
        });
      else if (r.input.clear_condition && filtersMatch(r.input.clear_condition.filters ?? [], values, attrs))
        await this.clear(r.row.id, device.row.id, { values: pick(values, r.input.clear_condition) });
    }
  }

  /**
   * Moves a repeating or duration condition's state by one message; answers whether it fires
   * now — at once when nothing needs reading or writing (the common case), else a promise.
   */
  private step(
    ruleId: string,
    pk: string,
    severity: Severity,
    c: Condition,
    match: boolean,
    at: number,
  ): boolean | Promise<boolean> {
    const key = `${ruleId}|${pk}|${severity}`;
    const held = this.held.get(key);
    if (!held)
      return this.loadHeld(ruleId, pk, severity).then((h) =>
        this.advance(key, h, ruleId, pk, severity, c, match, at),
      );
    return this.advance(key, held, ruleId, pk, severity, c, match, at);
  }

  private advance(
    key: string,
    held: Held,
    ruleId: string,
    pk: string,
    severity: Severity,
    c: Condition,
    match: boolean,
    at: number,
  ): boolean | Promise<boolean> {
    const next: Held =
      c.type === 'repeating'
        ? { count: match ? held.count + 1 : 0, since: null }
        : { count: 0, since: match ? (held.since ?? at) : null };
    const fires =
      c.type === 'repeating'
        ? next.count >= (c.count ?? 1)
        : next.since !== null && at - next.since >= (c.duration_seconds ?? 0) * 1000;
    if (next.count === held.count && next.since === held.since) return fires;
    this.held.set(key, next);
    return this.repo
      .saveState({ rule_id: ruleId, device_pk: pk, severity, ...next, updated_at: at })
      .then(() => fires);
  }

  /**
   * Reads a rule's state for a device from the store, once: a key with no row is remembered as
   * "nothing held", so a condition that stays false costs no read per message.
   */
  private async loadHeld(ruleId: string, pk: string, severity: Severity): Promise<Held> {
    if (this.held.size >= MAX_HELD_CACHED) this.held.clear();
    for (const s of await this.repo.state(ruleId, pk))
      this.held.set(`${ruleId}|${pk}|${s.severity}`, {
        count: Number(s.count),
        since: s.since === null ? null : Number(s.since),
      });
    const key = `${ruleId}|${pk}|${severity}`;
    const held = this.held.get(key) ?? { count: 0, since: null };
    this.held.set(key, held);
    return held;
  }

  private async rulesOf(customerId: string): Promise<LoadedRule[]> {
    const hit = this.rules.get(customerId);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.rules;
    const rules = (await this.repo.rules(customerId)).filter((r) => r.enabled === 1).map(load);
    this.rules.set(customerId, { at: Date.now(), rules });
    return rules;
  }

  private async factsOf(customerId: string, deviceId: string, fresh: boolean): Promise<DeviceFacts | null> {
    const key = `${customerId}|${deviceId}`;
    const hit = this.facts.get(key);
    if (hit && !fresh && Date.now() - hit.at < CACHE_MS) return hit;
    const row = await this.devices.device(customerId, deviceId);
    if (!row) return null;
    const facts = { row, groups: await this.devices.groupsOf(row.id), at: Date.now() };
    if (this.facts.size >= MAX_DEVICES_CACHED) this.facts.clear();
    this.facts.set(key, facts);
    return facts;
  }

  private async latestOf(pk: string): Promise<Record<string, Scalar>> {
    let values = this.latest.get(pk);
    if (!values) {
      values = {};
      for (const p of await this.devices.latest(pk)) values[p.key] ??= pointValue(p);
      if (this.latest.size >= MAX_DEVICES_CACHED) this.latest.clear();
      this.latest.set(pk, values);
    }
    return values;
  }
}

function targets(rule: IotRulesTable, d: DeviceFacts): boolean {
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

function attributesOf(d: IotDevicesTable): Record<string, unknown> {
  return {
    ...(JSON.parse(d.metadata) as Record<string, unknown>),
    device_type: d.device_type,
    firmware_version: d.firmware_version,
  };
}

/** The values a condition looked at, for the alarm's details. */
function pick(values: Record<string, Scalar>, c: Condition): Record<string, Scalar> {
  const out: Record<string, Scalar> = {};
  for (const f of c.filters ?? []) if (values[f.key] !== undefined) out[f.key] = values[f.key]!;
  return out;
}

export type { Schedule };
