/**
 * The errors the language-model gateway answers with, each saying what to do about it. Apart
 * from the service so the service reads as the gateway's flow; it re-exports them.
 */
import { AppError } from '../../kernel/errors.js';

export const llmErrors = {
  modelNotFound: (model: string) =>
    new AppError(
      'not_found',
      'model_not_found',
      `The model ${model} does not exist; GET /v1/models lists them.`,
    ),
  wrongCategory: (model: string, category: string, wanted: string) =>
    new AppError(
      'bad_request',
      'model_not_supported',
      `${model} is a ${category} model; this endpoint takes ${wanted} models.`,
    ),
  region: (region: string) =>
    new AppError(
      'invalid',
      'region_unavailable',
      `Region ${region} is not available; the only inference region is oslo.`,
    ),
  maxTokens: (field: string, asked: number, max: number, model: string) =>
    new AppError(
      'bad_request',
      'max_tokens_exceeded',
      `${field} ${asked} is above ${model}'s output limit of ${max} tokens.`,
    ),
  noModerationModel: () =>
    new AppError(
      'not_found',
      'model_not_found',
      'No moderation model is configured here; name one as `model` (GET /v1/models lists them).',
    ),
  context: (prompt: number, output: number, context: number, model: string) =>
    new AppError(
      'bad_request',
      'context_length_exceeded',
      `${model}'s context is ${context} tokens; the messages take ${prompt} and ${output} more are reserved for the answer.`,
    ),
  inFlight: (max: number) =>
    new AppError(
      'rate_limited',
      'RATE_LIMIT_EXCEEDED',
      `This key already has ${max} requests in flight; retry when one ends.`,
      {
        extra: { retry_after: 1, limit: max, window: 'concurrent' },
      },
    ),
  budget: (limit: number, currency: string, retryAfter: number) =>
    new AppError(
      'rate_limited',
      'budget_exceeded',
      `This key's monthly budget of ${limit} ${currency} is spent.`,
      {
        extra: { retry_after: retryAfter, limit, window: 'month' },
      },
    ),
};
