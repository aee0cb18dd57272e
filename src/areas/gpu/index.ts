import { defineArea } from '../wiring.js';
import { GpuCatalogue } from './catalogue.js';
import { gpuMigrations } from './migrations.js';
import { gpuRoutes } from './routes.js';
import { GpuService } from './service.js';
import { gpuWorkerRoutes } from './worker-routes.js';
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
    const catalogue = GpuCatalogue.load(kernel.config.gpu.catalogueFile);
    const outputs = storage.internalBucket('gpu-outputs');
    const baseUrl = () => kernel.baseUrl();
    const gpu = new GpuService(
      catalogue,
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      kernel.webhooks,
      outputs,
      kernel.secrets,
      baseUrl,
    );
    const protocol = gpu.worker;
    const workers = new GpuWorkers(gpu.repo, kernel.clock, catalogue);
    // Leases that run out and jobs past their time limit are swept on the clock (and at every lease).
    kernel.jobs.register(SWEEP_JOB, { run: async () => void (await protocol.sweep()) });
    await kernel.jobs.schedule(SWEEP_JOB, SWEEP_JOB, 15);
    kernel.registry.addBackend({
      area: 'gpu',
      name: 'queue',
      driver: 'pull workers',
      simulated: false,
      detail: `${catalogue.engines.length} engines; outputs in ${outputs.location}; \`fjord gpu-worker\` serves the reference engines`,
    });
    return {
      service: gpu,
      routes: [...gpuRoutes(gpu), ...gpuWorkerRoutes(protocol, workers)],
      onReset: async () => {
        await kernel.jobs.schedule(SWEEP_JOB, SWEEP_JOB, 15);
      },
    };
  },
});
