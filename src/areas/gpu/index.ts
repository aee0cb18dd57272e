import { defineArea } from '../wiring.js';
import { gpuMigrations } from './migrations.js';
import { gpuRoutes } from './routes.js';
import { GpuService } from './service.js';
import { GpuWorkers } from './workers.js';

export { GpuService } from './service.js';

const SWEEP_JOB = 'gpu.leases.sweep';

/** GPU jobs: a queue with prices and limits, and the pull protocol workers serve it through. */
export const gpuArea = defineArea({
  name: 'gpu',
  // Outputs live in Fjord's own object storage.
  needs: ['storage'],
  migrations: gpuMigrations,
  async setup(kernel, { storage }) {
    const outputs = storage.internalBucket('gpu-outputs');
    const gpu = new GpuService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      kernel.webhooks,
      outputs,
      kernel.secrets,
      () => kernel.baseUrl(),
    );
    const workers = new GpuWorkers(gpu.repo, kernel.clock);
    // Leases that run out and jobs past their time limit are swept on the clock (and at every lease).
    kernel.jobs.register(SWEEP_JOB, { run: async () => void (await gpu.sweep()) });
    await kernel.jobs.schedule(SWEEP_JOB, SWEEP_JOB, 15);
    kernel.registry.addBackend({
      area: 'gpu',
      name: 'queue',
      driver: 'pull workers',
      simulated: false,
      detail: `outputs in ${outputs.location}; \`fjord gpu-worker\` serves the reference engines`,
    });
    return {
      service: gpu,
      routes: gpuRoutes(gpu, workers),
      onReset: async () => {
        await kernel.jobs.schedule(SWEEP_JOB, SWEEP_JOB, 15);
      },
    };
  },
});
