import type { Clock } from '../../../kernel/clock.js';
import { AppError } from '../../../kernel/errors.js';
import type { PageRequest } from '../../../kernel/http/pagination.js';
import { newId } from '../../../kernel/ids.js';
import { GroupCommit } from '../../../kernel/store/group-commit.js';
import type { Store } from '../../../kernel/store/store.js';
import type { Unit } from '../../../kernel/store/unit-of-work.js';
import { SEVERITIES, SEVERITY_RANK, type Severity } from './conditions.js';
import { type AlarmFilter, AlarmRepo } from './repo.js';
import type { IotAlarmsTable } from './tables.js';

export type AlarmEvent = 'created' | 'escalated' | 'acknowledged' | 'resolved' | 'reopened';

export interface RaiseInput {
  customerId: string;
  rule: { id: string; name: string };
  device: { pk: string; id: string };
  severity: Severity;
  details: Record<string, unknown>;
}
/** A move the rule engine or the clock asks for; `outcome` is set once its transaction ran. */
type RuleMove = { outcome: AlarmEvent | null } & (
  | { raise: RaiseInput; clear?: undefined }
  | { raise?: undefined; clear: { ruleId: string; devicePk: string; details: Record<string, unknown> } }
);
/** Rule moves written in one transaction. */
const MOVES_PER_COMMIT = 200;
export type AlarmListener = (alarm: IotAlarmsTable, event: AlarmEvent) => void;

export const alarmErrors = {
  notFound: () => new AppError('not_found', 'alarm_not_found', 'No such alarm.'),
  state: (action: string, status: string, allowed: string) =>
    new AppError(
      'conflict',
      'invalid_alarm_state',
      `Only ${allowed} alarm can be ${action}; this one is ${status}.`,
      { extra: { status } },
    ),
  alreadyOpen: (id: string) =>
    new AppError(
      'conflict',
      'alarm_already_open',
      `The rule has another open alarm for this device (${id}); resolve it first.`,
      { extra: { open_alarm_id: id } },
    ),
};

/** Who moved an alarm: `rule:<id>` for the rule engine, else the credential that asked. */
export type Actor = string;

/**
 * Alarms: at most one open (active or acknowledged) per device and rule. A worse severity raises
 * the open one; the rule's clear condition, renewed activity or a user resolves it; only a
 * resolved alarm reopens. Every move is a timeline entry with who or what made it.
 */
export class Alarms {
  readonly repo: AlarmRepo;
  private readonly listeners: AlarmListener[] = [];

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {
    this.repo = AlarmRepo.of(store);
  }

  onEvent(listener: AlarmListener) {
    this.listeners.push(listener);
  }

  /**
   * The rule found the condition of `severity` true for the device: opens an alarm, or raises the
   * open one's severity. Answers what happened (null: already open at that severity or worse).
   */
  async raise(input: RaiseInput): Promise<AlarmEvent | null> {
    const move: RuleMove = { raise: input, outcome: null };
    await this.ruleMoves.submit([move]);
    return move.outcome;
  }

  /** The rule's clear condition held (or the device is active again): resolves the open alarm. */
  async clearByRule(ruleId: string, devicePk: string, details: Record<string, unknown>): Promise<boolean> {
    const move: RuleMove = { clear: { ruleId, devicePk, details }, outcome: null };
    await this.ruleMoves.submit([move]);
    return move.outcome === 'resolved';
  }

  /**
   * The rules' moves share transactions (a group commit): a burst of alarms, say a threshold many
   * devices cross at once, commits once per batch rather than once per alarm. Each move still
   * holds its (rule, device) lock and reads the open alarm inside the transaction.
   */
  private readonly ruleMoves = new GroupCommit<RuleMove>(
    (moves) =>
      this.store.unitOfWork(
        {
          locks: moves.map((m) =>
            m.raise
              ? `iot:alarm:${m.raise.rule.id}:${m.raise.device.pk}`
              : `iot:alarm:${m.clear.ruleId}:${m.clear.devicePk}`,
          ),
        },
        async (unit) => {
          const repo = AlarmRepo.over(unit.tx);
          for (const m of moves)
            m.outcome = m.raise
              ? await this.raiseIn(unit, repo, m.raise)
              : await this.clearIn(unit, repo, m.clear.ruleId, m.clear.devicePk, m.clear.details);
        },
      ),
    MOVES_PER_COMMIT,
  );

  private async raiseIn(unit: Unit, repo: AlarmRepo, input: RaiseInput): Promise<AlarmEvent | null> {
    const now = this.clock.nowMs();
    const actor = `rule:${input.rule.id}`;
    const open = await repo.openAlarm(input.rule.id, input.device.pk);
    if (open) {
      if (SEVERITY_RANK[input.severity] <= SEVERITY_RANK[open.severity as Severity]) return null;
      const next = {
        ...open,
        severity: input.severity,
        updated_at: now,
        details: JSON.stringify(input.details),
      };
      await repo.updateAlarm(open.id, {
        severity: next.severity,
        updated_at: now,
        details: next.details,
      });
      await this.event(repo, open.id, now, 'severity_changed', actor, {
        from: open.severity,
        to: input.severity,
      });
      unit.afterCommit(() => this.emit(next, 'escalated'));
      return 'escalated';
    }
    const row: IotAlarmsTable = {
      id: newId(),
      customer_id: input.customerId,
      rule_id: input.rule.id,
      rule_name: input.rule.name,
      device_pk: input.device.pk,
      device_id: input.device.id,
      severity: input.severity,
      status: 'active',
      cleared_by: null,
      details: JSON.stringify(input.details),
      created_at: now,
      updated_at: now,
      acknowledged_at: null,
      acknowledged_by: null,
      resolved_at: null,
      resolved_by: null,
      last_notified_at: null,
    };
    await repo.insertAlarm(row);
    await this.event(repo, row.id, now, 'created', actor, { severity: input.severity, ...input.details });
    unit.afterCommit(() => this.emit(row, 'created'));
    return 'created';
  }

  private async clearIn(
    unit: Unit,
    repo: AlarmRepo,
    ruleId: string,
    devicePk: string,
    details: Record<string, unknown>,
  ): Promise<AlarmEvent | null> {
    const now = this.clock.nowMs();
    const open = await repo.openAlarm(ruleId, devicePk);
    if (!open) return null;
    const patch = {
      status: 'resolved' as const,
      cleared_by: 'rule',
      resolved_at: now,
      resolved_by: `rule:${ruleId}`,
      updated_at: now,
    };
    await repo.updateAlarm(open.id, patch);
    await this.event(repo, open.id, now, 'resolved', `rule:${ruleId}`, {
      cleared_by: 'rule',
      ...details,
    });
    unit.afterCommit(() => this.emit({ ...open, ...patch }, 'resolved'));
    return 'resolved';
  }

  acknowledge(customerId: string, id: string, actor: Actor) {
    return this.move(customerId, id, actor, 'acknowledged', (a, now) => {
      if (a.status !== 'active') throw alarmErrors.state('acknowledged', a.status, 'an active');
      return { status: 'acknowledged', acknowledged_at: now, acknowledged_by: actor };
    });
  }

  resolve(customerId: string, id: string, actor: Actor) {
    return this.move(customerId, id, actor, 'resolved', (a, now) => {
      if (a.status === 'resolved') throw alarmErrors.state('resolved', a.status, 'an active or acknowledged');
      return { status: 'resolved', cleared_by: 'user', resolved_at: now, resolved_by: actor };
    });
  }

  /** A resolved alarm becomes active again (unacknowledged), unless the rule already opened another. */
  async reopen(customerId: string, id: string, actor: Actor) {
    const a = await this.row(customerId, id);
    if (a.status !== 'resolved') throw alarmErrors.state('reopened', a.status, 'a resolved');
    return this.store.unitOfWork({ locks: [`iot:alarm:${a.rule_id}:${a.device_pk}`] }, async (unit) => {
      const repo = AlarmRepo.over(unit.tx);
      const open = await repo.openAlarm(a.rule_id, a.device_pk);
      if (open) throw alarmErrors.alreadyOpen(open.id);
      const now = this.clock.nowMs();
      const fresh = await repo.alarm(customerId, id);
      if (!fresh || fresh.status !== 'resolved')
        throw alarmErrors.state('reopened', fresh?.status ?? 'gone', 'a resolved');
      const patch = {
        status: 'active' as const,
        cleared_by: null,
        resolved_at: null,
        resolved_by: null,
        acknowledged_at: null,
        acknowledged_by: null,
        updated_at: now,
      };
      await repo.updateAlarm(id, patch);
      await this.event(repo, id, now, 'reopened', actor, {});
      const next = { ...fresh, ...patch };
      unit.afterCommit(() => this.emit(next, 'reopened'));
      return alarmView(next);
    });
  }

  async list(customerId: string, filter: AlarmFilter, page: PageRequest) {
    const { rows, total } = await this.repo.alarms(customerId, filter, page.limit, page.offset);
    return {
      alarms: rows.map(alarmView),
      total,
      page: page.page,
      page_size: page.size,
      has_more: page.offset + rows.length < total,
    };
  }

  async get(customerId: string, id: string) {
    return alarmView(await this.row(customerId, id));
  }

  async timeline(customerId: string, id: string) {
    await this.row(customerId, id);
    const events = await this.repo.events(id);
    return {
      alarm_id: id,
      events: events.map((e) => ({
        at: new Date(Number(e.at)).toISOString(),
        event: e.event,
        actor: e.actor,
        details: JSON.parse(e.details) as Record<string, unknown>,
      })),
    };
  }

  async summary(customerId: string) {
    const byStatus = { active: 0, acknowledged: 0, resolved: 0 };
    const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
    for (const r of await this.repo.counts(customerId)) {
      const n = Number(r.n);
      byStatus[r.status as keyof typeof byStatus] += n;
      if (r.status !== 'resolved') bySeverity[r.severity as Severity] += n;
    }
    return {
      open: byStatus.active + byStatus.acknowledged,
      by_status: byStatus,
      open_by_severity: bySeverity,
      checked_at: new Date(this.clock.nowMs()).toISOString(),
    };
  }

  /** A delivery was made for the alarm: noted on its timeline. */
  async noteNotified(alarmId: string, details: Record<string, unknown>) {
    const now = this.clock.nowMs();
    await this.repo.updateAlarm(alarmId, { last_notified_at: now });
    await this.event(this.repo, alarmId, now, 'notified', 'notifier', details);
  }

  private async move(
    customerId: string,
    id: string,
    actor: Actor,
    event: AlarmEvent,
    change: (a: IotAlarmsTable, now: number) => Partial<IotAlarmsTable>,
  ) {
    const a = await this.row(customerId, id);
    return this.store.unitOfWork({ locks: [`iot:alarm:${a.rule_id}:${a.device_pk}`] }, async (unit) => {
      const repo = AlarmRepo.over(unit.tx);
      const fresh = (await repo.alarm(customerId, id)) ?? a;
      const now = this.clock.nowMs();
      const patch = { ...change(fresh, now), updated_at: now };
      await repo.updateAlarm(id, patch);
      await this.event(repo, id, now, event, actor, {});
      const next = { ...fresh, ...patch };
      unit.afterCommit(() => this.emit(next, event));
      return alarmView(next);
    });
  }

  private async row(customerId: string, id: string) {
    const row = await this.repo.alarm(customerId, id);
    if (!row) throw alarmErrors.notFound();
    return row;
  }

  private async event(
    repo: AlarmRepo,
    alarmId: string,
    at: number,
    event: string,
    actor: string,
    details: Record<string, unknown>,
  ) {
    await repo.addEvent({
      id: newId(),
      alarm_id: alarmId,
      at,
      event,
      actor,
      details: JSON.stringify(details),
    });
  }

  private emit(alarm: IotAlarmsTable, event: AlarmEvent) {
    for (const l of this.listeners) l(alarm, event);
  }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export const alarmView = (a: IotAlarmsTable) => ({
  id: a.id,
  rule_id: a.rule_id,
  rule_name: a.rule_name,
  device_id: a.device_id,
  severity: a.severity as Severity,
  status: a.status,
  acknowledged: a.acknowledged_at !== null,
  cleared_by: a.cleared_by as 'rule' | 'user' | null,
  details: JSON.parse(a.details) as Record<string, unknown>,
  created_at: new Date(Number(a.created_at)).toISOString(),
  updated_at: new Date(Number(a.updated_at)).toISOString(),
  acknowledged_at: iso(a.acknowledged_at),
  acknowledged_by: a.acknowledged_by,
  resolved_at: iso(a.resolved_at),
  resolved_by: a.resolved_by,
  last_notified_at: iso(a.last_notified_at),
});
