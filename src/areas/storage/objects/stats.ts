import type { Kysely } from 'kysely';
import type { BucketRecord, BucketUsage, ObjectStats, PackCompactionResult } from '../data-plane-contract.js';
import { storageErrors } from '../errors.js';
import { FsBlobStore } from './drivers/fs-blob-store.js';
import { matchesFilter } from './lifecycle-expiration.js';
import { applyTransitions, hasTransitions } from './lifecycle-transitions.js';
import { parseLock, protectedBy } from './lock.js';
import type { ObjectStore } from './object-store.js';
import { PackCompactor } from './pack-compaction.js';
import { PackRefsRepo } from './pack-refs-repo.js';
import { parseSse } from './sse.js';

const DAY_MS = 86_400_000;

/** What the control plane reads of the data plane: counters, emptiness, purge and lifecycle. */
export class DataPlaneStats implements ObjectStats {
  /** Packs of small objects exist only on the `fs` store. */
  readonly compactPacks?: () => Promise<PackCompactionResult>;

  constructor(private readonly objects: ObjectStore) {
    const blobs = objects.blobs;
    if (blobs instanceof FsBlobStore) {
      const compactor = new PackCompactor(blobs.packs, new PackRefsRepo(objects.repo.db));
      this.compactPacks = () => compactor.run();
    }
  }

  usage(bucketId: string): Promise<BucketUsage> {
    return this.objects.repo.usage(bucketId);
  }

  usageOfCustomer(customerId: string): Promise<BucketUsage> {
    return this.objects.repo.usageOfCustomer(customerId);
  }

  // biome-ignore lint/suspicious/noExplicitAny: a transaction of the shared store
  isEmpty(bucketId: string, db?: Kysely<any>): Promise<boolean> {
    return this.objects.repo.isEmpty(bucketId, db);
  }

  async readObject(bucketId: string, key: string, maxBytes: number) {
    const row = await this.objects.repo.latest(bucketId, key);
    if (!row || row.is_delete_marker) return null;
    const size = Number(row.size);
    if (size > maxBytes) throw new RangeError(`the object is ${size} bytes, more than ${maxBytes}`);
    // Fjord never holds an SSE-C key: other areas get a clear refusal, not a decryption failure.
    if (parseSse(row.sse)?.alg === 'SSE-C') throw storageErrors.objectCustomerEncrypted(key);
    if (parseSse(row.sse)?.alg === 'aws:kms') throw storageErrors.objectKmsEncrypted(key);
    const contentType = row.content_type ?? 'application/octet-stream';
    if (size === 0) return { body: Buffer.alloc(0), contentType };
    const chunks: Buffer[] = [];
    for await (const chunk of await this.objects.read(row, 0, size - 1)) chunks.push(chunk as Buffer);
    return { body: Buffer.concat(chunks), contentType };
  }

  async purgeBucket(bucketId: string): Promise<void> {
    this.objects.release(await this.objects.writes.purge(bucketId));
  }

  /**
   * Removes blobs no object or part refers to and last written more than `olderThanMs` ago: what a
   * crash leaves between writing a blob and committing its row, or between dropping a row and
   * deleting its blob. The age keeps an upload that is being committed right now out of reach.
   */
  async sweepOrphanBlobs(olderThanMs: number): Promise<number> {
    const blobs = this.objects.blobs;
    if (!blobs.listOlderThan) return 0;
    const candidates: string[] = [];
    for await (const ref of blobs.listOlderThan(Date.now() - olderThanMs)) candidates.push(ref);
    if (candidates.length === 0) return 0;
    const referenced = await this.objects.repo.referencedBlobs();
    let removed = 0;
    for (const ref of candidates) {
      if (referenced.has(ref)) continue;
      await blobs.delete(ref);
      removed++;
    }
    return removed;
  }

  /**
   * One pass of a bucket's lifecycle rules as of `now`: current versions older than
   * `expiration_days` expire (a delete marker when versioned, gone when not); noncurrent
   * versions go `noncurrent_version_expiration_days` after they stopped being current (except
   * the newest `newer_noncurrent_versions` of their key), and a delete marker left alone by that
   * goes too; old incomplete uploads are aborted; versions whose transitions are due take their
   * new storage class (lifecycle-transitions.ts).
   */
  async applyLifecycle(
    bucket: BucketRecord,
    now: number,
  ): Promise<{ expired: number; aborted: number; transitioned: number }> {
    const ref = { id: bucket.id, customerId: bucket.customerId, versioning: bucket.versioning };
    const repo = this.objects.repo;
    let expired = 0;
    let aborted = 0;
    let transitioned = 0;
    for (const rule of bucket.lifecycle ?? []) {
      if (!rule.enabled) continue;
      if (
        rule.expiration_days !== null ||
        rule.expiration_date != null ||
        rule.noncurrent_version_expiration_days !== null
      ) {
        // By days: modified before the cut-off; at a date: every current version once it is past.
        const currentBefore =
          rule.expiration_days !== null
            ? now - rule.expiration_days * DAY_MS
            : rule.expiration_date != null && now >= rule.expiration_date
              ? Number.POSITIVE_INFINITY
              : null;
        const noncurrentBefore =
          rule.noncurrent_version_expiration_days !== null
            ? now - rule.noncurrent_version_expiration_days * DAY_MS
            : null;
        const keep = rule.newer_noncurrent_versions ?? 0;
        const newer = new NewerNoncurrent(repo, bucket.id);
        let after: { key: string; id: string } | null = null;
        for (;;) {
          const rows = await repo.lifecycleCandidates(bucket.id, rule.prefix, after, 500);
          if (rows.length === 0) break;
          after = rows[rows.length - 1]!;
          for (const row of rows) {
            if (!matchesFilter(rule, row)) continue;
            if (
              row.is_latest &&
              !row.is_delete_marker &&
              currentBefore !== null &&
              Number(row.last_modified) <= currentBefore
            ) {
              await this.objects.deleteCurrent(ref, row.key, currentBefore);
              expired++;
            } else if (
              !row.is_latest &&
              noncurrentBefore !== null &&
              Number(row.noncurrent_since ?? now) <= noncurrentBefore &&
              // A locked version outlives its lifecycle rule, as on S3: expiry waits for the lock.
              !protectedBy(parseLock(row.object_lock), now, false) &&
              (keep === 0 || (await newer.count(row.key, row.id)) >= keep)
            ) {
              if (await this.objects.deleteVersion(ref, row.key, row.version_id)) expired++;
            }
          }
          if (rows.length < 500) break;
        }
        if (noncurrentBefore !== null) expired += await this.dropLoneDeleteMarkers(ref, rule.prefix);
      } else if (rule.expired_object_delete_marker) {
        expired += await this.dropLoneDeleteMarkers(ref, rule.prefix);
      }
      if (rule.abort_incomplete_multipart_upload_days !== null) {
        const before = now - rule.abort_incomplete_multipart_upload_days * DAY_MS;
        for (const up of await repo.staleUploads(bucket.id, rule.prefix, before)) {
          await this.objects.abort(up.upload_id);
          aborted++;
        }
      }
      if (hasTransitions(rule)) {
        const newer = new NewerNoncurrent(repo, bucket.id);
        transitioned += await applyTransitions(
          repo,
          bucket.id,
          rule,
          now,
          (row) => matchesFilter(rule, row),
          (key, id) => newer.count(key, id),
        );
      }
    }
    return { expired, aborted, transitioned };
  }

  private async dropLoneDeleteMarkers(
    ref: { id: string; customerId: string; versioning: BucketRecord['versioning'] },
    prefix: string,
  ): Promise<number> {
    let dropped = 0;
    let after: { key: string; id: string } | null = null;
    for (;;) {
      const rows = await this.objects.repo.lifecycleCandidates(ref.id, prefix, after, 500);
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!;
      for (const row of rows) {
        if (!row.is_latest || !row.is_delete_marker) continue;
        const others = await this.objects.repo.listVersions(ref.id, '', { key: row.key, inclusive: true }, 2);
        if (others.filter((o) => o.key === row.key).length === 1) {
          await this.objects.deleteVersion(ref, row.key, row.version_id);
          dropped++;
        }
      }
      if (rows.length < 500) break;
    }
    return dropped;
  }
}

/**
 * How many noncurrent versions of a key are newer than a given one, as the pass found them: each
 * key's versions are read once (newest first, the order ListObjectVersions gives) and kept while
 * the pass runs, so versions this pass expires still count for older ones, as S3 ranks them.
 */
class NewerNoncurrent {
  private readonly byKey = new Map<string, string[]>();
  constructor(
    private readonly repo: ObjectStore['repo'],
    private readonly bucketId: string,
  ) {}

  async count(key: string, versionRowId: string): Promise<number> {
    let ids = this.byKey.get(key);
    if (!ids) {
      ids = [];
      let from: { key: string; inclusive: boolean; id?: string } = { key, inclusive: true };
      for (;;) {
        const page = await this.repo.listVersions(this.bucketId, key, from, 1000);
        for (const r of page) if (r.key === key && !r.is_latest) ids.push(r.id);
        const last = page[page.length - 1];
        if (page.length < 1000 || !last || last.key !== key) break;
        from = { key, inclusive: false, id: last.id };
      }
      // A bounded memory: a bucket with very many keys re-reads rather than keeping them all.
      if (this.byKey.size >= 10_000) this.byKey.clear();
      this.byKey.set(key, ids);
    }
    // Its place in the list is the number of newer ones; one not found is never counted as old.
    return Math.max(0, ids.indexOf(versionRowId));
  }
}
