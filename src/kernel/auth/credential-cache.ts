import type { ApiKeyWithCustomer, CustomerRow } from './identity-repo.js';

/**
 * Keeps the rows that authenticate a request (the key with its customer's status, and the
 * customer) in memory — but only where the store can say, synchronously and cheaply, whether
 * anyone else has written to it since: SQLite's `PRAGMA data_version` changes whenever another
 * connection (the admin CLI, another process) commits. Writes through this process clear the cache
 * themselves. So revocation, expiry and suspension still apply from the very next request. On
 * PostgreSQL, where no such signal is synchronous, nothing is cached.
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
  ) {}

  get enabled(): boolean {
    return this.externalChanges !== null;
  }

  /**
   * Call before reading: drops everything if the store changed under us. Returns the generation
   * to put with. The store is asked once per turn of the event loop: the requests read in one
   * turn are concurrent with each other, so one answer serves them all. (Each ask is a WAL-index
   * read with file locks, several µs — a fifth of an authenticated request's CPU when asked for
   * every lookup.)
   */
  check(): number {
    if (this.externalChanges && !this.checkedThisTurn) {
      this.checkedThisTurn = true;
      setImmediate(this.endTurn);
      const version = this.externalChanges();
      if (version !== this.seenVersion) {
        this.clear();
        this.seenVersion = version;
      }
    }
    return this.generation;
  }

  private checkedThisTurn = false;
  private readonly endTurn = () => {
    this.checkedThisTurn = false;
  };

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
