/**
 * The store notice that ends a device's sessions in every `mqtt` process: its username and the
 * wall-clock time the change was committed, so a broker ends only the sessions whose login began
 * before it (the notice may come back late, after the device logged in with its new password).
 */
export const REVOKE_CHANNEL = 'fjord_iot_revoke';

export interface Revocation {
  username: string;
  at: number;
}

export const revocationNotice = (r: Revocation): string => JSON.stringify(r);

/** A notice read back; a bare username (a process not yet upgraded) ends every session of it. */
export function parseRevocation(notice: string): Revocation {
  if (!notice.startsWith('{')) return { username: notice, at: Number.POSITIVE_INFINITY };
  try {
    const { username, at } = JSON.parse(notice) as { username?: unknown; at?: unknown };
    return typeof username === 'string' && typeof at === 'number'
      ? { username, at }
      : { username: '', at: 0 };
  } catch {
    return { username: '', at: 0 };
  }
}
