/**
 * What the rule engine keeps of each device it judges: its facts (row, groups, metadata), latest
 * values, open alarms and held rule state, read from the store once and then kept exact in memory
 * (alarm moves of every process arrive as store notices). Apart from the engine so the judging
 * code reads as judging; this is the cache under it.
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '../../../kernel/store/store.js';
import type { IotDevicesTable } from '../migrations.js';
import { IotRepo } from '../repo.js';
import { pointValue } from '../telemetry.js';
import type { Alarms } from './alarms.js';
import type { Scalar, Severity } from './conditions.js';
import { AlarmRepo } from './repo.js';
import type { RuleIndex, RuleSet } from './rule-index.js';

/** What another process changed (rules, devices) is seen within this long; this process's at once. */
export const CACHE_MS = 5_000;
/**
 * Devices whose facts, latest values, rule state and open alarms are kept; past this the tenth
 * judged least recently is dropped (read again from the store when it next sends).
 */
const MAX_DEVICES_CACHED = 10_000;
/**
 * Every alarm move, in any process, is announced on this channel as `<origin>|<rule>|<device
 * pk>|<severity, or empty once none is open>`; an empty notice means notices were lost (read them
 * all again). A process sends its notices one after the other, so they arrive in order.
 */
const OPEN_CHANNEL = 'fjord_iot_alarm_open';
/**
 * A device's open alarms are read again this often: it bounds what two processes moving the same
 * alarm within milliseconds of each other (their notices may cross) can leave wrong.
 */
export const OPEN_REREAD_MS = 60_000;

export interface DeviceFacts {
  row: IotDevicesTable;
  groups: string[];
  at: number;
  attributes: Record<string, unknown> | null;
}

export interface Held {
  count: number;
  since: number | null;
}

/** What the engine keeps of one device, in the process that judges its messages. */
export interface DeviceState {
  key: string;
  facts: DeviceFacts;
  latest: Record<string, Scalar>;
  /** Its open alarms by rule id: exact, kept so by the alarm notices of every process. */
  open: Map<string, Severity>;
  /** The notices generation `open` was read in (a lost notice makes every device read it again). */
  openGen: number;
  openAt: number;
  /** Notices that arrived while `open` was being read, applied once it is. */
  pending: string[] | null;
  /** Repeating counts and duration starts by `<rule>|<severity>`; no entry: nothing held. */
  held: Map<string, Held>;
  /** The rules that apply to it: built from `indexSet` and `indexFacts`. */
  index: RuleIndex | null;
  indexSet: RuleSet | null;
  indexFacts: DeviceFacts | null;
}

/** The devices this process judges, most recently judged last, and their open alarms. */
export class DeviceCache {
  private readonly devices: IotRepo;
  private readonly repo: AlarmRepo;
  private readonly states = new Map<string, DeviceState>();
  private readonly byPk = new Map<string, DeviceState>();
  /** Bumped when alarm notices were lost: every device reads its open alarms again. */
  openGen = 0;
  private readonly origin = randomUUID();
  private publishing: Promise<void> = Promise.resolve();

  constructor(
    store: Store,
    alarms: Alarms,
    /** Resolves once the engine's rule state writes so far are in the store. */
    private readonly written: () => Promise<void>,
  ) {
    this.devices = IotRepo.of(store);
    this.repo = AlarmRepo.of(store);
    // Every process learns which alarms are open, so none needs to ask the store per message.
    alarms.onEvent((a, event) => {
      const notice = `${a.rule_id}|${a.device_pk}|${event === 'resolved' ? '' : a.severity}`;
      this.noteOpen(notice);
      const sent = `${this.origin}|${notice}`;
      this.publishing = this.publishing.then(() => store.publish(OPEN_CHANNEL, sent)).catch(() => {});
    });
    store.subscribe(OPEN_CHANNEL, (sent) => {
      if (!sent) {
        this.openGen++; // notices were lost: every device reads its open alarms again
        return;
      }
      const cut = sent.indexOf('|');
      if (sent.slice(0, cut) !== this.origin) this.noteOpen(sent.slice(cut + 1));
    });
  }

  get(key: string): DeviceState | undefined {
    return this.states.get(key);
  }

  all(): IterableIterator<DeviceState> {
    return this.states.values();
  }

  /** The device was deleted: nothing of it is kept. */
  drop(key: string) {
    const d = this.states.get(key);
    if (d) {
      this.states.delete(key);
      this.byPk.delete(d.facts.row.id);
    }
  }

  /** `<rule>|<device pk>|<severity, or empty when none is open>`, from this or another process. */
  private noteOpen(notice: string) {
    const first = notice.indexOf('|');
    const cut = notice.lastIndexOf('|');
    const d = this.byPk.get(notice.slice(first + 1, cut));
    if (!d) return; // read from the store when the device is next judged
    if (d.pending) {
      d.pending.push(notice);
      return;
    }
    const ruleId = notice.slice(0, first);
    const severity = notice.slice(cut + 1);
    if (severity) d.open.set(ruleId, severity as Severity);
    else d.open.delete(ruleId);
  }

  private evict() {
    let drop = Math.ceil(MAX_DEVICES_CACHED / 10);
    for (const [key, d] of this.states) {
      if (drop-- <= 0) break;
      this.states.delete(key);
      if (this.byPk.get(d.facts.row.id) === d) this.byPk.delete(d.facts.row.id);
    }
  }

  /**
   * Reads the device: its row and groups (again past CACHE_MS), its latest values, open alarms
   * and rule state (once, or again when `fresh`: it connected to this process, maybe after
   * sending to another).
   */
  async stateOf(key: string, customerId: string, deviceId: string, fresh: boolean) {
    const row = await this.devices.device(customerId, deviceId);
    if (!row) return null;
    const facts: DeviceFacts = {
      row,
      groups: await this.devices.groupsOf(row.id),
      at: Date.now(),
      attributes: null,
    };
    let d = this.states.get(key);
    if (d && d.facts.row.id === row.id) {
      d.facts = facts;
      // Kept in the order devices were last read: the least recently judged go first.
      this.states.delete(key);
      this.states.set(key, d);
      if (!fresh && d.openGen === this.openGen && Date.now() - d.openAt < OPEN_REREAD_MS) return d;
    } else {
      if (this.states.size >= MAX_DEVICES_CACHED) this.evict();
      if (d) this.byPk.delete(d.facts.row.id);
      d = {
        key,
        facts,
        latest: {},
        open: new Map(),
        openGen: -1,
        openAt: 0,
        pending: null,
        held: new Map(),
        index: null,
        indexSet: null,
        indexFacts: null,
      };
      this.states.set(key, d);
      this.byPk.set(row.id, d);
      fresh = true;
    }
    const gen = this.openGen;
    const openAt = Date.now();
    d.pending = [];
    try {
      const open = await this.repo.openOfDevice(row.id);
      d.open = new Map(open.map((o) => [o.rule_id, o.severity as Severity]));
    } finally {
      const pending = d.pending;
      d.pending = null;
      for (const notice of pending) this.noteOpen(notice);
    }
    d.openGen = gen;
    d.openAt = openAt;
    if (fresh) {
      await this.written(); // what this process counted is in the store before it is read back
      const latest: Record<string, Scalar> = {};
      for (const p of await this.devices.latest(row.id)) latest[p.key] ??= pointValue(p);
      // Every message judged was stored first: the store's latest values are at least as new.
      d.latest = latest;
      const held = new Map<string, Held>();
      for (const s of await this.repo.stateOfDevice(row.id))
        if (Number(s.count) !== 0 || s.since !== null)
          held.set(`${s.rule_id}|${s.severity}`, {
            count: Number(s.count),
            since: s.since === null ? null : Number(s.since),
          });
      d.held = held;
    }
    return d;
  }
}

/** The device's metadata as filters read it (parsed once per read of the device). */
export function attributesOf(f: DeviceFacts): Record<string, unknown> {
  f.attributes ??= {
    ...(JSON.parse(f.row.metadata) as Record<string, unknown>),
    device_type: f.row.device_type,
    firmware_version: f.row.firmware_version,
  };
  return f.attributes;
}
