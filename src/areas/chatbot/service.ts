import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Principal } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { JobQueue } from '../../kernel/jobs/queue.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import { insertUnique } from '../../kernel/store/dialect.js';
import type { Store } from '../../kernel/store/store.js';
import type { LlmService } from '../llm/service.js';
import { chatbotErrors } from './errors.js';
import type { ChatbotBotsTable, ChatbotSourcesTable } from './migrations.js';
import { ChatbotRepo } from './repo.js';
import type { Passage, Retrieval } from './retrieval.js';

export const INDEX_JOB = 'chatbot.index';
/** Default model of a new bot: the first real chat model, else the simulated one. */
const SIMULATED = 'fjord-echo';

export interface BotInput {
  name: string;
  slug?: string;
  status?: string;
  language?: string;
  system_prompt?: string;
  model?: string;
  temperature?: number;
  citation_style?: string;
}

export interface ChatReply {
  session_id: string;
  message_id: string;
  response: string;
  citations: { title: string; url: string | null; snippet: string }[];
  tokens_input: number;
  tokens_output: number;
  response_time_ms: number;
}

/** What a stream's listener hears: the citations first, then text as it is produced. */
export interface ChatListener {
  meta(sessionId: string, citations: { title: string; url: string | null }[]): void | Promise<void>;
  token(text: string): void | Promise<void>;
}

const slugOf = (name: string) =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48) || 'bot';

/** Bots that answer from their knowledge with citations (retrieval, then the gateway or extracts). */
export class ChatbotService {
  private readonly repo: ChatbotRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly jobs: JobQueue,
    private readonly retrieval: Retrieval,
    private readonly llm: LlmService | undefined,
  ) {
    this.repo = ChatbotRepo.of(store);
  }

  // --- bots -----------------------------------------------------------------------------------

  async createBot(customerId: string, input: BotInput) {
    const plan = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
    const max = this.limits.of('chatbot.bots', plan);
    const model = input.model ?? this.defaultModel();
    this.checkModel(model);
    const now = this.clock.nowMs();
    const row: ChatbotBotsTable = {
      id: newId(),
      customer_id: customerId,
      slug: input.slug ?? slugOf(input.name),
      name: input.name,
      status: input.status ?? 'active',
      language: input.language ?? 'en',
      system_prompt: input.system_prompt ?? '',
      model,
      temperature: input.temperature ?? 0.2,
      citation_style: input.citation_style ?? 'inline',
      created_at: now,
      updated_at: now,
    };
    await this.store.unitOfWork({ locks: [`chatbot:bots:${customerId}`] }, async ({ tx }) => {
      const repo = ChatbotRepo.over(tx);
      if (max !== null && (await repo.countBots(customerId)) >= max) throw chatbotErrors.quota('bots', max);
      await insertUnique(
        () => repo.insertBot(row),
        () => chatbotErrors.slugTaken(row.slug),
      );
    });
    return this.botView(row);
  }

  async listBots(customerId: string, onlyActive = false) {
    return Promise.all(
      (await this.repo.bots(customerId, onlyActive ? 'active' : undefined)).map((b) => this.botView(b)),
    );
  }

  async getBot(customerId: string, idOrSlug: string) {
    return this.botView(await this.bot(customerId, idOrSlug));
  }

  async updateBot(customerId: string, idOrSlug: string, patch: Partial<BotInput>) {
    const bot = await this.bot(customerId, idOrSlug);
    if (patch.model) this.checkModel(patch.model);
    const next = { ...patch, updated_at: this.clock.nowMs() };
    await insertUnique(
      () => this.repo.updateBot(bot.id, next),
      () => chatbotErrors.slugTaken(patch.slug ?? ''),
    );
    return this.botView({ ...bot, ...next });
  }

  async deleteBot(customerId: string, idOrSlug: string) {
    const bot = await this.bot(customerId, idOrSlug);
    await this.repo.deleteBot(bot.id);
    this.retrieval.forget(bot.id);
  }

  // --- knowledge sources ----------------------------------------------------------------------

  async addSource(
    customerId: string,
    idOrSlug: string,
    input: {
      kind: 'text' | 'url' | 'object';
      title?: string;
      text?: string;
      url?: string;
      bucket?: string;
      key?: string;
    },
  ) {
    const bot = await this.bot(customerId, idOrSlug);
    const max = this.limits.of(
      'chatbot.sources_per_bot',
      (await this.identity.getCustomer(customerId))?.plan,
    );
    const row: ChatbotSourcesTable = {
      id: newId(),
      bot_id: bot.id,
      customer_id: customerId,
      kind: input.kind,
      title:
        input.title ??
        (input.kind === 'url' ? input.url! : input.kind === 'object' ? input.key! : 'Untitled'),
      url: input.kind === 'object' ? `s3://${input.bucket}/${input.key}` : (input.url ?? null),
      content: input.kind === 'text' ? (input.text ?? '') : null,
      status: 'pending',
      error: null,
      chunk_count: 0,
      created_at: this.clock.nowMs(),
      indexed_at: null,
    };
    await this.store.unitOfWork({ locks: [`chatbot:sources:${bot.id}`] }, async (unit) => {
      const repo = ChatbotRepo.over(unit.tx);
      if (max !== null && (await repo.countSources(bot.id)) >= max)
        throw chatbotErrors.quota('sources per bot', max);
      await repo.insertSource(row);
      await this.jobs.enqueue(INDEX_JOB, { sourceId: row.id }, { db: unit.tx });
      unit.afterCommit(() => this.jobs.wake());
    });
    return sourceView(row);
  }

  async listSources(customerId: string, idOrSlug: string) {
    const bot = await this.bot(customerId, idOrSlug);
    return (await this.repo.sources(bot.id)).map(sourceView);
  }

  async getSource(customerId: string, idOrSlug: string, sourceId: string) {
    const bot = await this.bot(customerId, idOrSlug);
    const source = await this.repo.source(bot.id, sourceId);
    if (!source) throw chatbotErrors.sourceNotFound();
    return sourceView(source);
  }

  async reindexSource(customerId: string, idOrSlug: string, sourceId: string) {
    const bot = await this.bot(customerId, idOrSlug);
    const source = await this.repo.source(bot.id, sourceId);
    if (!source) throw chatbotErrors.sourceNotFound();
    await this.repo.updateSource(source.id, { status: 'pending' });
    await this.jobs.enqueue(INDEX_JOB, { sourceId: source.id });
    return sourceView({ ...source, status: 'pending' });
  }

  async deleteSource(customerId: string, idOrSlug: string, sourceId: string) {
    const bot = await this.bot(customerId, idOrSlug);
    const source = await this.repo.source(bot.id, sourceId);
    if (!source) throw chatbotErrors.sourceNotFound();
    await this.repo.deleteSource(source.id);
    this.retrieval.forget(bot.id);
  }

  // --- chat -----------------------------------------------------------------------------------

  /** One turn of a conversation; with a listener, the answer streams to it as it is produced. */
  async chat(
    principal: Principal,
    input: { bot_id: string; message: string; session_id?: string },
    signal: AbortSignal,
    listener?: ChatListener,
  ): Promise<ChatReply> {
    const started = Date.now();
    const bot = await this.bot(principal.customerId, input.bot_id, true);
    const now = this.clock.nowMs();
    let sessionId = input.session_id;
    if (sessionId) {
      if (!(await this.repo.session(bot.id, sessionId))) throw chatbotErrors.sessionNotFound();
    } else {
      sessionId = newId();
      await this.repo.insertSession({
        id: sessionId,
        bot_id: bot.id,
        customer_id: principal.customerId,
        created_at: now,
        last_message_at: now,
      });
    }
    const passages = await this.retrieval.search(bot.id, input.message);
    const citations = passages.map((p) => ({ title: p.title, url: p.url, snippet: snippetOf(p.text) }));
    await listener?.meta(
      sessionId,
      citations.map(({ title, url }) => ({ title, url })),
    );
    const maxHistory = this.limits.of('chatbot.session_history_messages') ?? 20;
    const history = await this.repo.history(sessionId, maxHistory);

    let response: string;
    let tokensInput: number;
    let tokensOutput: number;
    if (this.llm?.isRealChatModel(bot.model)) {
      const messages = [
        { role: 'system', content: systemPrompt(bot, passages) },
        ...history.map((m) => ({ role: m.role, content: m.content })),
        { role: 'user', content: input.message },
      ];
      const answer = await this.llm.complete(
        principal,
        { model: bot.model, messages, temperature: bot.temperature, agent_id: `chatbot:${bot.id}` },
        signal,
        listener ? (t) => listener.token(t) : undefined,
      );
      response = answer.text;
      tokensInput = answer.usage.prompt_tokens;
      tokensOutput = answer.usage.completion_tokens;
    } else {
      response = extractiveAnswer(passages, bot.citation_style);
      if (listener) for (const piece of response.match(/\S+\s*|\s+/g) ?? []) await listener.token(piece);
      tokensInput = await this.tokens(input.message + passages.map((p) => p.text).join('\n'));
      tokensOutput = await this.tokens(response);
    }
    const messageId = newId();
    const at = this.clock.nowMs();
    await this.repo.insertMessages([
      {
        id: newId(),
        session_id: sessionId,
        role: 'user',
        content: input.message,
        citations: '[]',
        tokens_input: 0,
        tokens_output: 0,
        created_at: at,
      },
      {
        id: messageId,
        session_id: sessionId,
        role: 'assistant',
        content: response,
        citations: JSON.stringify(citations),
        tokens_input: tokensInput,
        tokens_output: tokensOutput,
        created_at: at + 1,
      },
    ]);
    await this.repo.touchSession(sessionId, at);
    return {
      session_id: sessionId,
      message_id: messageId,
      response,
      citations,
      tokens_input: tokensInput,
      tokens_output: tokensOutput,
      response_time_ms: Date.now() - started,
    };
  }

  /** Called by the indexing job. */
  sourceChanged(botId: string): void {
    this.retrieval.forget(botId);
  }

  private async tokens(text: string): Promise<number> {
    return this.llm ? this.llm.countTokens(text) : Math.ceil(text.length / 4);
  }

  private async bot(customerId: string, idOrSlug: string, activeOnly = false): Promise<ChatbotBotsTable> {
    const bot = await this.repo.bot(customerId, idOrSlug);
    if (!bot || (activeOnly && bot.status !== 'active')) throw chatbotErrors.botNotFound();
    return bot;
  }

  private defaultModel(): string {
    const real = this.llm?.catalogue.list().find((m) => this.llm!.isRealChatModel(m.id));
    return real?.id ?? SIMULATED;
  }

  private checkModel(model: string): void {
    if (model === SIMULATED) return;
    if (!this.llm?.isRealChatModel(model)) throw chatbotErrors.unknownModel(model);
  }

  private async botView(b: ChatbotBotsTable) {
    const sources = await this.repo.sources(b.id);
    return {
      id: b.id,
      slug: b.slug,
      name: b.name,
      status: b.status,
      language: b.language,
      system_prompt: b.system_prompt,
      model: b.model,
      simulated: !this.llm?.isRealChatModel(b.model),
      temperature: b.temperature,
      citation_style: b.citation_style,
      sources: sources.length,
      sources_ready: sources.filter((s) => s.status === 'ready').length,
      created_at: isoOf(b.created_at)!,
      updated_at: isoOf(b.updated_at)!,
    };
  }
}

export function sourceView(s: ChatbotSourcesTable) {
  return {
    id: s.id,
    bot_id: s.bot_id,
    kind: s.kind,
    title: s.title,
    url: s.url,
    status: s.status,
    error: s.error,
    chunks: s.chunk_count,
    created_at: isoOf(s.created_at)!,
    indexed_at: isoOf(s.indexed_at),
  };
}

const snippetOf = (text: string) =>
  text.length <= 240 ? text : `${text.slice(0, 237).replace(/\s+\S*$/, '')}…`;

function systemPrompt(bot: ChatbotBotsTable, passages: Passage[]): string {
  const sources = passages.map((p, i) => `[${i + 1}] ${p.title}\n${p.text}`).join('\n\n');
  const cite =
    bot.citation_style === 'none'
      ? ''
      : ' Cite the passages you use as [1], [2], … right after the sentence that uses them.';
  return [
    bot.system_prompt,
    `Answer in the language "${bot.language}" from the knowledge passages below only. If they do not contain the answer, say that you do not know.${cite}`,
    sources ? `Knowledge passages:\n\n${sources}` : 'There are no knowledge passages for this question.',
  ]
    .filter(Boolean)
    .join('\n\n');
}

/**
 * With no real model behind the bot: the best passages, quoted, and a sentence saying so. An
 * answer is never invented.
 */
function extractiveAnswer(passages: Passage[], style: string): string {
  const head =
    'Simulated answer (no language model is configured for this bot): the most relevant passages of its knowledge.';
  if (passages.length === 0) return `${head}\n\nNothing in the knowledge matches the question.`;
  const quoted = passages
    .slice(0, 3)
    .map((p, i) => (style === 'none' ? `> ${snippetOf(p.text)}` : `> ${snippetOf(p.text)} [${i + 1}]`))
    .join('\n\n');
  return `${head}\n\n${quoted}`;
}
