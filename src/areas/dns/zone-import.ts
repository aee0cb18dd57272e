import { AppError } from '../../kernel/errors.js';
import type { DnsRecordsTable, DnsZonesTable } from './migrations.js';
import type { RecordChange } from './record-changes.js';
import type { RecordWriter } from './record-writer.js';
import { type Actor, zoneErrors } from './views.js';
import { parseZoneFile, ZoneFileError } from './zone-file.js';

/**
 * A BIND zone file imported as one batch through the record writer: every record or none,
 * under the zone's lock. With `replace`, the zone's records (read inside that transaction) are
 * deleted first. Errors name the zone file's line. `maxRecords` is the `dns.batch_records` row.
 */
export async function importZoneFile(
  writer: RecordWriter,
  zone: DnsZonesTable,
  actor: Actor,
  text: string,
  replace: boolean,
  maxRecords: number | null,
) {
  let parsed: ReturnType<typeof parseZoneFile>;
  try {
    parsed = parseZoneFile(text, zone.name);
  } catch (err) {
    if (err instanceof ZoneFileError) throw zoneErrors.zoneFile(err.message);
    throw err;
  }
  if (maxRecords !== null && parsed.records.length > maxRecords) {
    throw zoneErrors.zoneFile(
      `A zone file may carry at most ${maxRecords} records per import (it has ${parsed.records.length}).`,
    );
  }
  const creates = parsed.records.map(
    (r): RecordChange => ({
      action: 'create',
      record_type: r.type,
      host: r.host,
      record: r.record,
      ttl: r.ttl,
      priority: r.priority,
    }),
  );
  // The records to replace are read inside the write transaction, under the zone's lock.
  let deleted = 0;
  const changes = (existing: DnsRecordsTable[]): RecordChange[] => {
    const old = replace ? existing : [];
    deleted = old.length;
    return [...old.map((r): RecordChange => ({ action: 'delete', id: r.id })), ...creates];
  };
  const lineOf = (i: number) => parsed.records[i - deleted]?.line ?? 0;
  try {
    await writer.apply(zone, changes, actor, (i) => `/body/zone_file/line/${lineOf(i)}`, 'invalid');
  } catch (err) {
    // Name the zone-file line in the message, where the user will look.
    if (err instanceof AppError && err.options.errors?.[0]) {
      const line = /\/line\/(\d+)$/.exec(err.options.errors[0].path)?.[1];
      if (line) throw new AppError(err.kind, err.code, `line ${line}: ${err.message}`, err.options);
    }
    throw err;
  }
  return { imported: parsed.records.length, deleted, skipped: parsed.skipped };
}
