/**
 * Reading `scheduled_at` with `timezone`: an ISO 8601 time with an offset (`Z`, `+01:00`) is that
 * instant; one without an offset is a wall-clock time in `timezone` (IANA), or in UTC when no
 * timezone is given. A wall-clock time that a DST change skips moves forward, like a clock does.
 */
const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?$/;
const HAS_OFFSET = /(Z|[+-]\d{2}:?\d{2})$/i;

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Offset of `tz` from UTC at instant `ms`, in milliseconds. */
function offsetAt(ms: number, tz: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
  return asUtc - (ms - (ms % 1000));
}

/** Epoch ms of `value`, or null when it is not an ISO 8601 date-time. */
export function parseScheduledAt(value: string, tz: string | null): number | null {
  const text = value.trim();
  if (HAS_OFFSET.test(text)) {
    if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(text)) return null;
    const ms = Date.parse(text.replace(' ', 'T'));
    return Number.isNaN(ms) ? null : ms;
  }
  const m = ISO_LOCAL.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac] = m;
  const wall = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +(s ?? 0), +(frac ?? '0').padEnd(3, '0'));
  const check = new Date(wall);
  if (check.getUTCMonth() !== +mo! - 1 || check.getUTCDate() !== +d!) return null; // 2026-02-30
  if (!tz || tz === 'UTC') return wall;
  // Two rounds settle the offset for any wall time not inside a DST gap or overlap.
  let guess = wall - offsetAt(wall, tz);
  guess = wall - offsetAt(guess, tz);
  return guess;
}
