import { defineArea } from '../wiring.js';
import { ModelCatalogue } from './catalogue.js';
import { llmMigrations } from './migrations.js';
import { LlmRepo } from './repo.js';
import { llmRoutes } from './routes.js';
import { LlmService } from './service.js';

export { LlmService } from './service.js';

/** The language-model gateway: OpenAI-compatible endpoints in front of configured model servers. */
export const llmArea = defineArea({
  name: 'llm',
  migrations: llmMigrations,
  setup(kernel) {
    const catalogue = new ModelCatalogue(kernel.config.llm, Math.floor(kernel.clock.nowMs() / 1000));
    const llm = new LlmService(
      new LlmRepo(kernel.store),
      catalogue,
      kernel.limits,
      kernel.identity,
      kernel.clock,
      kernel.log.child({ area: 'llm' }),
    );
    for (const upstream of kernel.config.llm.upstreams)
      kernel.registry.addBackend({
        area: 'llm',
        name: upstream.name,
        driver: 'openai-compatible',
        simulated: false,
        detail: upstream.url,
      });
    if (catalogue.get('fjord-echo')?.simulated)
      kernel.registry.addBackend({
        area: 'llm',
        name: 'fjord-echo',
        driver: 'echo',
        simulated: true,
        detail: 'no language model: repeats the last user message',
      });
    kernel.registry.addServiceProvider(async (customerId) => {
      const used = await llm.usage(customerId, 0, Number.MAX_SAFE_INTEGER);
      if (used.length === 0) return [];
      return [
        {
          id: `llm-${customerId}`,
          service_type: 'llm',
          name: 'Language models',
          status: 'active',
          region: 'oslo',
          created_at: new Date(kernel.clock.nowMs()).toISOString(),
          metadata: {
            models: catalogue.list().map((m) => ({ id: m.id, category: m.category, simulated: m.simulated })),
            simulated_only: !catalogue.hasRealModels,
          },
          api: {
            kind: 'openai',
            openapi: `${kernel.baseUrl()}/openapi.json`,
            docs: `${kernel.baseUrl()}/docs`,
            base_url: `${kernel.baseUrl()}/v1`,
          },
        },
      ];
    });
    return { service: llm, routes: llmRoutes(llm, kernel.identity) };
  },
});
