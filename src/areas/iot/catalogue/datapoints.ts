import type { Clock } from '../../../kernel/clock.js';
import { AppError } from '../../../kernel/errors.js';
import { newId } from '../../../kernel/ids.js';
import type { Limits } from '../../../kernel/limits/quotas.js';
import type { Store } from '../../../kernel/store/store.js';
import type { TelemetryPoint } from '../telemetry.js';
import { CatalogueRepo } from './repo.js';
import type { DatapointType, IotDatapointsTable } from './tables.js';

export interface DatapointInput {
  key: string;
  name: string;
  unit?: string | null;
  data_type: DatapointType;
  min?: number | null;
  max?: number | null;
  decimals?: number | null;
  description?: string | null;
}
export type DatapointPatch = Partial<Omit<DatapointInput, 'key'>>;

/** Why a point was refused, for the counters and the broker's log. */
export type Rejection = 'type' | 'range';

/** A message's points split by the datapoint definitions. */
export interface Checked {
  accepted: TelemetryPoint[];
  rejected: readonly { key: string; why: Rejection }[];
}

const NONE_REJECTED: Checked['rejected'] = Object.freeze([]);

function judgeAll(defs: Map<string, IotDatapointsTable>, points: TelemetryPoint[]): Checked {
  if (defs.size === 0) return { accepted: points, rejected: NONE_REJECTED };
  const accepted: TelemetryPoint[] = [];
  let rejected: { key: string; why: Rejection }[] | null = null;
  for (const p of points) {
    const def = defs.get(p.key);
    const outcome = def ? judge(def, p.value) : p.value;
    if (typeof outcome === 'object') {
      rejected ??= [];
      rejected.push({ key: p.key, why: outcome.why });
    } else accepted.push(outcome === p.value ? p : { ...p, value: outcome });
  }
  return { accepted, rejected: rejected ?? NONE_REJECTED };
}

/** Definitions another process changed are seen within this long (this process's at once). */
const CACHE_MS = 5_000;

export const datapointErrors = {
  notFound: () => new AppError('not_found', 'datapoint_not_found', 'No such datapoint definition.'),
  exists: (key: string) =>
    new AppError(
      'conflict',
      'datapoint_exists',
      `A datapoint with key ${JSON.stringify(key)} already exists.`,
    ),
  quota: (max: number) =>
    new AppError('forbidden', 'quota_exceeded', `An account has at most ${max} datapoint definitions.`),
  invalid: (path: string, message: string) =>
    new AppError('invalid', 'invalid_datapoint', message, { errors: [{ path, message }] }),
};

/**
 * Datapoint definitions: what a telemetry key means (name, unit) and which values it may take.
 * Ingest checks each point against the definition of its key, if there is one: a value of the
 * wrong type or outside [min, max] is not stored (counted as rejected); a number is rounded to
 * `decimals`. Keys without a definition are stored as sent.
 */
export class Datapoints {
  private readonly repo: CatalogueRepo;
  private readonly cache = new Map<string, { at: number; byKey: Map<string, IotDatapointsTable> }>();
  private readonly loading = new Map<string, Promise<Map<string, IotDatapointsTable>>>();
  private gen = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: Limits,
  ) {
    this.repo = CatalogueRepo.of(store);
  }

  async create(customerId: string, input: DatapointInput) {
    checkShape(input.data_type, input);
    const now = this.clock.nowMs();
    const row: IotDatapointsTable = {
      id: newId(),
      customer_id: customerId,
      key: input.key,
      name: input.name,
      unit: input.unit ?? null,
      data_type: input.data_type,
      min: input.min ?? null,
      max: input.max ?? null,
      decimals: input.decimals ?? null,
      description: input.description ?? null,
      created_at: now,
      updated_at: now,
    };
    const max = this.limits.of('iot.datapoints');
    await this.store.unitOfWork({ locks: [`iot:datapoints:${customerId}`] }, async ({ tx }) => {
      const repo = CatalogueRepo.over(tx);
      if (await repo.datapointByKey(customerId, input.key)) throw datapointErrors.exists(input.key);
      if (max !== null && (await repo.countDatapoints(customerId)) >= max) throw datapointErrors.quota(max);
      await repo.insertDatapoint(row);
    });
    this.changed(customerId);
    return view(row);
  }

  async list(customerId: string) {
    return { datapoints: (await this.repo.datapoints(customerId)).map(view) };
  }

  async get(customerId: string, id: string) {
    return view(await this.row(customerId, id));
  }

  /** The key is the identity of the series and does not change; the rest applies from the next point. */
  async update(customerId: string, id: string, patch: DatapointPatch) {
    const row = await this.row(customerId, id);
    const next: IotDatapointsTable = {
      ...row,
      ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
      updated_at: this.clock.nowMs(),
    };
    checkShape(next.data_type, next);
    await this.repo.updateDatapoint(id, next);
    this.changed(customerId);
    return view(next);
  }

  async remove(customerId: string, id: string) {
    await this.row(customerId, id);
    await this.repo.deleteDatapoint(id);
    this.changed(customerId);
  }

  /** Splits a message's points into those to store (rounded) and those refused, with why. */
  async check(customerId: string, points: TelemetryPoint[]): Promise<Checked> {
    return judgeAll(await this.definitions(customerId), points);
  }

  /**
   * `check` without a promise while the customer's definitions are cached (nearly every message
   * of a busy device); undefined when only the store can say.
   */
  checkNow(customerId: string, points: TelemetryPoint[]): Checked | undefined {
    const hit = this.cache.get(customerId);
    if (!hit || Date.now() - hit.at >= CACHE_MS) return undefined;
    return judgeAll(hit.byKey, points);
  }

  /**
   * One read per customer at a time: when the cached definitions expire under a broker load,
   * every message in flight wants them at once, and a read each (all queued for the store's one
   * SQLite connection behind the telemetry write) cost more than the load itself.
   */
  private definitions(customerId: string): Promise<Map<string, IotDatapointsTable>> {
    const now = Date.now();
    const hit = this.cache.get(customerId);
    if (hit && now - hit.at < CACHE_MS) return Promise.resolve(hit.byKey);
    const under = this.loading.get(customerId);
    if (under !== undefined) return under;
    const gen = this.gen;
    const loading = this.repo.datapoints(customerId).then(
      (rows) => {
        if (this.loading.get(customerId) === loading) this.loading.delete(customerId);
        const byKey = new Map(rows.map((d) => [d.key, d]));
        // A definition changed here while this was read: what was read may predate it.
        if (gen === this.gen) this.cache.set(customerId, { at: now, byKey });
        return byKey;
      },
      (err) => {
        if (this.loading.get(customerId) === loading) this.loading.delete(customerId);
        throw err;
      },
    );
    this.loading.set(customerId, loading);
    return loading;
  }

  /** Forgets a customer's cached definitions after a change, including a read under way. */
  private changed(customerId: string) {
    this.gen++;
    this.cache.delete(customerId);
    this.loading.delete(customerId);
  }

  private async row(customerId: string, id: string) {
    const row = await this.repo.datapoint(customerId, id);
    if (!row) throw datapointErrors.notFound();
    return row;
  }
}

/** The value to store, or why it is refused. */
function judge(
  def: IotDatapointsTable,
  value: TelemetryPoint['value'],
): TelemetryPoint['value'] | { why: Rejection } {
  switch (def.data_type) {
    case 'boolean':
      return typeof value === 'boolean' ? value : { why: 'type' };
    case 'string':
      return typeof value === 'string' ? value : { why: 'type' };
    case 'integer':
    case 'number': {
      if (typeof value !== 'number') return { why: 'type' };
      if (def.data_type === 'integer' && !Number.isInteger(value)) return { why: 'type' };
      if ((def.min !== null && value < def.min) || (def.max !== null && value > def.max))
        return { why: 'range' };
      if (def.decimals === null || def.data_type === 'integer') return value;
      const f = 10 ** def.decimals;
      return Math.round(value * f) / f;
    }
  }
}

function checkShape(
  type: DatapointType,
  d: { min?: number | null; max?: number | null; decimals?: number | null },
) {
  const numeric = type === 'number' || type === 'integer';
  if (!numeric && (d.min != null || d.max != null || d.decimals != null))
    throw datapointErrors.invalid(
      '/body/data_type',
      `min, max and decimals apply only to numbers, not ${type}`,
    );
  if (d.min != null && d.max != null && d.min > d.max)
    throw datapointErrors.invalid('/body/min', 'min is greater than max');
}

const view = (d: IotDatapointsTable) => ({
  id: d.id,
  key: d.key,
  name: d.name,
  unit: d.unit,
  data_type: d.data_type,
  min: d.min === null ? null : Number(d.min),
  max: d.max === null ? null : Number(d.max),
  decimals: d.decimals,
  description: d.description,
  created_at: new Date(Number(d.created_at)).toISOString(),
  updated_at: new Date(Number(d.updated_at)).toISOString(),
});
