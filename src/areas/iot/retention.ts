import type { Logger } from 'pino';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { Store } from '../../kernel/store/store.js';
import { ActivityRepo, DAY_MS } from './activity.js';
import { IotRepo } from './repo.js';

export const RETENTION_JOB = 'iot.telemetry.prune';
/** Hourly counters and sessions are kept this long (monthly usage needs a month; health needs a day). */
const COUNTER_DAYS = 400;

/**
 * Telemetry is kept for the days the customer's plan allows (`iot.telemetry_retention_days`)
 * and pruned hourly on Fjord's clock, so advancing the emulator's clock prunes at once.
 */
export class Retention {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: Limits,
    private readonly identity: IdentityService,
    private readonly log: Logger,
  ) {}

  async run(): Promise<number> {
    const now = this.clock.nowMs();
    const activity = ActivityRepo.of(this.store);
    let pruned = 0;
    for (const customerId of await IotRepo.of(this.store).customersWithDevices()) {
      const plan = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
      const days = this.limits.of('iot.telemetry_retention_days', plan);
      if (days === null) continue;
      pruned += await activity.prune(customerId, now - days * DAY_MS);
    }
    await activity.pruneCounters(now - COUNTER_DAYS * DAY_MS);
    if (pruned) this.log.info({ pruned }, 'iot: telemetry past retention pruned');
    return pruned;
  }
}
