import type { ApiKeyWithCustomer, CustomerRow } from './identity-repo.js';

/**
 * How stale the cache may be, at most, about a commit by another connection (the admin CLI,
 * another Fjord process on the same data dir): a revocation or suspension made there is
 * refused within a millisecond of its commit. This process's own writes clear it at once.
 */
export const STORE_CHECK_MS = 1;

/**
 * Keeps the rows that authenticate a request (the key with its customer's status, and the
 * customer) in memory — but only where the store can say, synchronously and cheaply, whether
 * anyone else has written to it since: SQLite's `PRAGMA data_version` changes whenever another
 * connection (the admin CLI, another process) commits. Writes through this process clear the cache
 * themselves. So revocation, expiry and suspension through this process apply from the very next
 * request, and through another connection within `STORE_CHECK_MS` of its commit. On PostgreSQL,
 * where no such signal is synchronous, nothing is cached.
 */
export class CredentialCache {
  private readonly keys = new Map<string, ApiKeyWithCustomer>();
  private readonly customers = new Map<string, CustomerRow>();
  /**
   * The same key rows by the secret presented, so a cached key costs no SHA-256 per request (the
   * largest single item of an authenticated request's CPU profile). Only secrets that matched a
   * stored key are kept, and only as long as their row is: the same clears drop both.
   */
  private readonly byToken = new Map<string, ApiKeyWithCustomer>();
  private seenVersion: number | null = null;
  /** Bumped by every clear, so a lookup that raced a write never stores its stale row. */
  private generation = 0;

  constructor(
    private readonly externalChanges: (() => number) | null,
    private readonly maxEntries = 10_000,
    /** Milliseconds on a monotonic clock (tests pass their own). */
    private readonly now: () => number = performance.now.bind(performance),
  ) {}

  get enabled(): boolean {
    return this.externalChanges !== null;
  }

  /**
   * Call before reading: drops everything if the store changed under us. Returns the generation
   * to put with. The store is asked at most once per `STORE_CHECK_MS`: each ask is a WAL-index
   * read with file locks, ~2 µs of mostly system time — once per request (or per turn of the
   * event loop, which under load is nearly the same) it was the largest single cost of a cached
   * authenticated request. So a commit by another connection shows within `STORE_CHECK_MS`.
   * Monotonic time: a wall clock set back must not stretch that bound.
   */
  check(): number {
    if (this.externalChanges) {
      const now = this.now();
      if (now - this.checkedAt >= STORE_CHECK_MS) {
        this.checkedAt = now;
        const version = this.externalChanges();
        if (version !== this.seenVersion) {
          this.clear();
          this.seenVersion = version;
        }
      }
    }
    return this.generation;
  }

  private checkedAt = Number.NEGATIVE_INFINITY;

  key(hash: string): ApiKeyWithCustomer | undefined {
    return this.keys.get(hash);
  }

  keyByToken(token: string): ApiKeyWithCustomer | undefined {
    return this.byToken.get(token);
  }

  customer(id: string): CustomerRow | undefined {
    return this.customers.get(id);
  }

  putKey(hash: string, row: ApiKeyWithCustomer, generation: number): void {
    if (!this.enabled || generation !== this.generation) return;
    if (this.keys.size >= this.maxEntries) this.keys.clear();
    this.keys.set(hash, row);
  }

  /** Remembers which cached row a presented secret hashed to (the row must be the cached one). */
  putToken(token: string, row: ApiKeyWithCustomer, generation: number): void {
    if (!this.enabled || generation !== this.generation) return;
    if (this.byToken.size >= this.maxEntries) this.byToken.clear();
    this.byToken.set(token, row);
  }

  putCustomer(row: CustomerRow, generation: number): void {
    if (!this.enabled || generation !== this.generation) return;
    if (this.customers.size >= this.maxEntries) this.customers.clear();
    this.customers.set(row.id, row);
  }

  clear(): void {
    this.generation++;
    this.keys.clear();
    this.byToken.clear();
    this.customers.clear();
  }
}
