import { statfs } from 'node:fs/promises';
import { AppError } from './errors.js';

/**
 * A full disk is an answer, not a crash: the errors each layer raises when the data dir (or the
 * database's disk) has no room left, recognised wherever they come from so that the API answers
 * 507 and S3 its storage-full error instead of a 500.
 */
const DISK_FULL_CODES = new Set([
  'ENOSPC', // node:fs — no space left on device
  'EDQUOT', // node:fs — the user's disk quota is used
  'SQLITE_FULL', // better-sqlite3 — "database or disk is full"
  '53100', // PostgreSQL disk_full
]);

/** True when `err`, or anything in its `cause` chain, says the disk is full. */
export function isDiskFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && DISK_FULL_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export const insufficientStorage = (cause?: unknown) =>
  new AppError(
    'insufficient_storage',
    'insufficient_storage',
    'The server has no storage space left for this write; it resumes by itself once space is freed.',
    { cause },
  );

/** Bytes free to an unprivileged writer on the file system holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}
