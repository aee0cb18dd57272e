/**
 * Five-field cron (`minute hour day-of-month month day-of-week`) in a time zone, as Velero's
 * schedules read it: numbers, `*`, ranges `a-b`, steps `*\/n` and `a-b/n`, lists, month and day
 * names (`jan`, `mon`), Sunday as 0 or 7; when both day fields are restricted a day matching either
 * one runs (Vixie cron's rule).
 */
export interface Cron {
  minutes: number[];
  hours: number[];
  days: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  /** Day-of-month and day-of-week both restricted: either matches. */
  eitherDay: boolean;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export class CronError extends Error {}

function field(text: string, min: number, max: number, names: string[] = [], nameBase = 0): number[] {
  const value = (s: string) => {
    const i = names.indexOf(s.toLowerCase());
    const n = i >= 0 ? i + nameBase : /^\d+$/.test(s) ? Number(s) : Number.NaN;
    if (!Number.isInteger(n) || n < min || n > max) throw new CronError(`${s} is not in ${min}-${max}`);
    return n;
  };
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1 || (stepText !== undefined && !/^\d+$/.test(stepText)))
      throw new CronError(`bad step in ${part}`);
    let lo: number;
    let hi: number;
    if (range === '*') [lo, hi] = [min, max];
    else if (range.includes('-')) {
      const [a, b] = range.split('-') as [string, string];
      [lo, hi] = [value(a), value(b)];
      if (lo > hi) throw new CronError(`range ${range} runs backwards`);
    } else {
      lo = value(range);
      hi = stepText === undefined ? lo : max;
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return [...out].sort((a, b) => a - b);
}

export function parseCron(text: string): Cron {
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 5) throw new CronError('five fields: minute hour day-of-month month day-of-week');
  const [m, h, dom, mon, dow] = parts as [string, string, string, string, string];
  const weekdays = new Set(field(dow, 0, 7, DAYS).map((d) => d % 7));
  return {
    minutes: field(m, 0, 59),
    hours: field(h, 0, 23),
    days: new Set(field(dom, 1, 31)),
    months: new Set(field(mon, 1, 12, MONTHS, 1)),
    weekdays,
    eitherDay: dom !== '*' && dow !== '*',
  };
}

const formatters = new Map<string, Intl.DateTimeFormat>();
/** The zone's offset from UTC at instant `ms`, in ms (local − UTC). */
function offsetAt(ms: number, zone: string): number {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, Number(x.value)]));
  const local = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return local - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant of a local wall-clock time. A time the zone skips (the hour clocks spring forward)
 * comes out an hour later; a time it has twice (the hour they fall back) comes out once, at the
 * second, standard-time one.
 */
export function localToUtc(zone: string, y: number, mo: number, d: number, h: number, mi: number): number {
  const naive = Date.UTC(y, mo - 1, d, h, mi);
  const first = naive - offsetAt(naive, zone);
  const second = naive - offsetAt(first, zone);
  return second;
}

/** The local calendar date of an instant in `zone`. */
function localDate(ms: number, zone: string) {
  const d = new Date(ms + offsetAt(ms, zone));
  return { y: d.getUTCFullYear(), m: d.getUTCMonth() + 1, d: d.getUTCDate() };
}

/** The first run strictly after `afterMs`, or null if none within eight years (`0 0 31 2 *`). */
export function nextRun(cron: Cron, zone: string, afterMs: number): number | null {
  const start = localDate(afterMs, zone);
  // One day back: a wall time late on the previous local date can still lie after `afterMs`
  // across a clock change.
  for (let i = -1; i < 366 * 8; i++) {
    const day = new Date(Date.UTC(start.y, start.m - 1, start.d + i));
    const y = day.getUTCFullYear();
    const mo = day.getUTCMonth() + 1;
    const d = day.getUTCDate();
    if (!cron.months.has(mo)) continue;
    const domOk = cron.days.has(d);
    const dowOk = cron.weekdays.has(day.getUTCDay());
    if (!(cron.eitherDay ? domOk || dowOk : domOk && dowOk)) continue;
    // The earliest of the day's runs: across a skipped hour wall times and instants differ in order.
    let best: number | null = null;
    for (const h of cron.hours)
      for (const mi of cron.minutes) {
        const at = localToUtc(zone, y, mo, d, h, mi);
        if (at > afterMs && (best === null || at < best)) best = at;
      }
    if (best !== null) return best;
  }
  return null;
}
