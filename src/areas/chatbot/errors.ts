import { AppError } from '../../kernel/errors.js';

export const chatbotErrors = {
  botNotFound: () =>
    new AppError('not_found', 'bot_not_found', 'No such bot (by id or slug), or it is not active.'),
  sessionNotFound: () => new AppError('not_found', 'session_not_found', 'No such session for this bot.'),
  sourceNotFound: () => new AppError('not_found', 'source_not_found', 'No such knowledge source.'),
  slugTaken: (slug: string) => new AppError('conflict', 'slug_taken', `A bot with the slug ${slug} exists.`),
  quota: (what: string, limit: number) =>
    new AppError('forbidden', 'quota_exceeded', `The limit of ${limit} ${what} is reached.`, {
      extra: { limit },
    }),
  unknownModel: (model: string) =>
    new AppError('invalid', 'unknown_model', `${model} is not a chat model of this Fjord (GET /v1/models).`),
};
