import { RESYNC, type Store } from '../../kernel/store/store.js';

const CHANNEL = 'fjord_storage';

/**
 * Cross-process notices that a bucket or an access key changed, over the store's publish/subscribe
 * (LISTEN/NOTIFY on PostgreSQL, in-process on SQLite), so every S3 process drops what it cached.
 * Listeners receive the bucket name or access key id, or '' when notices may have been lost (the
 * notice connection was re-established): then they must drop everything.
 */
export class StorageChangeNotices {
  private readonly bucketListeners: ((name: string) => void)[] = [];
  private readonly keyListeners: ((accessKeyId: string) => void)[] = [];
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly store: Store) {}

  bucketChanged(name: string): Promise<void> {
    return this.announce(`b:${name}`);
  }

  keyChanged(accessKeyId: string): Promise<void> {
    return this.announce(`k:${accessKeyId}`);
  }

  /**
   * This process's caches drop the entry at once; the others when the notice reaches them. On
   * PostgreSQL a notice comes back to its sender only through the LISTEN connection, later: a key
   * revoked here would otherwise still work on this process's next request under load.
   */
  private announce(payload: string): Promise<void> {
    this.deliver(payload);
    return this.store.publish(CHANNEL, payload);
  }

  onBucketChanged(listener: (name: string) => void): void {
    this.bucketListeners.push(listener);
    this.ensureSubscribed();
  }

  onKeyChanged(listener: (accessKeyId: string) => void): void {
    this.keyListeners.push(listener);
    this.ensureSubscribed();
  }

  /** After an emulator reset every cache is stale. */
  everythingChanged(): void {
    this.deliver(RESYNC);
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  private ensureSubscribed(): void {
    this.unsubscribe ??= this.store.subscribe(CHANNEL, (payload) => this.deliver(payload));
  }

  private deliver(payload: string): void {
    const subject = payload.slice(2);
    if (payload === RESYNC || payload.startsWith('b:')) {
      for (const l of this.bucketListeners) l(payload === RESYNC ? '' : subject);
    }
    if (payload === RESYNC || payload.startsWith('k:')) {
      for (const l of this.keyListeners) l(payload === RESYNC ? '' : subject);
    }
  }
}
