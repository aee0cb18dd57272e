import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/kernel/limits/quotas.js';

/**
 * The limits table is the only source of limits: every row is read by code (so FJORD_LIMITS
 * changes what is enforced, not only what is published), and no area keeps a count or size of its
 * own under a limit's name, except the bounds listed below with the reason they are not rows.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');
const TABLE = 'src/kernel/limits/quotas.ts';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}
const files = sourceFiles(SRC).map((path) => ({
  path: relative(ROOT, path),
  text: readFileSync(path, 'utf8'),
}));

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the limits table as the only source of limits', () => {
  it('has every row read through the limits API', () => {
    // Read: named in a call `.of('row'` / `.allows('row'`, or named in a file that reads the
    // limits API (`limits.of(` behind a small helper) or maps to rows with a typed table.
    const readsLimits = (text: string) =>
      /limits\.(of|allows)\(/.test(text) || /satisfies Record<[^>]*LimitName>/.test(text);
    const unread = Object.keys(DEFAULT_LIMITS).filter((row) => {
      const call = new RegExp(`\\.(of|allows)\\(\\s*'${escapeRegExp(row)}'`);
      const named = new RegExp(`'${escapeRegExp(row)}'`);
      return !files.some(
        (f) => f.path !== TABLE && (call.test(f.text) || (named.test(f.text) && readsLimits(f.text))),
      );
    });
    expect(unread).toEqual([]);
  });

  it('reads row names typed, never through a cast', () => {
    const casts = files.filter((f) => /as '[a-z]+\.[a-z_]+'|as LimitName\b/.test(f.text)).map((f) => f.path);
    expect(casts).toEqual([]);
  });

  it('has no numeric limit constant in an area, except bounds that are not a customer’s limit', () => {
    const declared = files
      .filter((f) => f.path.startsWith('src/areas/'))
      .flatMap((f) =>
        [...f.text.matchAll(/^\s*(?:export )?const ([A-Z][A-Z0-9_]*) = [0-9][0-9_ *.]*;/gm)]
          .map((m) => m[1]!)
          .filter((name) => /(^|_)(MAX|MIN|LIMIT)(_|$)/.test(name))
          .map((name) => `${f.path}:${name}`),
      );
    const unexplained = declared.filter((d) => !NOT_ROWS.has(d));
    expect(unexplained, 'a limit a customer meets is a row of src/kernel/limits/quotas.ts').toEqual([]);
    // The list names only what exists, so it shrinks with the code.
    expect([...NOT_ROWS.keys()].filter((d) => !declared.includes(d))).toEqual([]);
  });
});

const PROTOCOL = 'fixed by the protocol or format Fjord speaks; clients expect this value';
const SHAPE = 'the shape of one request, stated in its schema and the API docs';
const INTERNAL = 'how Fjord works inside (a cache, a batch, a retry, a read window), not a customer’s limit';

/** Numeric bounds in areas that are not rows, and why. */
const NOT_ROWS = new Map<string, string>([
  ['src/areas/sms/segments.ts:MAX_PARTS', PROTOCOL],
  ['src/areas/sms/service.ts:MAX_RECIPIENTS', SHAPE],
  ['src/areas/account/ssh-public-key.ts:MAX_LINE_LENGTH', PROTOCOL],
  ['src/areas/account/ssh-public-key.ts:MAX_RSA_BITS', PROTOCOL],
  ['src/areas/account/ssh-public-key.ts:MIN_RSA_BITS', 'a security floor, not a quota'],
  ['src/areas/chatbot/indexer.ts:MAX_FETCH_BYTES', INTERNAL],
  ['src/areas/clusters/backups.ts:MAX_CATCH_UP', INTERNAL],
  ['src/areas/clusters/forward-dns.ts:MAX_CNAME_HOPS', PROTOCOL],
  ['src/areas/storage/objects/drivers/pack-readers.ts:MAX_READERS', INTERNAL],
  ['src/areas/speech/exports.ts:MAX_LINE', PROTOCOL],
  ['src/areas/speech/exports.ts:MAX_LINES', PROTOCOL],
  ['src/areas/dns/record-changes.ts:TTL_MIN', SHAPE],
  ['src/areas/dns/record-changes.ts:TTL_MAX', SHAPE],
  ['src/areas/dns/server/zone-view.ts:SYNTH_CACHE_LIMIT', INTERNAL],
  ['src/areas/dns/server/engine.ts:UDP_MAX', PROTOCOL],
  ['src/areas/dns/server/engine.ts:CACHE_LIMIT', INTERNAL],
  ['src/areas/dns/server/answer.ts:MAX_CHAIN', PROTOCOL],
  ['src/areas/dns/server/wire-writer.ts:MAX_MESSAGE', PROTOCOL],
  ['src/areas/dns/server/listeners.ts:TCP_MAX_CONNECTIONS', INTERNAL],
  ['src/areas/dns/names.ts:MAX_NAME', PROTOCOL],
  ['src/areas/dns/record-content.ts:MAX_TXT_BYTES', SHAPE],
  ['src/areas/storage/objects/object-store.ts:MAX_PARTS', PROTOCOL],
  ['src/areas/storage/objects/object-store.ts:WHOLE_BODY_MAX', INTERNAL],
  ['src/areas/storage/objects/pack-compaction.ts:MAX_COPY_BYTES_PER_RUN', INTERNAL],
  ['src/areas/storage/objects/drivers/fs-blob-store.ts:TEMP_MAX_AGE_MS', INTERNAL],
  ['src/areas/storage/objects/drivers/pack-files.ts:PACK_MAX_BLOB', INTERNAL],
  ['src/areas/storage/objects/lifecycle-transitions.ts:TRANSITION_MIN_BYTES', PROTOCOL],
  ['src/areas/storage/objects/multipart-join.ts:MIN_PART_SIZE', PROTOCOL],
  ['src/areas/storage/validation.ts:MAX_LIFECYCLE_DAYS', SHAPE],
  ['src/areas/storage/validation.ts:MAX_LIFECYCLE_RULES', PROTOCOL],
  ['src/areas/storage/validation.ts:MAX_NEWER_NONCURRENT', PROTOCOL],
  ['src/areas/storage/guide.ts:MULTIPART_MIN_PART_BYTES', PROTOCOL],
  ['src/areas/storage/s3/form-data.ts:MAX_FIELDS_BYTES', INTERNAL],
  ['src/areas/storage/s3/policy.ts:MAX_POLICY_BYTES', PROTOCOL],
  ['src/areas/apps/image-reference.ts:MAX_NAME', PROTOCOL],
  ['src/areas/storage/s3/handlers/configuration.ts:MAX_BUCKET_TAGS', PROTOCOL],
  ['src/areas/storage/s3/handlers/object-headers.ts:MAX_METADATA_BYTES', PROTOCOL],
  ['src/areas/storage/s3/handlers/multipart.ts:MAX_PART_BYTES', PROTOCOL],
  ['src/areas/storage/s3/handlers/object-lookup.ts:MAX_KEY_BYTES', PROTOCOL],
  ['src/areas/storage/s3/handlers/object-lock.ts:MAX_DAYS', PROTOCOL],
  ['src/areas/storage/s3/handlers/object-lock.ts:MAX_YEARS', PROTOCOL],
  ['src/areas/storage/s3/chunked.ts:MAX_LINE', PROTOCOL],
  ['src/areas/storage/s3/sigv4.ts:MAX_SKEW_MS', PROTOCOL],
  ['src/areas/storage/s3/sigv4.ts:MAX_PRESIGN_SECONDS', PROTOCOL],
  ['src/areas/gpu/catalogue.ts:MAX_IMAGE_SIDE', SHAPE],
  ['src/areas/gpu/catalogue.ts:MAX_VIDEO_SECONDS', SHAPE],
  ['src/areas/gpu/catalogue.ts:MAX_TRANSCRIPTION_SECONDS', SHAPE],
  ['src/areas/gpu/inputs.ts:MAX_PROMPT', SHAPE],
  ['src/areas/gpu/inputs.ts:MAX_SPEECH_TEXT', SHAPE],
  ['src/areas/gpu/worker-protocol.ts:MAX_ATTEMPTS', INTERNAL],
  ['src/areas/iot/telemetry-queries.ts:MAX_BUCKETS', SHAPE],
  ['src/areas/iot/service.ts:MAX_COMMAND_BYTES', SHAPE],
  ['src/areas/iot/alarms/channels.ts:MAX_RECIPIENTS', SHAPE],
  ['src/areas/iot/alarms/device-cache.ts:MAX_DEVICES_CACHED', INTERNAL],
  ['src/areas/iot/telemetry.ts:MAX_KEY', SHAPE],
  ['src/areas/iot/telemetry.ts:MAX_TEXT', SHAPE],
  ['src/areas/iot/telemetry.ts:MAX_POINTS_PER_MESSAGE', SHAPE],
  ['src/areas/apps/routes-logs.ts:MAX_UNSENT', INTERNAL],
  ['src/areas/iot/routes-live.ts:MAX_UNSENT', INTERNAL],
  ['src/areas/apps/revision-settings.ts:MAX_ENV', SHAPE],
  [
    'src/areas/verify/service.ts:MAX_ATTEMPTS',
    'a security bound of one verification (the spec’s five tries)',
  ],
  ['src/areas/verify/service.ts:MAX_METADATA_BYTES', SHAPE],
  ['src/areas/live/ingest.ts:MAX_SNIFF', INTERNAL],
  ['src/areas/live/media.ts:MAX_KEYFRAME_INTERVAL_S', PROTOCOL],
  ['src/areas/vps/drivers/simulated.ts:MAX_SIMULATED_ARCHIVE', INTERNAL],
  ['src/areas/dyn/nic-update.ts:MAX_HOSTS_PER_REQUEST', PROTOCOL],
]);
