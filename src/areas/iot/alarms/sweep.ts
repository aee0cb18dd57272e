import type { Clock } from '../../../kernel/clock.js';
import type { Store } from '../../../kernel/store/store.js';
import type { IotDevicesTable } from '../migrations.js';
import { IotRepo } from '../repo.js';
import type { Alarms } from './alarms.js';
import { type Condition, SEVERITY_RANK, type Severity, scheduleActive } from './conditions.js';
import { AlarmRepo } from './repo.js';
import { inactivityConditions, type LoadedRule, load } from './rule-index.js';
import { ruleInputOf } from './rules.js';
import type { IotRulesTable } from './tables.js';

export const RULES_TICK_JOB = 'iot.rules.tick';
/** Duration and inactivity conditions are judged this often on Fjord's clock (at most this late). */
export const RULES_TICK_SECONDS = 30;

/** What the clock judges, in whichever process runs the job: it reads everything from the store. */
export class RuleSweep {
  private readonly devices: IotRepo;
  private readonly repo: AlarmRepo;

  constructor(
    store: Store,
    private readonly clock: Clock,
    private readonly alarms: Alarms,
  ) {
    this.devices = IotRepo.of(store);
    this.repo = AlarmRepo.of(store);
  }

  /**
   * The clock's sweep: duration conditions that have held long enough (also when the device went
   * quiet) and devices inactive for longer than an inactivity condition allows.
   */
  async tick(): Promise<number> {
    const now = this.clock.nowMs();
    let raised = 0;
    const ruleCache = new Map<string, LoadedRule | null>();
    const ruleOf = async (id: string) => {
      if (!ruleCache.has(id)) {
        const row = await this.repo.ruleById(id);
        ruleCache.set(id, row && row.enabled === 1 ? load(row) : null);
      }
      return ruleCache.get(id) ?? null;
    };
    // Alarms already open at that severity or worse are left alone: one read per rule, not a
    // locked transaction per device and tick.
    const openCache = new Map<string, Map<string, string>>();
    const openOf = async (ruleId: string) => {
      let open = openCache.get(ruleId);
      if (!open) {
        open = await this.repo.openOfRule(ruleId);
        openCache.set(ruleId, open);
      }
      return open;
    };
    const alreadyOpen = (open: Map<string, string>, pk: string, severity: Severity) => {
      const at = open.get(pk) as Severity | undefined;
      return at !== undefined && SEVERITY_RANK[at] >= SEVERITY_RANK[severity];
    };
    for (const s of await this.repo.heldSince(now)) {
      const r = await ruleOf(s.rule_id);
      const c = r?.input.severities[s.severity as Severity];
      if (!r || !c || c.type !== 'duration' || s.since === null) continue;
      if (now - Number(s.since) < (c.duration_seconds ?? 0) * 1000) continue;
      if (!scheduleActive(r.input.schedule ?? null, now)) continue;
      if (alreadyOpen(await openOf(r.row.id), s.device_pk, s.severity as Severity)) continue;
      const device = await this.devices.byPk(s.device_pk);
      if (!device) continue;
      const outcome = await this.alarms.raise({
        customerId: r.row.customer_id,
        rule: { id: r.row.id, name: r.row.name },
        device: { pk: device.id, id: device.device_id },
        severity: s.severity as Severity,
        details: { condition: 'duration', held_since: new Date(Number(s.since)).toISOString() },
      });
      if (outcome) raised++;
    }
    for (const row of await this.repo.enabledRules()) {
      const input = ruleInputOf(row);
      const conditions = inactivityConditions(input);
      if (conditions.length === 0 || !scheduleActive(input.schedule ?? null, now)) continue;
      const open = await openOf(row.id);
      for (const device of await this.targetDevices(row)) {
        const hit = conditions.find(([, c]) => inactive(device, c, now));
        if (!hit || alreadyOpen(open, device.id, hit[0])) continue;
        const outcome = await this.alarms.raise({
          customerId: row.customer_id,
          rule: { id: row.id, name: row.name },
          device: { pk: device.id, id: device.device_id },
          severity: hit[0],
          details: {
            condition: 'inactivity',
            basis: hit[1].inactivity_basis ?? 'telemetry',
            inactivity_seconds: hit[1].inactivity_seconds,
          },
        });
        if (outcome) raised++;
      }
    }
    return raised;
  }

  private async targetDevices(rule: IotRulesTable): Promise<IotDevicesTable[]> {
    const v = rule.target_value ?? undefined;
    const filter =
      rule.target_type === 'group'
        ? { group_id: v }
        : rule.target_type === 'profile'
          ? { profile_id: v }
          : rule.target_type === 'device_type'
            ? { device_type: v }
            : {};
    if (rule.target_type === 'device') {
      const d = await this.devices.device(rule.customer_id, v ?? '');
      return d ? [d] : [];
    }
    return (await this.devices.list(rule.customer_id, { ...filter, is_active: true }, 100_000, 0)).rows;
  }
}

function inactive(d: IotDevicesTable, c: Condition, now: number): boolean {
  const limit = (c.inactivity_seconds ?? 0) * 1000;
  if (c.inactivity_basis === 'connection')
    return d.is_online !== 1 && now - Number(d.last_seen ?? d.created_at) >= limit;
  return now - Number(d.last_telemetry_at ?? d.created_at) >= limit;
}
