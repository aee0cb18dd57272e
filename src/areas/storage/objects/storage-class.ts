import { s3Errors } from '../s3/errors.js';

/**
 * Storage classes as S3 names them. Fjord keeps every object on the same disk: a class is a label
 * with S3's semantics (set on write, changed by a copy or a lifecycle transition, reported in
 * listings), as MinIO and Garage treat it. The archive classes are refused: their objects must be
 * restored before they can be read, and Fjord has no RestoreObject.
 */
export const STORAGE_CLASSES = [
  'STANDARD',
  'REDUCED_REDUNDANCY',
  'STANDARD_IA',
  'ONEZONE_IA',
  'INTELLIGENT_TIERING',
  'GLACIER_IR',
] as const;
export type StorageClass = (typeof STORAGE_CLASSES)[number];

/** Classes S3 has whose objects need RestoreObject before a read. */
export const ARCHIVE_CLASSES = ['GLACIER', 'DEEP_ARCHIVE'] as const;

/** What a lifecycle Transition may name (S3's list); the archive ones are refused with NotImplemented. */
export const TRANSITION_CLASSES = [
  'STANDARD_IA',
  'ONEZONE_IA',
  'INTELLIGENT_TIERING',
  'GLACIER_IR',
  ...ARCHIVE_CLASSES,
] as const;

/** Classes S3 will not transition to before an object is 30 days old. */
export const THIRTY_DAY_CLASSES: readonly string[] = ['STANDARD_IA', 'ONEZONE_IA'];

/**
 * S3's transition waterfall: a lifecycle rule moves an object only down it (STANDARD to
 * STANDARD_IA to INTELLIGENT_TIERING to ONEZONE_IA to GLACIER_IR), never back up.
 */
const RANK: Record<string, number> = {
  STANDARD: 0,
  REDUCED_REDUNDANCY: 0,
  STANDARD_IA: 1,
  INTELLIGENT_TIERING: 2,
  ONEZONE_IA: 3,
  GLACIER_IR: 4,
};

/** Whether a lifecycle transition may move a version of class `from` (null: STANDARD) to `to`. */
export const transitionMoves = (from: string | null, to: string): boolean =>
  (RANK[to] ?? -1) > (RANK[from ?? 'STANDARD'] ?? Number.POSITIVE_INFINITY);

/**
 * The class a write asks for (`x-amz-storage-class`, or the POST form's field), as stored: null
 * for STANDARD or none given. Anything else S3 names is refused as S3 refuses it on a general
 * purpose bucket (OUTPOSTS, SNOW, EXPRESS_ONEZONE belong to other kinds of bucket), and so are
 * the archive classes.
 */
export function storageClassOf(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!(STORAGE_CLASSES as readonly string[]).includes(value)) throw s3Errors.invalidStorageClass(value);
  return value === 'STANDARD' ? null : value;
}

/** The class to report: STANDARD when none is stored. */
export const reportedClass = (stored: string | null | undefined): string => stored ?? 'STANDARD';
