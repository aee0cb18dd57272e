/** How long a revocation is remembered: longer than any login takes from CONNECT to its session. */
const REMEMBER_MS = 5 * 60_000;

/**
 * The latest revocation of each device login heard in the last minutes. A login is checked
 * against the store when its CONNECT arrives, and becomes a live session only after its session
 * and will are restored; a revocation that comes in between finds no session to end. The broker
 * asks here when it registers a session, and ends one whose login began before a revocation, so
 * a device deleted while it was logging in does not stay connected.
 */
export class RecentRevocations {
  /** A device's username (or a customer's key) → the latest revocation's time and when it was heard. */
  private readonly latest = new Map<string, { at: number; heard: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Notes a revocation committed at `at`; a notice without a time counts from when it is heard. */
  note(username: string, at: number): void {
    const heard = this.now();
    this.forgetOld(heard);
    const when = Number.isFinite(at) ? at : heard;
    const before = this.latest.get(username);
    if (before && before.at >= when) return;
    this.latest.delete(username);
    this.latest.set(username, { at: when, heard });
  }

  /** Whether a login of `username` that began at `startedAt` came before its latest revocation. */
  revokes(username: string, startedAt: number): boolean {
    const r = this.latest.get(username);
    return r !== undefined && startedAt <= r.at;
  }

  private forgetOld(now: number) {
    for (const [username, r] of this.latest) {
      if (now - r.heard < REMEMBER_MS) break;
      this.latest.delete(username);
    }
  }
}
