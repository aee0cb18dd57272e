import type { AccessKeyRecord, BucketDirectory, BucketRecord } from '../data-plane-contract.js';

const TTL_MS = 2000;

/**
 * Per-process cache of the directory's answers. Dropped entry by entry when the control plane
 * signals a change (so a revoked key stops at once); the short TTL only bounds how stale an
 * entry can get if a signal from another process is lost.
 */
export class DirectoryCache {
  private readonly keys = new Map<string, { at: number; value: Promise<AccessKeyRecord | null> }>();
  private readonly buckets = new Map<string, { at: number; value: Promise<BucketRecord | null> }>();

  constructor(readonly directory: BucketDirectory) {
    // '' means notices may have been lost (reconnect, reset): everything goes.
    directory.onAccessKeyChanged((id) => (id === '' ? this.keys.clear() : this.keys.delete(id)));
    directory.onBucketChanged((name) => (name === '' ? this.buckets.clear() : this.buckets.delete(name)));
  }

  findAccessKey(id: string): Promise<AccessKeyRecord | null> {
    return this.cached(this.keys, id, () => this.directory.findAccessKey(id));
  }

  findBucket(name: string): Promise<BucketRecord | null> {
    return this.cached(this.buckets, name, () => this.directory.findBucket(name));
  }

  forgetKey(id: string): void {
    this.keys.delete(id);
  }

  forgetBucket(name: string): void {
    this.buckets.delete(name);
  }

  clear(): void {
    this.keys.clear();
    this.buckets.clear();
  }

  private cached<T>(
    map: Map<string, { at: number; value: Promise<T> }>,
    id: string,
    load: () => Promise<T>,
  ): Promise<T> {
    const now = Date.now();
    const hit = map.get(id);
    if (hit && now - hit.at < TTL_MS) return hit.value;
    const value = load();
    if (map.size > 10_000) map.clear();
    map.set(id, { at: now, value });
    value.catch(() => map.delete(id));
    return value;
  }
}
