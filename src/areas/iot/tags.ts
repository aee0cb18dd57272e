import type { Clock } from '../../kernel/clock.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { Store } from '../../kernel/store/store.js';
import { iotErrors } from './errors.js';
import { IotRepo } from './repo.js';
import type { IotService } from './service.js';

const TAG_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N} ._:/-]{0,63}$/u;

/** A device's tags, in the order they were added. */
export class IotTags {
  private readonly repo: IotRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: Limits,
    private readonly iot: IotService,
  ) {
    this.repo = IotRepo.of(store);
  }

  async tags(customerId: string, deviceId: string) {
    const row = await this.iot.row(customerId, deviceId);
    return { tags: (await this.repo.tagsOf([row.id])).get(row.id) ?? [] };
  }

  /** Adds the tags the device lacks and answers only those (a repeat is not an error). */
  async addTags(customerId: string, deviceId: string, tags: string[]) {
    for (const tag of tags) if (!TAG_PATTERN.test(tag)) throw iotErrors.invalidTag(tag);
    const row = await this.iot.row(customerId, deviceId);
    return this.store.unitOfWork({ locks: [`iot:tags:${row.id}`] }, async ({ tx }) => {
      const repo = IotRepo.over(tx);
      const have = new Set((await repo.tagsOf([row.id])).get(row.id));
      const added = [...new Set(tags)].filter((t) => !have.has(t));
      const max = this.limits.of('iot.tags_per_device');
      if (max !== null && have.size + added.length > max) throw iotErrors.tooManyTags(max);
      const now = this.clock.nowMs();
      // Positions continue after the highest so far (removals leave gaps, order still holds).
      let next = (await repo.maxTagPosition(row.id)) + 1;
      for (const tag of added) await repo.addTag(row.id, tag, next++, now);
      return { added };
    });
  }

  async removeTag(customerId: string, deviceId: string, tag: string) {
    const row = await this.iot.row(customerId, deviceId);
    if (!(await this.repo.removeTag(row.id, tag))) throw iotErrors.tagNotFound();
  }
}
