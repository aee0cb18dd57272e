/**
 * Object lock as kept on a version's row (`lock`, JSON) and on a multipart upload until it
 * completes. Retention and legal hold are independent, as on S3: either one protects a version.
 */
export type LockMode = 'GOVERNANCE' | 'COMPLIANCE';

export interface ObjectLock {
  mode: LockMode | null;
  /** Epoch ms; compared with the server's clock (the emulator's clock when it is moved). */
  until: number | null;
  legalHold: boolean;
}

export interface LockDefault {
  mode: LockMode;
  days: number | null;
  years: number | null;
}

const DAY_MS = 86_400_000;

export function parseLock(text: string | null | undefined): ObjectLock | null {
  return text ? (JSON.parse(text) as ObjectLock) : null;
}

/** The stored form: null when nothing protects the version, so unlocked rows stay as they were. */
export function lockText(lock: ObjectLock | null): string | null {
  if (!lock || (lock.mode === null && !lock.legalHold)) return null;
  return JSON.stringify(lock);
}

/** Retain-until of a new version under a bucket's default retention (a year is 365 days, as S3 counts). */
export function defaultRetention(rule: LockDefault | null, now: number): ObjectLock | null {
  if (!rule) return null;
  const days = rule.days ?? (rule.years ?? 0) * 365;
  return { mode: rule.mode, until: now + days * DAY_MS, legalHold: false };
}

/**
 * Why a version may not be deleted now, or null when it may. GOVERNANCE gives way to a caller
 * allowed to bypass it who asked to; COMPLIANCE and legal holds give way to no one.
 */
export function protectedBy(
  lock: ObjectLock | null,
  now: number,
  bypassGovernance: boolean,
): 'legal-hold' | LockMode | null {
  if (!lock) return null;
  if (lock.legalHold) return 'legal-hold';
  if (lock.mode && lock.until !== null && lock.until > now) {
    if (lock.mode === 'GOVERNANCE' && bypassGovernance) return null;
    return lock.mode;
  }
  return null;
}
