import { defineArea } from '../wiring.js';
import type { SpeechEngine } from './drivers/engine.js';
import { OpenAiCompatibleEngine } from './drivers/openai-compatible.js';
import { PocketsphinxEngine } from './drivers/pocketsphinx.js';
import { speechMigrations } from './migrations.js';
import { speechRoutes } from './routes.js';
import { EXPIRE_JOB, SpeechService, TRANSCRIBE_ATTEMPTS, TRANSCRIBE_JOB } from './service.js';

export { SpeechService } from './service.js';

/** Speech transcription: uploads into Fjord's own object storage, a recogniser, exports. */
export const speechArea = defineArea({
  name: 'speech',
  // Uploads and exports live in an internal bucket of the object storage.
  needs: ['storage'],
  migrations: speechMigrations,
  async setup(kernel, { storage }) {
    const settings = kernel.config.speech;
    let engine: SpeechEngine;
    if (settings.engine === 'openai-compatible') {
      if (!settings.url) throw new Error('FJORD_SPEECH_ENGINE=openai-compatible needs FJORD_SPEECH_URL');
      engine = new OpenAiCompatibleEngine(settings.url, settings.apiKey, settings.model);
    } else engine = new PocketsphinxEngine();
    const files = storage.internalBucket('speech');
    const speech = new SpeechService(
      kernel.store,
      kernel.clock,
      kernel.jobs,
      files,
      kernel.secrets,
      engine,
      kernel.limits.of('speech.file_size_bytes') ?? 2 * 1024 ** 3,
      () => kernel.baseUrl(),
    );
    // Recognition is a durable job: a worker that dies mid-job leaves it to be claimed again.
    // At most FJORD_SPEECH_CONCURRENCY at once in this process; the rest wait their turn (and
    // other worker processes take their own share).
    const slots = slotsOf(kernel.config.speech.concurrency);
    kernel.jobs.register<{ job_id: string }>(TRANSCRIBE_JOB, {
      run: (p, ctx) => slots(() => speech.process(p.job_id, ctx)),
      // A worker that died on the last attempt: the transcription fails instead of staying `processing`.
      abandoned: (p) => speech.abandon(p.job_id),
      maxAttempts: TRANSCRIBE_ATTEMPTS,
      concurrent: kernel.config.speech.concurrency > 1,
    });
    kernel.jobs.register<{ job_id: string }>(EXPIRE_JOB, { run: (p) => speech.expire(p.job_id) });
    kernel.registry.addBackend({
      area: 'speech',
      name: 'recogniser',
      driver: engine.name,
      simulated: false,
      detail:
        settings.engine === 'openai-compatible'
          ? `${settings.url} model ${settings.model}`
          : 'pocketsphinx_continuous, US English model; files in ' + files.location,
    });
    return { service: speech, routes: speechRoutes(speech) };
  },
});

/** Runs at most `n` of the given tasks at a time, the others in the order they came. */
function slotsOf(n: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}
