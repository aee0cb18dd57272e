import type { Clock } from '../../kernel/clock.js';
import { isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import { insertUnique } from '../../kernel/store/dialect.js';
import type { WebhookService } from '../../kernel/webhooks/webhooks.js';
import type { InboundSms } from './drivers/driver.js';
import { smsErrors } from './errors.js';
import type { KeywordRepo } from './keyword-repo.js';
import type { KeywordsTable } from './migrations.js';
import type { InboundRoute, KeywordRouter, SmsPipeline } from './pipeline.js';
import type { SmsRepo } from './repo.js';
import { MAX_PARTS, segment } from './segmentation.js';

const KEYWORD = /^[A-Za-z0-9]{2,20}$/;
/**
 * Words the networks keep for themselves on every number (opt-out and help, as CTIA and the
 * Nordic operators require): never available.
 */
export const RESERVED_KEYWORDS = new Set([
  'STOP',
  'STOPALL',
  'START',
  'UNSTOP',
  'HELP',
  'INFO',
  'CANCEL',
  'END',
  'QUIT',
  'UNSUBSCRIBE',
  'SUBSCRIBE',
  'YES',
  'NO',
]);

export interface KeywordInput {
  keyword?: string;
  description?: string | null;
  webhook_url?: string | null;
  auto_reply_enabled?: boolean;
  auto_reply_message?: string | null;
  is_active?: boolean;
}

export function keywordView(k: KeywordsTable) {
  return {
    id: k.id,
    keyword: k.keyword,
    description: k.description,
    is_active: k.is_active === 1,
    webhook_url: k.webhook_url,
    auto_reply_enabled: k.auto_reply_enabled === 1,
    auto_reply_message: k.auto_reply_message,
    messages_received: k.messages_received,
    last_message_at: isoOf(k.last_message_at),
    created_at: isoOf(k.created_at)!,
  };
}

function checkReply(message: string | null | undefined) {
  if (message && segment(message).parts.length > MAX_PARTS)
    throw smsErrors.tooManyParts(segment(message).parts.length);
}

function checkUrl(url: string | null | undefined) {
  if (url === null || url === undefined) return;
  try {
    const u = new URL(url);
    if ((u.protocol === 'https:' || u.protocol === 'http:') && u.hostname) return;
  } catch {}
  throw smsErrors.badWebhookUrl();
}

/**
 * Keywords on the shared number: reserved by one customer each, case-insensitive (stored in upper
 * case). An inbound message whose first word is an active keyword is stored for its owner,
 * counted, posted (signed) to the keyword's `webhook_url`, and answered with the auto-reply.
 */
export class SmsKeywords implements KeywordRouter {
  constructor(
    private readonly repo: KeywordRepo,
    private readonly messages: SmsRepo,
    private readonly pipeline: SmsPipeline,
    private readonly webhooks: WebhookService,
    private readonly clock: Clock,
  ) {}

  normalise(word: string, path: string): string {
    const w = word.trim();
    if (!KEYWORD.test(w)) throw smsErrors.badKeyword(path);
    return w.toUpperCase();
  }

  async list(customerId: string) {
    return (await this.repo.listKeywords(customerId)).map(keywordView);
  }

  async get(customerId: string, id: string) {
    const k = await this.repo.keyword(customerId, id);
    if (!k) throw smsErrors.keywordNotFound();
    return keywordView(k);
  }

  async availability(word: string) {
    const keyword = this.normalise(word, '/params/keyword');
    const taken = RESERVED_KEYWORDS.has(keyword) || (await this.repo.keywordByWord(keyword)) !== undefined;
    return { keyword, available: !taken };
  }

  async reserve(customerId: string, input: KeywordInput & { keyword: string }) {
    const keyword = this.normalise(input.keyword, '/body/keyword');
    if (RESERVED_KEYWORDS.has(keyword)) throw smsErrors.keywordTaken();
    checkUrl(input.webhook_url);
    checkReply(input.auto_reply_message);
    const reply = input.auto_reply_message?.trim() ? input.auto_reply_message : null;
    const row: KeywordsTable = {
      id: newId(),
      customer_id: customerId,
      keyword,
      description: input.description ?? null,
      is_active: 1,
      webhook_url: input.webhook_url ?? null,
      auto_reply_enabled: (input.auto_reply_enabled ?? reply !== null) ? 1 : 0,
      auto_reply_message: reply,
      messages_received: 0,
      last_message_at: null,
      created_at: this.clock.nowMs(),
    };
    await insertUnique(() => this.repo.insertKeyword(row), smsErrors.keywordTaken);
    return keywordView(row);
  }

  async update(customerId: string, id: string, input: KeywordInput) {
    const k = await this.repo.keyword(customerId, id);
    if (!k) throw smsErrors.keywordNotFound();
    checkUrl(input.webhook_url);
    checkReply(input.auto_reply_message);
    const patch: Partial<KeywordsTable> = {};
    if (input.description !== undefined) patch.description = input.description;
    if (input.webhook_url !== undefined) patch.webhook_url = input.webhook_url;
    if (input.auto_reply_enabled !== undefined) patch.auto_reply_enabled = input.auto_reply_enabled ? 1 : 0;
    if (input.auto_reply_message !== undefined) patch.auto_reply_message = input.auto_reply_message;
    if (input.is_active !== undefined) patch.is_active = input.is_active ? 1 : 0;
    if (Object.keys(patch).length > 0) await this.repo.updateKeyword(customerId, id, patch);
    return keywordView((await this.repo.keyword(customerId, id))!);
  }

  async release(customerId: string, id: string) {
    if (!(await this.repo.deleteKeyword(customerId, id))) throw smsErrors.keywordNotFound();
    return { message: 'Keyword released.', keyword_id: id };
  }

  /** KeywordRouter: an inbound message on the shared number whose first word is an active keyword. */
  async route(inbound: InboundSms, receivedAt: number): Promise<InboundRoute | null> {
    const first = inbound.text.trim().split(/\s+/)[0] ?? '';
    if (!KEYWORD.test(first)) return null;
    const k = await this.repo.keywordByWord(first.toUpperCase());
    if (!k || k.is_active !== 1) return null;
    const row = this.pipeline.inboundRow(k.customer_id, inbound, receivedAt, { keyword_id: k.id });
    await this.messages.insertMessages([row]);
    await this.repo.countKeywordMessage(k.id, receivedAt);
    if (k.webhook_url) {
      await this.webhooks.send({
        customerId: k.customer_id,
        url: k.webhook_url,
        eventType: 'sms.keyword.received',
        payload: {
          event: 'sms.keyword.received',
          keyword_id: k.id,
          keyword: k.keyword,
          sms_message_id: row.id,
          from_number: inbound.from,
          to_number: inbound.to,
          body: inbound.text,
          text: inbound.text.trim().slice(first.length).trim(),
          received_at: isoOf(receivedAt),
        },
      });
    }
    if (k.auto_reply_enabled === 1 && k.auto_reply_message) {
      const reply = this.pipeline.outboundRow(
        {
          customerId: k.customer_id,
          batchId: newId(),
          messageType: 'REPLY',
          from: this.pipeline.sharedNumber,
          to: inbound.from,
          body: k.auto_reply_message,
          senderProfileId: null,
          contactId: null,
          customerRef: `keyword:${k.keyword}`,
          callbackUrl: null,
          allowReply: false,
          scheduledAt: null,
          relatedMessageId: row.id,
        },
        this.clock.nowMs(),
      );
      await this.pipeline.accept([reply]);
    }
    return { routed: 'keyword', message_id: row.id, customer_id: k.customer_id, keyword_id: k.id };
  }
}
