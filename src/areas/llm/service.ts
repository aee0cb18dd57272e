import type { Logger } from 'pino';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Principal } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import type { AppError } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import { type ModelCatalogue, type ModelEntry, SIMULATED_MODEL } from './catalogue.js';
import type { ChatOutcome, ChatRequest, Usage } from './chat-types.js';
import { InFlight } from './concurrency.js';
import { llmErrors } from './errors.js';
import { CURRENCIES, type Currency } from './migrations.js';
import type { LlmRepo } from './repo.js';
import { simulatedAnswer, simulatedStream } from './simulated.js';
import { dataOf } from './sse.js';
import { streamThrough } from './stream-through.js';
import { contentText, countPromptTokens, countTokens } from './tokens.js';
import { callUpstream } from './upstream.js';
import { answerJson, inputText, isEventStream, usageOf, withReasoning } from './upstream-answer.js';
import { refusal, upstreamErrors } from './upstream-refusal.js';

/** The simulated model's id and the gateway's errors stay part of the area's surface. */
export { llmErrors, SIMULATED_MODEL };

const CHAT_CATEGORIES = new Set(['chat', 'reasoning', 'code', 'vision']);
/** Fields of a chat request that are Fjord's, not the upstream's. */
const OURS = ['agent_id', 'region'] as const;
/** Sent upstream only for an alias that declares `tools: true`. */
const TOOL_FIELDS = ['tools', 'tool_choice'] as const;

/** The language-model gateway: model aliases, limits, budgets and usage in front of OpenAI-compatible upstreams. */
export class LlmService {
  private readonly inFlight = new InFlight();

  constructor(
    private readonly repo: LlmRepo,
    readonly catalogue: ModelCatalogue,
    private readonly limits: Limits,
    private readonly identity: IdentityService,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  listModels() {
    return { object: 'list' as const, data: this.catalogue.list().map(modelView) };
  }

  /** One alias, as OpenAI's `GET /v1/models/{id}` answers it. */
  getModel(id: string) {
    const model = this.catalogue.get(id);
    if (!model) throw llmErrors.modelNotFound(id);
    return modelView(model);
  }

  async chat(principal: Principal, req: ChatRequest, signal: AbortSignal): Promise<ChatOutcome> {
    if (req.region !== undefined && req.region !== 'oslo') throw llmErrors.region(req.region);
    const model = this.model(req.model, CHAT_CATEGORIES, 'chat');
    const maxTokens = req.max_tokens ?? null;
    // OpenAI's newer name for the same limit: checked alike, and sent upstream as it came.
    const maxCompletion = req.max_completion_tokens ?? null;
    for (const [field, asked] of [
      ['max_tokens', maxTokens],
      ['max_completion_tokens', maxCompletion],
    ] as const)
      if (asked !== null && asked > model.maxOutputTokens)
        throw llmErrors.maxTokens(field, asked, model.maxOutputTokens, model.id);
    const promptTokens = await countPromptTokens(req.messages);
    const reserved = Math.max(maxTokens ?? 0, maxCompletion ?? 0);
    if (promptTokens + reserved > model.contextTokens)
      throw llmErrors.context(promptTokens, reserved, model.contextTokens, model.id);
    const release = await this.admit(principal);
    const started = Date.now();
    const record = (usage: Usage, outcome: string, upstream: string | null) =>
      this.record(principal, model, req.agent_id ?? null, usage, outcome, upstream, Date.now() - started);
    try {
      if (model.simulated) {
        if (req.stream)
          return {
            kind: 'stream',
            events: this.released(simulatedStream(req, promptTokens, record), release),
          };
        const answer = await simulatedAnswer(req, promptTokens);
        await record(answer.usage, 'ok', null);
        release();
        return { kind: 'json', status: 200, body: answer };
      }
      const body = (upstreamModel: string) => {
        const out: Record<string, unknown> = { ...req, model: upstreamModel };
        // Without a limit from the client the alias's own bounds the answer; a client's
        // max_completion_tokens goes alone (reasoning models refuse max_tokens beside it).
        if (maxCompletion === null) out['max_tokens'] = maxTokens ?? model.maxOutputTokens;
        for (const k of OURS) delete out[k];
        if (!model.tools) for (const k of TOOL_FIELDS) delete out[k];
        return out;
      };
      const answer = await callUpstream(model, '/chat/completions', body, signal, this.log);
      if (answer.status >= 400) throw await refusal(answer);
      if (req.stream && isEventStream(answer)) {
        const events = streamThrough(
          answer,
          model.id,
          promptTokens,
          req.stream_options?.include_usage === true,
          signal,
          (usage, outcome) => record(usage, outcome, answer.upstream.name),
        );
        return { kind: 'stream', events: this.released(events, release) };
      }
      const json = await answerJson(answer, 'choices');
      const usage = await usageOf(json, promptTokens);
      await record(usage, 'ok', answer.upstream.name);
      release();
      return { kind: 'json', status: 200, body: withReasoning({ ...json, model: model.id, usage }) };
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * A chat completion for another area (the chatbots): the answer's text and usage, with each
   * piece of text handed to `onToken` as it arrives when given. Same limits, budget and usage
   * record as a customer's own request.
   */
  async complete(
    principal: Principal,
    req: { model: string; messages: ChatRequest['messages']; temperature?: number; agent_id?: string },
    signal: AbortSignal,
    onToken?: (text: string) => void | Promise<void>,
  ): Promise<{ text: string; usage: Usage }> {
    const outcome = await this.chat(
      principal,
      { ...req, stream: onToken !== undefined, stream_options: { include_usage: true } },
      signal,
    );
    if (outcome.kind === 'json') {
      const body = outcome.body as { choices?: { message?: { content?: unknown } }[]; usage: Usage };
      const text = contentText(body.choices?.[0]?.message?.content);
      return { text, usage: body.usage };
    }
    let text = '';
    let usage: Usage | null = null;
    for await (const event of outcome.events) {
      const data = dataOf(event.trimEnd());
      if (!data || data === '[DONE]') continue;
      const chunk = JSON.parse(data) as {
        usage?: Usage;
        choices?: { delta?: { content?: unknown } }[];
        error?: unknown;
      };
      // The stream broke off: the caller must not take what came as the whole answer.
      if (chunk.error) throw upstreamErrors.brokenStream();
      if (chunk.usage) usage = chunk.usage;
      const piece = contentText(chunk.choices?.[0]?.delta?.content);
      if (piece) {
        text += piece;
        await onToken?.(piece);
      }
    }
    return {
      text,
      usage: usage ?? { prompt_tokens: 0, completion_tokens: await countTokens(text), total_tokens: 0 },
    };
  }

  /** Tokens of a text, as the gateway counts them. */
  countTokens(text: string): Promise<number> {
    return countTokens(text);
  }

  /** Whether `model` is a chat model served by a real upstream (not the simulated one). */
  isRealChatModel(model: string): boolean {
    const m = this.catalogue.get(model);
    return !!m && !m.simulated && CHAT_CATEGORIES.has(m.category);
  }

  /** Embeddings and moderations: the upstream's JSON answer, with the alias as `model`. */
  async passThrough(
    principal: Principal,
    kind: 'embeddings' | 'moderation',
    req: { model?: string; input: unknown },
    signal: AbortSignal,
  ) {
    const model =
      req.model === undefined && kind === 'moderation'
        ? (this.catalogue.defaultModeration() ?? throwError(llmErrors.noModerationModel()))
        : this.model(req.model ?? '', new Set([kind]), kind);
    const release = await this.admit(principal);
    const started = Date.now();
    try {
      const answer = await callUpstream(
        model,
        kind === 'embeddings' ? '/embeddings' : '/moderations',
        (m) => ({ ...req, model: m }),
        signal,
        this.log,
      );
      if (answer.status >= 400) throw await refusal(answer);
      const json = await answerJson(answer, kind === 'embeddings' ? 'data' : 'results');
      const reported = json['usage'] as Partial<Usage> | undefined;
      const prompt = reported?.prompt_tokens ?? (await countTokens(inputText(req.input)));
      const usage = {
        prompt_tokens: prompt,
        completion_tokens: 0,
        total_tokens: reported?.total_tokens ?? prompt,
      };
      await this.record(principal, model, null, usage, 'ok', answer.upstream.name, Date.now() - started);
      return { ...json, model: model.id };
    } finally {
      release();
    }
  }

  /** Usage per model over a period, costs in every currency. */
  async usage(customerId: string, from: number, to: number) {
    return this.repo.totals(customerId, from, to);
  }

  budgets(customerId: string) {
    return this.repo.budgets(customerId);
  }

  async putBudget(customerId: string, keyId: string, monthlyLimit: number, currency: Currency) {
    const now = this.clock.nowMs();
    const existing = await this.repo.budget(customerId, keyId);
    await this.repo.putBudget({
      key_id: keyId,
      customer_id: customerId,
      monthly_limit: monthlyLimit,
      currency,
      created_at: existing?.created_at ?? now,
      updated_at: now,
    });
    return (await this.repo.budget(customerId, keyId))!;
  }

  deleteBudget(customerId: string, keyId: string) {
    return this.repo.deleteBudget(customerId, keyId);
  }

  /** Spent this calendar month (UTC) by a key. */
  async spentThisMonth(keyId: string, currency: Currency) {
    return this.repo.spentSince(keyId, currency, monthStart(this.clock.nowMs()));
  }

  private model(id: string, categories: Set<string>, wanted: string): ModelEntry {
    const model = this.catalogue.get(id);
    if (!model) throw llmErrors.modelNotFound(id);
    if (!categories.has(model.category)) throw llmErrors.wrongCategory(id, model.category, wanted);
    return model;
  }

  /** A place among the key's concurrent requests, after its budget is checked. */
  private async admit(principal: Principal): Promise<() => void> {
    const plan = (await this.identity.getCustomer(principal.customerId))?.plan ?? 'free';
    const max = this.limits.of('llm.concurrent_requests_per_key', plan);
    const release = max === null ? () => {} : this.inFlight.tryAcquire(principal.credential.id, max);
    if (!release) throw llmErrors.inFlight(max!);
    try {
      const budget = await this.repo.budgetOfKey(principal.credential.id);
      if (budget) {
        const now = this.clock.nowMs();
        const spent = await this.repo.spentSince(budget.key_id, budget.currency as Currency, monthStart(now));
        if (spent >= budget.monthly_limit)
          throw llmErrors.budget(
            budget.monthly_limit,
            budget.currency,
            Math.ceil((nextMonthStart(now) - now) / 1000),
          );
      }
      return release;
    } catch (err) {
      release();
      throw err;
    }
  }

  /** Releases the place when the stream ends, however it ends. */
  private async *released(events: AsyncIterable<string>, release: () => void): AsyncIterable<string> {
    try {
      yield* events;
    } finally {
      release();
    }
  }

  private async record(
    principal: Principal,
    model: ModelEntry,
    agentId: string | null,
    usage: Usage,
    outcome: string,
    upstream: string | null,
    latencyMs: number,
  ) {
    const cost = (c: Currency) =>
      ((model.pricePer1kInput[c] ?? 0) * usage.prompt_tokens +
        (model.pricePer1kOutput[c] ?? 0) * usage.completion_tokens) /
      1000;
    await this.repo
      .recordUsage({
        id: newId(),
        customer_id: principal.customerId,
        key_id: principal.credential.id,
        model: model.id,
        upstream,
        agent_id: agentId,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.total_tokens,
        cost_nok: cost('NOK'),
        cost_sek: cost('SEK'),
        cost_dkk: cost('DKK'),
        cost_eur: cost('EUR'),
        cost_usd: cost('USD'),
        outcome,
        latency_ms: latencyMs,
        created_at: this.clock.nowMs(),
      })
      .catch((err) => this.log.error({ err }, 'llm usage not recorded'));
  }
}

export { CURRENCIES };

function modelView(m: ModelEntry) {
  return { id: m.id, object: 'model' as const, owned_by: m.ownedBy, created: m.created };
}

function throwError(err: AppError): never {
  throw err;
}

function monthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
function nextMonthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
