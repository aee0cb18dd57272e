/**
 * Alarm rule conditions, as ThingsBoard's alarm rules have them: key filters combined with AND,
 * judged as `simple` (true on one message), `repeating` (true on N messages in a row),
 * `duration` (true continuously for N seconds, judged on the clock too) or `inactivity` (no
 * telemetry, or no connection, for N seconds). Pure functions; the engine keeps the state.
 */
export const SEVERITIES = ['critical', 'major', 'minor', 'warning'] as const;
export type Severity = (typeof SEVERITIES)[number];
/** Higher is worse. */
export const SEVERITY_RANK: Record<Severity, number> = { critical: 4, major: 3, minor: 2, warning: 1 };

export const OPERATORS = ['>', '>=', '<', '<=', '==', '!=', 'between', 'contains'] as const;
export type Operator = (typeof OPERATORS)[number];
export type Scalar = number | boolean | string;

export interface Filter {
  key: string;
  /** `telemetry` (default): the device's latest value of the key; `attribute`: its metadata. */
  source?: 'telemetry' | 'attribute';
  operator: Operator;
  value?: Scalar;
  min?: number;
  max?: number;
}

export interface Condition {
  type: 'simple' | 'repeating' | 'duration' | 'inactivity';
  filters?: Filter[];
  count?: number;
  duration_seconds?: number;
  inactivity_seconds?: number;
  /** What counts as activity for `inactivity`: telemetry (default) or being connected. */
  inactivity_basis?: 'telemetry' | 'connection';
}

export interface Schedule {
  timezone: string;
  /** ISO weekdays, 1 = Monday … 7 = Sunday. */
  days: number[];
  /** `HH:MM`, local; an end before the start runs past midnight. */
  start: string;
  end: string;
}

/** Whether every filter holds for these values (a missing key never matches). */
export function filtersMatch(
  filters: Filter[],
  telemetry: Record<string, Scalar>,
  attributes: Record<string, unknown>,
): boolean {
  // A plain loop: this runs for every rule a message touches, so it allocates nothing.
  for (let i = 0; i < filters.length; i++) {
    const f = filters[i]!;
    const v = f.source === 'attribute' ? attributes[f.key] : telemetry[f.key];
    if (v === undefined || !holds(f, v)) return false;
  }
  return true;
}

function holds(f: Filter, v: unknown): boolean {
  switch (f.operator) {
    case '>':
      return typeof v === 'number' && typeof f.value === 'number' && v > f.value;
    case '>=':
      return typeof v === 'number' && typeof f.value === 'number' && v >= f.value;
    case '<':
      return typeof v === 'number' && typeof f.value === 'number' && v < f.value;
    case '<=':
      return typeof v === 'number' && typeof f.value === 'number' && v <= f.value;
    case '==':
      return v === f.value;
    case '!=':
      return v !== f.value;
    case 'between':
      return typeof v === 'number' && f.min !== undefined && f.max !== undefined && v >= f.min && v <= f.max;
    case 'contains':
      return typeof v === 'string' && typeof f.value === 'string' && v.includes(f.value);
  }
}

/** What is wrong with a condition, or null. `path` names the field for the error. */
export function conditionProblem(
  c: Condition,
  path: string,
  isClear = false,
): { path: string; message: string } | null {
  if (isClear && c.type !== 'simple') return { path: `${path}/type`, message: 'a clear condition is simple' };
  if (c.type === 'inactivity') {
    if (!c.inactivity_seconds)
      return { path: `${path}/inactivity_seconds`, message: 'required for inactivity' };
    return null;
  }
  if (!c.filters?.length) return { path: `${path}/filters`, message: 'at least one filter' };
  if (c.type === 'repeating' && !c.count) return { path: `${path}/count`, message: 'required for repeating' };
  if (c.type === 'duration' && !c.duration_seconds)
    return { path: `${path}/duration_seconds`, message: 'required for duration' };
  for (const [i, f] of c.filters.entries()) {
    const at = `${path}/filters/${i}`;
    if (f.operator === 'between') {
      if (f.min === undefined || f.max === undefined || f.min > f.max)
        return { path: at, message: 'between takes min ≤ max' };
    } else if (f.value === undefined) return { path: `${at}/value`, message: `${f.operator} takes a value` };
    else if (['>', '>=', '<', '<='].includes(f.operator) && typeof f.value !== 'number')
      return { path: `${at}/value`, message: `${f.operator} compares numbers` };
    else if (f.operator === 'contains' && typeof f.value !== 'string')
      return { path: `${at}/value`, message: 'contains takes a string' };
  }
  return null;
}

/** Whether the schedule is active at `ms` (no schedule: always). */
export function scheduleActive(s: Schedule | null, ms: number): boolean {
  if (!s) return true;
  const parts = formatterOf(s.timezone).formatToParts(new Date(ms));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const day = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(part('weekday')) + 1;
  const minute = Number(part('hour')) * 60 + Number(part('minute'));
  const start = minutesOf(s.start);
  const end = minutesOf(s.end);
  if (start === end) return s.days.includes(day);
  if (start < end) return s.days.includes(day) && minute >= start && minute < end;
  // Past midnight: the evening part belongs to the day it starts on, the morning to the day before.
  const yesterday = day === 1 ? 7 : day - 1;
  return (minute >= start && s.days.includes(day)) || (minute < end && s.days.includes(yesterday));
}

const formatters = new Map<string, Intl.DateTimeFormat>();
/** Building a formatter costs far more than using one: one per time zone. */
function formatterOf(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: timezone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    if (formatters.size >= 1000) formatters.clear();
    formatters.set(timezone, f);
  }
  return f;
}

export const minutesOf = (hhmm: string): number => {
  const [h, m] = hhmm.split(':').map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
};

export function validTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
