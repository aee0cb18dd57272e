import type { ObjectLock } from './lock.js';
import type { NewVersion } from './repo.js';
import type { Sealing } from './sse.js';
import type { ObjectRow } from './tables.js';

/** What is stored beside an object's bytes. */
export interface ObjectAttributes {
  contentType: string | null;
  /** Standard headers that round-trip: cache-control, content-disposition, content-encoding, content-language, expires. */
  headers: Record<string, string>;
  /** User metadata, names without `x-amz-meta-`. */
  metadata: Record<string, string>;
  tags: Record<string, string>;
}

/** A body on its way in: the decoded bytes, and the check that runs before they become visible. */
export interface IncomingBody<R> {
  chunks(): AsyncIterable<Buffer>;
  /**
   * The whole body in one piece when it is known to be at most `max` bytes (else null): cheaper
   * than `chunks()` for a small body. Either one reads the body, never both.
   */
  whole?(max: number): Promise<Buffer[]> | null;
  verify(): R;
  expectedSize: number;
}

/** What a write asks for beyond bytes and attributes: sealing at rest and object lock. */
export interface WriteOptions {
  sealing?: Sealing | null;
  lock?: ObjectLock | null;
  /** ACL grants beyond the owner's, as stored (JSON), null for private. */
  acl?: string | null;
  /** S3's storage class as stored (storage-class.ts), null for STANDARD. */
  storageClass?: string | null;
  /** A multipart upload's initiator: the account of the key that started it. */
  initiator?: string | null;
}

/** A part as a CompleteMultipartUpload request lists it. */
export interface ListedPart {
  partNumber: number;
  etag: string;
  /** Its `Checksum<ALGORITHM>` elements, by algorithm (`CRC32` …). */
  checksums: Readonly<Record<string, string>>;
}

export interface Written {
  size: number;
  md5: string;
  checksum: { algorithm: string; value: string } | null;
}

export const attributesOf = (
  row: Pick<ObjectRow, 'content_type' | 'headers' | 'metadata' | 'tags'>,
): ObjectAttributes => ({
  contentType: row.content_type,
  headers: JSON.parse(row.headers) as Record<string, string>,
  metadata: JSON.parse(row.metadata) as Record<string, string>,
  tags: JSON.parse(row.tags) as Record<string, string>,
});

/** A delete marker's row, made at `now`. */
export const deleteMarker = (now: number): NewVersion => ({
  is_delete_marker: 1,
  size: 0,
  etag: '',
  content_type: null,
  headers: '{}',
  metadata: '{}',
  tags: '{}',
  checksum: null,
  blob: '[]',
  last_modified: now,
  sse: null,
  object_lock: null,
  acl: null,
  storage_class: null,
});

/** What a committed write stores beside its blob reference. */
export interface VersionContent {
  size: number;
  etag: string;
  checksum: string | null;
  /** The blob parts (JSON `BlobPart[]`). */
  blob: string;
  attrs: ObjectAttributes;
  sse?: string | null;
  objectLock?: string | null;
  acl?: string | null;
  storageClass?: string | null;
}

/** The row of a new object version with `v`'s content, made at `now`. */
export const newVersionRow = (v: VersionContent, now: number): NewVersion => ({
  is_delete_marker: 0,
  size: v.size,
  etag: v.etag,
  content_type: v.attrs.contentType,
  headers: JSON.stringify(v.attrs.headers),
  metadata: JSON.stringify(v.attrs.metadata),
  tags: JSON.stringify(v.attrs.tags),
  checksum: v.checksum,
  blob: v.blob,
  last_modified: now,
  sse: v.sse ?? null,
  object_lock: v.objectLock ?? null,
  acl: v.acl ?? null,
  storage_class: v.storageClass ?? null,
});
