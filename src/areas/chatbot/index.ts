import { defineArea } from '../wiring.js';
import { Indexer } from './indexer.js';
import { chatbotMigrations } from './migrations.js';
import { ChatbotRepo } from './repo.js';
import { Retrieval } from './retrieval.js';
import { chatbotRoutes } from './routes.js';
import { ChatbotService, INDEX_JOB } from './service.js';

export { ChatbotService } from './service.js';

/** Chatbots answering from their knowledge, through the language-model gateway when a real model is configured. */
export const chatbotArea = defineArea({
  name: 'chatbot',
  optional: ['llm', 'storage'],
  migrations: chatbotMigrations,
  setup(kernel, { llm, storage }) {
    const repo = ChatbotRepo.of(kernel.store);
    const retrieval = new Retrieval((botId) => repo.chunks(botId));
    const log = kernel.log.child({ area: 'chatbot' });
    const bots = new ChatbotService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      kernel.jobs,
      retrieval,
      llm,
    );
    const indexer = new Indexer(
      repo,
      kernel.clock,
      kernel.config.webhookAllowPrivate,
      (botId) => bots.sourceChanged(botId),
      log,
      storage
        ? (customerId, bucket, key, max) => storage.readObject(customerId, bucket, key, max)
        : undefined,
    );
    kernel.jobs.register<{ sourceId: string }>(INDEX_JOB, {
      maxAttempts: 3,
      run: ({ sourceId }) => indexer.index(sourceId),
    });
    return { service: bots, routes: chatbotRoutes(bots), onReset: async () => retrieval.clear() };
  },
});
