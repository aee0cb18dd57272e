import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { AppError } from '../../kernel/errors.js';
import { randomString } from '../../kernel/ids.js';
import { liveErrors } from './errors.js';
import type { LiveEventsTable } from './migrations.js';
import type { Visibility } from './schemas.js';

/**
 * An event's fields as create and update take them, checked against the plan and turned into
 * columns; and the secrets that go with an event (its stream key and viewing password), stored
 * only as hashes.
 */

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number) => Promise<Buffer>;

export interface EventInput {
  name?: string;
  slug?: string;
  description?: string;
  scheduled_start_at?: string | null;
  scheduled_end_at?: string | null;
  timezone?: string;
  visibility_mode?: Visibility;
  password?: string;
  record_enabled?: boolean;
  replay_enabled?: boolean;
  rehearsal_enabled?: boolean;
  embed_enabled?: boolean;
  auto_start_on_ingest?: boolean;
  max_bitrate_kbps?: number;
  retention_days?: number;
  reconnect_window_seconds?: number;
  draft?: boolean;
}

export const hashStreamKey = (key: string): string => createHash('sha256').update(key).digest('hex');
export const newStreamKey = (): string => `sk_${randomString(32)}`;

async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  return `scrypt:${salt.toString('base64')}:${(await scrypt(password, salt, 32)).toString('base64')}`;
}

export async function passwordMatches(stored: string | null, given: string): Promise<boolean> {
  if (!stored) return false;
  const [, salt, hash] = stored.split(':');
  const want = Buffer.from(hash ?? '', 'base64');
  const got = await scrypt(given, Buffer.from(salt ?? '', 'base64'), 32);
  return want.length === got.length && timingSafeEqual(want, got);
}

const ms = (s: string | null | undefined): number | null | undefined =>
  s === undefined ? undefined : s === null ? null : Date.parse(s);

export function slugify(name: string): string {
  const base = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/g, '');
  return base || 'event';
}

function isTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Checks the fields both create and update take; returns the column changes. */
export async function eventFields(
  input: EventInput,
  limits: { max_bitrate_kbps: number; max_retention_days: number },
  current: LiveEventsTable | null,
): Promise<Partial<LiveEventsTable>> {
  const out: Partial<LiveEventsTable> = {};
  if (input.name !== undefined) out.name = input.name;
  if (input.description !== undefined) out.description = input.description;
  const start = ms(input.scheduled_start_at);
  const end = ms(input.scheduled_end_at);
  if (start !== undefined) out.scheduled_start_at = start;
  if (end !== undefined) out.scheduled_end_at = end;
  const s = out.scheduled_start_at ?? current?.scheduled_start_at ?? null;
  const e = out.scheduled_end_at ?? current?.scheduled_end_at ?? null;
  if (s !== null && e !== null && e <= s)
    throw invalid('/body/scheduled_end_at', 'must be after scheduled_start_at');
  if (input.timezone !== undefined) {
    if (!isTimezone(input.timezone)) throw invalid('/body/timezone', 'is not an IANA time zone name');
    out.timezone = input.timezone;
  }
  if (input.visibility_mode !== undefined) out.visibility_mode = input.visibility_mode;
  const visibility = out.visibility_mode ?? current?.visibility_mode ?? 'public';
  if (input.password !== undefined) out.password_hash = await hashPassword(input.password);
  if (
    visibility === 'password' &&
    !(out.password_hash ?? (current?.visibility_mode === 'password' && current.password_hash))
  )
    throw liveErrors.passwordRequired();
  if (visibility !== 'password' && input.visibility_mode !== undefined) out.password_hash = null;
  for (const flag of [
    'record_enabled',
    'replay_enabled',
    'rehearsal_enabled',
    'embed_enabled',
    'auto_start_on_ingest',
  ] as const) {
    if (input[flag] !== undefined) out[flag] = input[flag] ? 1 : 0;
  }
  if (input.max_bitrate_kbps !== undefined) {
    if (input.max_bitrate_kbps > limits.max_bitrate_kbps)
      throw liveErrors.bitrateTooHigh(limits.max_bitrate_kbps);
    out.max_bitrate_kbps = input.max_bitrate_kbps;
  }
  if (input.retention_days !== undefined) {
    if (input.retention_days > limits.max_retention_days)
      throw invalid('/body/retention_days', `is at most ${limits.max_retention_days} on this plan`);
    out.retention_days = input.retention_days;
  }
  if (input.reconnect_window_seconds !== undefined)
    out.reconnect_window_seconds = input.reconnect_window_seconds;
  return out;
}

function invalid(path: string, what: string) {
  const field = path.split('/').pop();
  const message = `${field} ${what}.`;
  return new AppError('invalid', 'invalid_field', message, { errors: [{ path, message }] });
}
