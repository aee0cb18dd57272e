import { s3Errors } from '../s3/errors.js';

/** How long a read of a customer's usage may stand in for another, while far from the limit. */
const USAGE_FRESH_MS = 1_000;
/** "Far from the limit": what was read, plus what this process let in since, under this share. */
const HEADROOM = 0.9;

interface UsageSnapshot {
  bytes: number;
  readAt: number;
  /** Bytes this process let in on the strength of this read. */
  admitted: number;
}

/**
 * The plan's storage quota (`storage.bytes`), checked before bytes are accepted. A quota, not a
 * lock, as MinIO's bucket quotas are (MinIO judges them on usage its scanner counted minutes
 * earlier): writes at the same moment can overshoot it by what they carry together.
 *
 * Reading the usage was a store round trip on every PUT. A read now stands for one second for
 * writes that, with everything this process let in since, stay under 90 % of the limit; nearer
 * the limit, or later, every check reads again. Deletes only lower usage, so a standing read is
 * never too lenient because of them; what it cannot see is other processes' writes in that
 * second, beyond the 10 % left — the same overshoot as concurrent writes, over a second.
 */
export class StorageQuota {
  private readonly snapshots = new Map<string, UsageSnapshot>();
  /** Reads in flight: checks asking meanwhile share them. */
  private readonly reads = new Map<string, { readAt: number; snapshot: Promise<UsageSnapshot> }>();

  constructor(
    private readonly limitOf: (customerId: string) => Promise<number | null>,
    private readonly usageOf: (customerId: string) => Promise<{ bytes: number }>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async check(customerId: string, adding: number): Promise<void> {
    if (adding <= 0) return;
    const asked = this.now();
    const max = await this.limitOf(customerId);
    if (max === null) return;
    const standing = this.snapshots.get(customerId);
    if (
      standing &&
      this.now() - standing.readAt < USAGE_FRESH_MS &&
      standing.bytes + standing.admitted + adding <= max * HEADROOM
    ) {
      standing.admitted += adding;
      return;
    }
    let snap = await this.read(customerId);
    // A shared read issued before this check began may predate a delete: refuse on a newer one.
    if (snap.bytes + adding > max && snap.readAt < asked) snap = await this.read(customerId, asked);
    if (snap.bytes + adding > max) throw s3Errors.quotaExceeded(max);
    snap.admitted += adding;
  }

  /** A read of the usage, shared with one in flight that was issued at `notBefore` or later. */
  private read(customerId: string, notBefore = Number.NEGATIVE_INFINITY): Promise<UsageSnapshot> {
    const running = this.reads.get(customerId);
    if (running !== undefined && running.readAt >= notBefore) return running.snapshot;
    const readAt = this.now();
    const read = this.usageOf(customerId).then(({ bytes }) => {
      const snap = { bytes, readAt, admitted: 0 };
      if (this.snapshots.size > 10_000) this.snapshots.clear();
      this.snapshots.set(customerId, snap);
      return snap;
    });
    const settled = read.finally(() => {
      if (this.reads.get(customerId)?.snapshot === settled) this.reads.delete(customerId);
    });
    this.reads.set(customerId, { readAt, snapshot: settled });
    return settled;
  }
}
