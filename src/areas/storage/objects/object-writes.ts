import { GroupCommit } from '../../../kernel/store/group-commit.js';
import type { Store } from '../../../kernel/store/store.js';
import { type Units, unitsOf } from '../../../kernel/store/unit-of-work.js';
import { type BucketRef, type NewVersion, ObjectRepo, type Released } from './repo.js';
import type { CompletedUploadRow, ObjectRow, PartRow, UploadRow } from './tables.js';
import type { PendingVersion } from './version-writes.js';

/** Versions per shared unit: enough for a burst of small PUTs, short enough to keep latency low. */
const VERSIONS_PER_COMMIT = 128;

/**
 * Attempts of a data-plane unit. Its writers serialise on the bucket's row (`lockLiveBucket`), not
 * on a named lock, so one may still lose a race on a unique key (a part number, a key's current
 * version) to a concurrent unit — in a bucket with no row, or between a read and the row lock on
 * PostgreSQL: the kernel runs it again from scratch (UnitOptions.attemptsOnUniqueRace).
 */
const RACE = { attemptsOnUniqueRace: 9 } as const;

/**
 * The data plane's units of work: every write that checks something (the bucket is live, the
 * upload still exists, the part or version it replaces) runs in one unit, with the repo bound to
 * its transaction. Reads go through `read`, the repo bound to the store.
 */
export class ObjectWrites {
  private readonly data: Units<ObjectRepo>;
  /**
   * New versions arriving together (concurrent PUTs, deletes that leave a marker) share one unit:
   * on SQLite one commit writes the pages they share once, on PostgreSQL they pay one commit
   * round trip. Each still gets its own answer, and one that fails (its bucket was deleted) is
   * written again alone, so it cannot fail the others.
   */
  private readonly versionWrites = new GroupCommit<PendingVersion>(async (items) => {
    const outs = await this.data.run([], (repo) => repo.writeVersions(items), RACE);
    items.forEach((item, i) => {
      item.out = outs[i];
    });
  }, VERSIONS_PER_COMMIT);

  constructor(store: Store) {
    this.data = unitsOf(store, ObjectRepo.over);
  }

  /** The repo outside any unit: reads, and single-statement writes that check nothing. */
  get read(): ObjectRepo {
    return this.data.read;
  }

  /**
   * Makes `v` the current version of `key` under the bucket's versioning state: Enabled keeps
   * the previous version as noncurrent; Unversioned and Suspended replace the `null` version.
   * Resolves once committed, in a unit shared with the versions written at the same time.
   */
  async commitVersion(
    bucket: BucketRef,
    key: string,
    v: NewVersion,
    now: number,
  ): Promise<{ versionId: string; released: Released }> {
    const item: PendingVersion = { bucket, key, row: v, now };
    await this.versionWrites.submit([item]);
    return item.out!;
  }

  createUpload(row: UploadRow): Promise<void> {
    return this.data.run([], (repo) => repo.createUpload(row), RACE);
  }

  putPart(part: PartRow): Promise<Released> {
    return this.data.run([], (repo) => repo.putPart(part), RACE);
  }

  /** An abort: the upload and its parts go; null when it was gone already. */
  dropUpload(uploadId: string): Promise<Released | null> {
    return this.data.run([], (repo) => repo.dropUpload(uploadId), RACE);
  }

  completeUpload(
    bucket: BucketRef,
    key: string,
    v: NewVersion,
    upload: { id: string; keep: Map<number, string>; mismatch: () => Error },
    completed: Omit<CompletedUploadRow, 'version_id'>,
  ): Promise<{ versionId: string; released: Released } | null> {
    return this.data.run([], (repo) => repo.completeUpload(bucket, key, v, upload, completed), RACE);
  }

  expireCurrent(
    bucket: BucketRef,
    key: string,
    marker: NewVersion,
    modifiedBy: number,
  ): Promise<{ versionId: string; released: Released } | null> {
    return this.data.run([], (repo) => repo.expireCurrent(bucket, key, marker, modifiedBy), RACE);
  }

  deleteVersion(bucket: BucketRef, row: ObjectRow, modifiedBy?: number): Promise<Released> {
    return this.data.run([], (repo) => repo.deleteVersion(bucket, row, modifiedBy), RACE);
  }

  /** Every row of a bucket, in one unit; the blobs to delete. */
  purge(bucketId: string): Promise<Released> {
    return this.data.run([], (repo) => repo.purge(bucketId), RACE);
  }
}
