import type { Kernel } from '../../kernel/kernel.js';
import type { ObjectStats } from './data-plane-contract.js';
import type { StorageService } from './service.js';

/**
 * Lifecycle rules are applied by a job on the clock (hourly, and at once when the emulator clock is
 * moved past the hour): the control plane finds the buckets with rules, the data plane expires
 * versions and aborts old uploads (`ObjectStats.applyLifecycle`), each bucket in turn.
 */
export function registerLifecycleJob(kernel: Kernel, service: StorageService, stats: ObjectStats) {
  kernel.jobs.register('storage.lifecycle', {
    run: async () => {
      if (!stats.applyLifecycle) return;
      const now = kernel.clock.nowMs();
      for (const bucket of await service.bucketsWithLifecycle()) {
        const done = await stats.applyLifecycle(bucket, now);
        if (done.expired > 0 || done.aborted > 0) {
          kernel.log.info({ bucket: bucket.name, ...done }, 'storage lifecycle applied');
        }
      }
    },
  });
}
