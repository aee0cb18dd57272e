import type { Clock } from '../../kernel/clock.js';
import { isoOf } from '../../kernel/clock.js';
import { newId, randomString } from '../../kernel/ids.js';
import { hashToken } from '../../kernel/secrets.js';
import type { GpuCatalogue } from './catalogue.js';
import { gpuErrors } from './errors.js';
import type { GpuWorkersTable } from './migrations.js';
import type { GpuRepo } from './repo.js';
import { WORKER_SEEN_MS } from './service.js';

/**
 * Worker tokens (`fjw_…`), issued by the operator: a worker is the operator's machine, not a
 * customer's, so its token reaches only the jobs it leases — never a customer's other data.
 * Stored as a hash like API keys; revoking one stops the worker at its next call.
 */
export class GpuWorkers {
  constructor(
    private readonly repo: GpuRepo,
    private readonly clock: Clock,
    private readonly catalogue: GpuCatalogue,
  ) {}

  async create(name: string, engines: string[]) {
    const unknown = engines.find((e) => !this.catalogue.engine(e));
    if (unknown) throw gpuErrors.unknownEngine(unknown);
    const token = `fjw_${randomString(40)}`;
    const row: GpuWorkersTable = {
      id: newId(),
      name,
      token_hash: hashToken(token),
      engines: JSON.stringify(engines),
      serving_engines: null,
      last_seen_at: null,
      created_at: this.clock.nowMs(),
      revoked_at: null,
    };
    await this.repo.insertWorker(row);
    return { ...this.view(row), token };
  }

  async list() {
    return (await this.repo.workers()).map((w) => this.view(w));
  }

  revoke(id: string) {
    return this.repo.revokeWorker(id, this.clock.nowMs());
  }

  /** The worker behind `Authorization: Bearer fjw_…`, or null. */
  async authenticate(header: string | undefined): Promise<GpuWorkersTable | null> {
    const m = /^Bearer\s+(fjw_[A-Za-z0-9_-]{20,100})\s*$/.exec(header ?? '');
    return m ? ((await this.repo.workerByHash(hashToken(m[1]!))) ?? null) : null;
  }

  private view(w: GpuWorkersTable) {
    const seen = w.last_seen_at;
    return {
      id: w.id,
      name: w.name,
      engines: JSON.parse(w.engines) as string[],
      online: seen !== null && this.clock.nowMs() - seen < WORKER_SEEN_MS,
      last_seen_at: isoOf(seen),
      created_at: isoOf(w.created_at)!,
    };
  }
}
