import { Counter } from 'prom-client';
import type { Kernel } from '../../kernel/kernel.js';
import type { ObjectStats } from './data-plane-contract.js';
import { KMS_DESTROY_JOB, type KmsKeyService } from './kms-keys.js';
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
        if (done.expired > 0 || done.aborted > 0 || (done.transitioned ?? 0) > 0) {
          kernel.log.info({ bucket: bucket.name, ...done }, 'storage lifecycle applied');
        }
      }
    },
  });
}

/**
 * A KMS key scheduled for deletion is destroyed by a job due at its `deletion_date` (on the clock:
 * moving the emulator clock past it runs the job). The job is written with the scheduling, so it
 * survives restarts; a cancelled deletion leaves a job that finds nothing to do.
 */
export function registerKmsDestroyJob(kernel: Kernel, kms: KmsKeyService) {
  kernel.jobs.register<{ customer_id: string; key_id: string }>(KMS_DESTROY_JOB, {
    run: async (p) => {
      if (await kms.destroyIfDue(p.customer_id, p.key_id))
        kernel.log.info({ key_id: p.key_id }, 'KMS key material destroyed at the end of its waiting period');
    },
  });
}

/** Blobs left by a crash are removed daily; only those an hour old, so no upload in flight is touched. */
export const BLOB_SWEEP_JOB = 'storage.blobs.sweep';
export const ORPHAN_BLOB_AGE_MS = 3600_000;

export function registerBlobSweepJob(kernel: Kernel, stats: ObjectStats) {
  kernel.jobs.register(BLOB_SWEEP_JOB, {
    run: async () => {
      const removed = (await stats.sweepOrphanBlobs?.(ORPHAN_BLOB_AGE_MS)) ?? 0;
      if (removed > 0) kernel.log.warn({ removed }, 'removed blobs no object refers to (left by a crash)');
    },
  });
}

/**
 * Pack compaction (small objects' pack files, `fs` store) every six hours: each pass reads every
 * version row once, so it runs less often than lifecycle. A pack needs about two passes from
 * closing to removal (copy and switch, then removal after the grace).
 */
export const PACK_COMPACTION_JOB = 'storage.packs.compact';
export const PACK_COMPACTION_EVERY_S = 6 * 3600;

export function registerPackCompactionJob(kernel: Kernel, stats: ObjectStats) {
  const bytes = new Counter({
    name: 'fjord_storage_pack_compaction_bytes_total',
    help: 'Bytes pack compaction copied out of sparse packs (moved) and released with removed packs (freed)',
    labelNames: ['kind'],
    registers: [kernel.metrics.registry],
  });
  kernel.jobs.register(PACK_COMPACTION_JOB, {
    run: async () => {
      const done = await stats.compactPacks?.();
      if (!done) return;
      bytes.inc({ kind: 'moved' }, done.bytesMoved);
      bytes.inc({ kind: 'freed' }, done.bytesFreed);
      if (done.packsCompacted > 0 || done.packsRemoved > 0) kernel.log.info(done, 'storage packs compacted');
      if (done.packsSkipped > 0) kernel.log.warn(done, 'storage pack compaction could not read some packs');
    },
  });
}
