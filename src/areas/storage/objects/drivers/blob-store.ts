import type { Readable } from 'node:stream';

/**
 * Where object bytes live. Metadata is always in the store; a blob is visible to readers only
 * once a metadata row names it, so a blob written but never committed is garbage, never a torn
 * object.
 */
export interface BlobStore {
  readonly name: 'fs' | 's3';
  /**
   * Streams `source` into a new blob; resolves once the blob is durable. `check` runs after the
   * last byte is written and before the blob is final; when it throws, the blob is discarded and
   * the error passed on.
   */
  put(source: AsyncIterable<Buffer>, size: number, check: () => void): Promise<string>;
  /**
   * `put` for a small body already in memory, without the streaming machinery. Small bodies take
   * this way whenever a store has it, so a wrapper that changes `put` must change it too.
   */
  putBuffered?(chunks: Buffer[], check: () => void): Promise<string>;
  /** Bytes `start`..`end` inclusive of one blob. */
  get(ref: string, start: number, end: number): Promise<Readable>;
  /** A whole small blob in one read (cheaper than a stream for a few KiB). */
  readAll?(ref: string): Promise<Buffer>;
  delete(ref: string): Promise<void>;
  /**
   * Every blob last written before `beforeMs` (wall clock), for the sweep of blobs no object
   * refers to. Stores that cannot list cheaply leave it out, and are not swept.
   */
  listOlderThan?(beforeMs: number): AsyncIterable<string>;
  /** Every blob gone (emulator reset). */
  clear(): Promise<void>;
}
