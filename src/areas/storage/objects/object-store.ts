import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Clock } from '../../../kernel/clock.js';
import { newId } from '../../../kernel/ids.js';
import type { SecretBox } from '../../../kernel/secrets.js';
import type { ChecksumAlgorithm } from '../s3/checksums.js';
import { s3Errors } from '../s3/errors.js';
import type { ChecksumType, CompleteAssertions } from '../s3/multipart-checksums.js';
import type { BlobStore } from './drivers/blob-store.js';
import { lockText } from './lock.js';
import { joinParts, partsList } from './multipart-join.js';
import {
  attributesOf,
  deleteMarker,
  type IncomingBody,
  type ListedPart,
  newVersionRow,
  type ObjectAttributes,
  type VersionContent,
  type WriteOptions,
  type Written,
} from './object-types.js';
import type { ObjectWrites } from './object-writes.js';
import { StorageQuota } from './quota.js';
import type { BucketRef, ObjectRepo, Released } from './repo.js';
import { readSealed, sealedSize, sealStream } from './sealing.js';
import { openingKey, parseSse } from './sse.js';
import type { BlobPart, ObjectRow, UploadRow } from './tables.js';

export { MIN_PART_SIZE } from './multipart-join.js';
export const MAX_PARTS = 10_000;
const SMALL_OBJECT_BYTES = 256 * 1024;

/** 50 GB per upload (the guide's stated limit). */

export type { IncomingBody, ObjectAttributes, WriteOptions, Written } from './object-types.js';
export { attributesOf } from './object-types.js';

/** Bodies up to this size are read whole into memory, then written in one piece. */
const WHOLE_BODY_MAX = 128 * 1024;

/** Bodies larger than this take long enough to arrive that concurrent writes may have used the room. */
const RECHECK_QUOTA_ABOVE = 1024 * 1024;

/**
 * Objects, versions and multipart uploads: bytes through the blob store, metadata and counters
 * through the repo. Blobs a commit no longer names are deleted after it.
 */
export class ObjectStore {
  /** Reads, outside any unit. */
  readonly repo: ObjectRepo;
  constructor(
    /** Writes, each in its unit. */
    readonly writes: ObjectWrites,
    readonly blobs: BlobStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** Largest object a multipart upload may assemble (`storage.upload_bytes`). */
    private readonly maxUploadBytes: number = Number.MAX_SAFE_INTEGER,
    /** Bytes a customer may store (`storage.bytes` of its plan); null: no limit. */
    quotaOf: (customerId: string) => Promise<number | null> = async () => null,
    /** Wraps SSE-S3 data keys (FJORD_DATA_KEY); without it, SSE-S3 is refused. */
    readonly secrets?: SecretBox,
  ) {
    const repo = writes.read;
    this.repo = repo;
    this.quota = new StorageQuota(quotaOf, (customerId) => repo.usageOfCustomer(customerId));
  }
  private readonly quota: StorageQuota;

  /** The key that opens an object (or upload) sealed as `sse`; null for plaintext. */
  openingKey(sse: string | null, customerKey: Buffer | null = null): Buffer | null {
    const record = parseSse(sse);
    return record ? openingKey(record, this.secrets, customerKey) : null;
  }

  /**
   * Refuses a write that would take the customer past its plan's storage (quota.ts): checked
   * before the bytes are accepted (with the size the request announces) and, for a body that was
   * not announced exactly or took a while to arrive, again with the size written.
   */
  checkQuota(customerId: string, adding: number): Promise<void> {
    return this.quota.check(customerId, adding);
  }

  release(blobs: Released): void {
    for (const b of blobs)
      this.blobs.delete(b.ref).catch((err) => this.log.warn({ err, ref: b.ref }, 'blob delete failed'));
  }

  /** Streams a body into a new blob; the body's check runs before the blob is final. */
  async writeBlob<R extends Written>(
    body: IncomingBody<R>,
    sealKey: Buffer | null = null,
  ): Promise<{ parts: BlobPart[]; result: R }> {
    let result: R | null = null;
    const check = () => {
      result = body.verify();
    };
    const whole = sealKey || !this.blobs.putBuffered ? null : (body.whole?.(WHOLE_BODY_MAX) ?? null);
    let ref: string;
    if (whole) ref = await this.blobs.putBuffered!(await whole, check);
    else {
      const source = sealKey ? sealStream(sealKey, body.chunks()) : body.chunks();
      const size = sealKey ? sealedSize(body.expectedSize) : body.expectedSize;
      ref = await this.blobs.put(source, size, check);
    }
    const r = result as unknown as R;
    if (r.size === 0) {
      // An empty object names no blob: nothing to read back, nothing to leave behind.
      this.release([{ ref, size: 0 }]);
      return { parts: [], result: r };
    }
    return { parts: [{ ref, size: r.size }], result: r };
  }

  async putObject<R extends Written>(
    bucket: BucketRef,
    key: string,
    body: IncomingBody<R>,
    attrs: ObjectAttributes,
    options: WriteOptions = {},
  ) {
    await this.checkQuota(bucket.customerId, body.expectedSize);
    const { parts, result } = await this.writeBlob(body, options.sealing?.key ?? null);
    // Checked again with the size written, unless the body was exactly what was announced and
    // small enough to arrive at once: then the first check already judged these bytes.
    if (result.size !== body.expectedSize || result.size > RECHECK_QUOTA_ABOVE)
      await this.checkQuota(bucket.customerId, result.size).catch((err) => {
        this.release(parts);
        throw err;
      });
    const committed = await this.commit(bucket, key, {
      size: result.size,
      etag: result.md5,
      checksum: result.checksum ? JSON.stringify(result.checksum) : null,
      blob: JSON.stringify(parts),
      attrs,
      sse: options.sealing ? JSON.stringify(options.sealing.record) : null,
      objectLock: lockText(options.lock ?? null),
      acl: options.acl ?? null,
      storageClass: options.storageClass ?? null,
    }).catch(async (err) => {
      this.release(parts);
      throw err;
    });
    return {
      versionId: committed.versionId,
      etag: committed.etag,
      lastModified: committed.lastModified,
      result,
    };
  }

  async commit(
    bucket: BucketRef,
    key: string,
    v: VersionContent,
  ): Promise<{ versionId: string; etag: string; lastModified: number }> {
    const now = this.clock.nowMs();
    const { versionId, released } = await this.writes.commitVersion(bucket, key, newVersionRow(v, now), now);
    this.release(released);
    return { versionId, etag: v.etag, lastModified: now };
  }

  /**
   * The object's bytes `start`..`end` (inclusive), across the blobs of its parts; a sealed
   * object is opened with its data key or the customer's key (SSE-C).
   */
  async read(
    row: Pick<ObjectRow, 'blob' | 'size' | 'sse'>,
    start: number,
    end: number,
    customerKey: Buffer | null = null,
  ): Promise<Readable> {
    const parts = JSON.parse(row.blob) as BlobPart[];
    if (row.size === 0 || end < start) return Readable.from([]);
    const key = this.openingKey(row.sse, customerKey);
    if (key) return readSealed(this.blobs, parts, key, start, end);
    if (parts.length === 1) return this.blobs.get(parts[0]!.ref, start, end);
    const blobs = this.blobs;
    const pieces: { ref: string; from: number; to: number }[] = [];
    let offset = 0;
    for (const p of parts) {
      const pStart = offset;
      const pEnd = offset + p.size - 1;
      offset += p.size;
      if (pEnd < start || pStart > end) continue;
      pieces.push({ ref: p.ref, from: Math.max(start, pStart) - pStart, to: Math.min(end, pEnd) - pStart });
    }
    // Open the first blob now so a missing blob fails before the response starts.
    const first = await blobs.get(pieces[0]!.ref, pieces[0]!.from, pieces[0]!.to);
    return Readable.from(
      (async function* () {
        yield* first;
        for (const p of pieces.slice(1)) yield* await blobs.get(p.ref, p.from, p.to);
      })(),
      { objectMode: false },
    );
  }

  /** A small single-blob object's bytes in one read, or null when it must be streamed. */
  async readSmall(
    row: Pick<ObjectRow, 'blob' | 'size' | 'sse'>,
    start: number,
    end: number,
  ): Promise<Buffer | null> {
    const parts = JSON.parse(row.blob) as BlobPart[];
    if (row.sse || Number(row.size) > SMALL_OBJECT_BYTES || parts.length !== 1 || !this.blobs.readAll)
      return null;
    const all = await this.blobs.readAll(parts[0]!.ref);
    return all.subarray(start, end + 1);
  }

  /**
   * DeleteObject without a version id: a delete marker when versioning is on, else the object goes.
   * With `modifiedBy` (lifecycle expiry), only a current version last modified by then: an object
   * written since the rule matched stays. The removal or the marker checks that in its own
   * transaction, so a write landing after the first look here still stays.
   */
  async deleteCurrent(
    bucket: BucketRef,
    key: string,
    modifiedBy?: number,
  ): Promise<{ deleteMarker: boolean; versionId: string | null }> {
    const row =
      bucket.versioning === 'Unversioned' || modifiedBy !== undefined
        ? await this.repo.latest(bucket.id, key)
        : null;
    if (modifiedBy !== undefined && (!row || Number(row.last_modified) > modifiedBy))
      return { deleteMarker: false, versionId: null };
    if (bucket.versioning === 'Unversioned') {
      if (row) this.release(await this.writes.deleteVersion(bucket, row, modifiedBy));
      return { deleteMarker: false, versionId: null };
    }
    const now = this.clock.nowMs();
    const written =
      modifiedBy === undefined
        ? await this.writes.commitVersion(bucket, key, deleteMarker(now), now)
        : await this.writes.expireCurrent(bucket, key, deleteMarker(now), modifiedBy);
    if (!written) return { deleteMarker: false, versionId: null };
    this.release(written.released);
    return { deleteMarker: true, versionId: written.versionId };
  }

  async deleteVersion(
    bucket: BucketRef,
    key: string,
    versionId: string,
    /** Throws to keep the version (object lock); it sees the very row that is then deleted. */
    guard?: (row: ObjectRow) => void,
  ): Promise<{ deleteMarker: boolean } | null> {
    const row = await this.repo.version(bucket.id, key, versionId);
    if (!row) return null;
    guard?.(row);
    this.release(await this.writes.deleteVersion(bucket, row));
    return { deleteMarker: row.is_delete_marker === 1 };
  }

  // ---- multipart ---------------------------------------------------------------------

  async createUpload(
    bucketId: string,
    key: string,
    attrs: ObjectAttributes,
    checksum: { algorithm: ChecksumAlgorithm; type: ChecksumType } | null,
    options: WriteOptions = {},
  ): Promise<string> {
    const uploadId = newId().replace(/-/g, '') + newId().replace(/-/g, '').slice(16);
    const row: UploadRow = {
      upload_id: uploadId,
      bucket_id: bucketId,
      key,
      content_type: attrs.contentType,
      headers: JSON.stringify(attrs.headers),
      metadata: JSON.stringify(attrs.metadata),
      tags: JSON.stringify(attrs.tags),
      checksum_algorithm: checksum?.algorithm ?? null,
      checksum_type: checksum?.type ?? null,
      initiated_at: this.clock.nowMs(),
      sse: options.sealing ? JSON.stringify(options.sealing.record) : null,
      object_lock: lockText(options.lock ?? null),
      acl: options.acl ?? null,
      storage_class: options.storageClass ?? null,
      initiator: options.initiator ?? null,
    };
    await this.writes.createUpload(row);
    return uploadId;
  }

  async requireUpload(bucketId: string, key: string, uploadId: string): Promise<UploadRow> {
    const up = await this.repo.upload(bucketId, uploadId);
    if (!up || up.key !== key) throw s3Errors.noSuchUpload(uploadId);
    return up;
  }

  async putPart(uploadId: string, partNumber: number, parts: BlobPart[], w: Written): Promise<void> {
    const released = await this.writes.putPart({
      upload_id: uploadId,
      part_number: partNumber,
      size: w.size,
      etag: w.md5,
      checksum: w.checksum ? JSON.stringify(w.checksum) : null,
      blob: JSON.stringify(parts),
      last_modified: this.clock.nowMs(),
    });
    this.release(released);
    if (released.some((b) => parts.some((p) => p.ref === b.ref))) throw s3Errors.noSuchUpload(uploadId);
  }

  /**
   * Completes an upload: its listed parts become one object without a byte copied (multipart-join.ts
   * checks and joins them).
   */
  async complete(
    bucket: BucketRef,
    upload: UploadRow,
    listed: ListedPart[],
    asserted: CompleteAssertions = {},
  ) {
    const stored = await this.repo.parts(upload.upload_id);
    const { chosen, etag, size, blob, checksum } = await joinParts(
      upload,
      stored,
      listed,
      asserted,
      this.maxUploadBytes,
    );
    await this.checkQuota(bucket.customerId, size);
    const keep = new Map(chosen.map((p) => [p.part_number, p.blob]));
    const now = this.clock.nowMs();
    const row = newVersionRow(
      {
        size,
        etag,
        checksum,
        blob,
        attrs: attributesOf(upload),
        sse: upload.sse,
        objectLock: upload.object_lock,
        acl: upload.acl,
        storageClass: upload.storage_class,
      },
      now,
    );
    // One transaction: the upload row goes (a concurrent Complete or Abort then finds nothing to
    // reuse) and the object naming its parts' blobs arrives, or neither happens.
    const done = await this.writes.completeUpload(
      bucket,
      upload.key,
      row,
      { id: upload.upload_id, keep, mismatch: () => s3Errors.invalidPart() },
      {
        upload_id: upload.upload_id,
        bucket_id: bucket.id,
        key: upload.key,
        parts: partsList(listed),
        etag,
        checksum,
        completed_at: now,
      },
    );
    if (done === null) throw s3Errors.noSuchUpload(upload.upload_id);
    this.release(done.released);
    return { versionId: done.versionId, etag, checksum, lastModified: now };
  }

  /**
   * A Complete sent again for an upload completed in the last day, with the same parts, gets the
   * first answer again, as AWS gives it (a client whose connection dropped during the first one
   * retries). Null when there is no such completion: the caller answers NoSuchUpload.
   */
  async completedBefore(
    bucketId: string,
    key: string,
    uploadId: string,
    listed: ListedPart[],
  ): Promise<{ etag: string; versionId: string; checksum: string | null } | null> {
    const row = await this.repo.completed(bucketId, uploadId, this.clock.nowMs() - 86_400_000);
    if (!row || row.key !== key || row.parts !== partsList(listed)) return null;
    return { etag: row.etag, versionId: row.version_id, checksum: row.checksum };
  }

  async abort(uploadId: string): Promise<void> {
    this.release((await this.writes.dropUpload(uploadId)) ?? []);
  }
}
