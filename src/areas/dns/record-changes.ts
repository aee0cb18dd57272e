import { AppError } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import type { DnsRecordsTable } from './migrations.js';
import { absoluteName, NameError, normaliseHost } from './names.js';
import { ContentError, canonicalContent, RECORD_TYPES, type RecordType } from './record-content.js';

/** TTL bounds of records (docs/dns.md). */
export const TTL_MIN = 60;
export const TTL_MAX = 604800;
export const TTL_DEFAULT = 3600;

export type RecordChange =
  | {
      action: 'create';
      record_type: string;
      host: string;
      record: string;
      ttl?: number | null;
      priority?: number | null;
    }
  | {
      action: 'update';
      id: string;
      host?: string;
      record?: string;
      ttl?: number | null;
      priority?: number | null;
    }
  | { action: 'delete'; id: string };

export interface ChangeOutcome {
  action: RecordChange['action'];
  id: string;
  /** The record after the change; null for a delete. */
  record: DnsRecordsTable | null;
}

export interface ChangePlan {
  inserts: DnsRecordsTable[];
  updates: DnsRecordsTable[];
  deletes: string[];
  outcomes: ChangeOutcome[];
  /** Records in the zone afterwards. */
  total: number;
}

/** Where a failing field sits in the request, for the error's `errors[].path`. */
export type PathOf = (index: number, field: string) => string;

export const dnsErrors = {
  invalid: (path: string, message: string, code = 'invalid_record') =>
    new AppError('invalid', code, message, { errors: [{ path, message }] }),
  conflict: (path: string, code: string, message: string) =>
    new AppError('conflict', code, message, { errors: [{ path, message }] }),
  recordNotFound: () => new AppError('not_found', 'not_found', 'Record not found.'),
  quota: (message: string) => new AppError('forbidden', 'quota_exceeded', message),
};

/**
 * Applies record changes, in order, to a copy of the zone's records and checks every rule on the
 * result as it goes: value syntax per type, host inside the zone, CNAME alone and never at the
 * apex, no NS at the apex (Fjord's) or on a wildcard, SRV owners `_service._proto`, no duplicate
 * records, TTL bounds, and the zone's record quota at the end. Nothing is written: the caller
 * writes the plan in one transaction, so a change that fails leaves the zone as it was.
 * `missing` says how to report an unknown id (404 for a single change, 422 inside a batch).
 */
export function planChanges(
  apex: string,
  existing: DnsRecordsTable[],
  changes: RecordChange[],
  opts: {
    zoneId: string;
    now: number;
    maxRecords: number | null;
    pathOf: PathOf;
    missing: 'not_found' | 'invalid';
  },
): ChangePlan {
  const working = new Map(existing.map((r) => [r.id, { ...r }]));
  const original = new Map(existing.map((r) => [r.id, r]));
  const outcomes: ChangeOutcome[] = [];
  const touchedSets = new Map<string, number>(); // `${name} ${type}` → TTL set last

  changes.forEach((change, i) => {
    const path = (field: string) => opts.pathOf(i, field);
    const find = (id: string) => {
      const row = working.get(id);
      if (!row) {
        if (opts.missing === 'not_found') throw dnsErrors.recordNotFound();
        throw dnsErrors.invalid(path('id'), `No record ${id} in this zone.`, 'record_not_found');
      }
      return row;
    };
    if (change.action === 'delete') {
      find(change.id);
      working.delete(change.id);
      outcomes.push({ action: 'delete', id: change.id, record: null });
      return;
    }
    let row: DnsRecordsTable;
    if (change.action === 'create') {
      const type = change.record_type.toUpperCase();
      if (!(RECORD_TYPES as readonly string[]).includes(type)) {
        throw dnsErrors.invalid(
          path('record_type'),
          `record_type must be one of ${RECORD_TYPES.join(', ')}.`,
        );
      }
      row = {
        id: newId(),
        zone_id: opts.zoneId,
        name: host(change.host, apex, path('host')),
        type,
        content: '',
        ttl: ttl(change.ttl ?? TTL_DEFAULT, path('ttl')),
        priority: null,
        created_at: opts.now,
      };
      Object.assign(row, content(row.type as RecordType, change.record, change.priority, apex, path));
    } else {
      const before = find(change.id);
      row = { ...before };
      if (change.host !== undefined) row.name = host(change.host, apex, path('host'));
      if (change.ttl !== undefined && change.ttl !== null) row.ttl = ttl(change.ttl, path('ttl'));
      // The value is checked again whenever it or the priority changes: they are judged together.
      if (change.record !== undefined || change.priority !== undefined) {
        const priority = change.priority === undefined ? before.priority : change.priority;
        Object.assign(
          row,
          content(row.type as RecordType, change.record ?? before.content, priority, apex, path),
        );
      }
    }
    checkPlacement(row, apex, working, path);
    working.set(row.id, row);
    touchedSets.set(`${row.name} ${row.type}`, row.ttl);
    outcomes.push({ action: change.action, id: row.id, record: row });
  });

  // RFC 2181 §5.2: the records of an RRset share one TTL; the one set last applies to all.
  for (const r of working.values()) {
    const t = touchedSets.get(`${r.name} ${r.type}`);
    if (t !== undefined) r.ttl = t;
  }
  if (opts.maxRecords !== null && working.size > opts.maxRecords && working.size > existing.length) {
    throw dnsErrors.quota(`This zone may hold at most ${opts.maxRecords} records on your plan.`);
  }
  const inserts: DnsRecordsTable[] = [];
  const updates: DnsRecordsTable[] = [];
  for (const r of working.values()) {
    const before = original.get(r.id);
    if (!before) inserts.push(r);
    else if (
      before.name !== r.name ||
      before.content !== r.content ||
      before.ttl !== r.ttl ||
      before.priority !== r.priority
    ) {
      updates.push(r);
    }
  }
  const deletes = [...original.keys()].filter((id) => !working.has(id));
  return { inserts, updates, deletes, outcomes, total: working.size };
}

function host(value: string, apex: string, path: string): string {
  try {
    return normaliseHost(value, apex);
  } catch (err) {
    if (err instanceof NameError) throw dnsErrors.invalid(path, `host: ${err.message}.`, 'invalid_host');
    throw err;
  }
}

function ttl(value: number, path: string): number {
  if (!Number.isInteger(value) || value < TTL_MIN || value > TTL_MAX) {
    throw dnsErrors.invalid(path, `ttl must be an integer ${TTL_MIN}-${TTL_MAX} seconds.`, 'invalid_ttl');
  }
  return value;
}

function content(
  type: RecordType,
  value: string,
  priority: number | null | undefined,
  apex: string,
  path: (field: string) => string,
) {
  try {
    return canonicalContent(type, value, priority, apex);
  } catch (err) {
    if (err instanceof ContentError) throw dnsErrors.invalid(path(err.field), `${err.message}.`);
    throw err;
  }
}

function checkPlacement(
  row: DnsRecordsTable,
  apex: string,
  working: Map<string, DnsRecordsTable>,
  path: (field: string) => string,
): void {
  const at = row.name === '@' ? 'the zone apex' : row.name;
  if (row.type === 'CNAME' && row.name === '@') {
    throw dnsErrors.invalid(
      path('host'),
      'A CNAME cannot be at the zone apex (RFC 1912 §2.4).',
      'cname_at_apex',
    );
  }
  if (row.type === 'CNAME' && row.content === absoluteName(row.name, apex)) {
    throw dnsErrors.invalid(path('record'), 'A CNAME cannot point to itself.');
  }
  if (row.type === 'NS' && row.name === '@') {
    throw dnsErrors.invalid(
      path('host'),
      "The apex NS records are Fjord's nameservers; NS records delegate subdomains.",
      'ns_at_apex',
    );
  }
  if (row.type === 'NS' && row.name.startsWith('*')) {
    throw dnsErrors.invalid(path('host'), 'NS records cannot be on a wildcard name (RFC 4592 §4.2).');
  }
  if (row.type === 'SRV') {
    const labels = row.name === '@' ? [] : row.name.split('.');
    if (labels.length < 2 || !labels[0]!.startsWith('_') || !labels[1]!.startsWith('_')) {
      throw dnsErrors.invalid(
        path('host'),
        'An SRV host must start with _service._protocol (RFC 2782), e.g. _sip._tcp.',
      );
    }
  }
  for (const other of working.values()) {
    if (other.id === row.id || other.name !== row.name) continue;
    if (row.type === 'CNAME' || other.type === 'CNAME') {
      throw dnsErrors.conflict(
        path('host'),
        'cname_conflict',
        `A CNAME must stand alone: ${at} already has ${other.type === 'CNAME' ? 'a CNAME' : `a ${other.type} record`}.`,
      );
    }
    if (other.type === row.type && other.content === row.content && other.priority === row.priority) {
      throw dnsErrors.conflict(
        path('record'),
        'record_exists',
        `The same ${row.type} record already exists at ${at}.`,
      );
    }
  }
}

/** Replacing a set by itself: drop delete+create pairs of identical records so nothing is written. */
export function withoutNoOps(plan: ChangePlan, existing: DnsRecordsTable[]): ChangePlan {
  const key = (r: DnsRecordsTable) => `${r.name} ${r.type} ${r.content} ${r.priority} ${r.ttl}`;
  const deleted = new Map(existing.filter((r) => plan.deletes.includes(r.id)).map((r) => [key(r), r.id]));
  const keptIds = new Set<string>();
  const inserts = plan.inserts.filter((r) => {
    const id = deleted.get(key(r));
    if (id === undefined || keptIds.has(id)) return true;
    keptIds.add(id);
    return false;
  });
  return { ...plan, inserts, deletes: plan.deletes.filter((id) => !keptIds.has(id)) };
}
