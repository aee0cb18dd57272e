import type { Clock } from '../../kernel/clock.js';
import { isoOf } from '../../kernel/clock.js';
import { AppError } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import type { WebhookService } from '../../kernel/webhooks/webhooks.js';
import { smsErrors } from './errors.js';
import type { MessageStatus, MessagesTable } from './migrations.js';
import { maskNumber, toE164 } from './phone.js';
import type { SmsPipeline } from './pipeline.js';
import { costOf } from './pricing.js';
import type { MessageFilter, SmsRepo } from './repo.js';
import { isValidTimeZone, parseScheduledAt } from './schedule-time.js';
import { MAX_PARTS, segment } from './segmentation.js';
import type { SenderProfiles } from './sender-profiles.js';

export { smsErrors } from './errors.js';

/** What the SMS area needs from the contacts area (its ContactsService has exactly these). */
export interface ContactsPort {
  resolveRecipients(
    customerId: string,
    contactIds: string[],
    groupIds: string[],
  ): Promise<{ phone: string; contactId: string }[]>;
  onErase(
    listener: (e: { customerId: string; contactId: string; phone: string | null }) => Promise<void>,
  ): void;
}

const HORIZON_MS = 30 * 86400_000;
/** Most recipients one send may reach after contacts and groups are resolved (ours). */
export const MAX_RECIPIENTS = 10_000;

export interface SendInput {
  to?: string[];
  to_contacts?: string[];
  to_groups?: string[];
  message: string;
  sender_profile_id?: string | null;
  allow_reply?: boolean;
  customer_ref?: string | null;
  callback_url?: string | null;
  scheduled_at?: string | null;
  timezone?: string | null;
}

export interface MessageListQuery {
  page: number;
  pageSize: number;
  filter: MessageFilter;
}

/** The SMS area: sending, the message history and the interface other areas use. */
export class SmsService {
  constructor(
    private readonly repo: SmsRepo,
    private readonly pipeline: SmsPipeline,
    readonly profiles: SenderProfiles,
    private readonly clock: Clock,
    private readonly currency: string,
    private readonly contacts: ContactsPort | null,
    private readonly webhooks: Pick<WebhookService, 'scrub'>,
  ) {
    contacts?.onErase((e) => this.forgetNumber(e.customerId, e.phone, e.contactId));
  }

  // ---- for other areas (the verify area sends its codes through here)

  /**
   * Sends a system message (a verification code, an IoT alarm) through the normal pipeline as
   * message type `kind`: from the given or the default sender profile, which must be approved.
   */
  async sendSystemMessage(input: {
    customerId: string;
    to: string;
    message: string;
    senderProfileId?: string | null;
    kind: 'VERIFY' | 'ALERT';
  }): Promise<{ messageId: string; units: number; cost: { amount: number; currency: string } }> {
    const to = toE164(input.to);
    if (!to) throw smsErrors.invalidNumber('/body/recipient', input.to);
    const profile = await this.profiles.usable(input.customerId, input.senderProfileId ?? null);
    const row = this.pipeline.outboundRow(
      {
        customerId: input.customerId,
        batchId: newId(),
        messageType: input.kind,
        from: profile.sender_id,
        to,
        body: input.message,
        senderProfileId: profile.id,
        contactId: null,
        customerRef: null,
        callbackUrl: null,
        allowReply: false,
        scheduledAt: null,
        relatedMessageId: null,
      },
      this.clock.nowMs(),
    );
    if (row.units_count > MAX_PARTS) throw smsErrors.tooManyParts(row.units_count);
    await this.pipeline.accept([row]);
    return {
      messageId: row.id,
      units: row.units_count,
      cost: { amount: costOf(row.units_count, this.currency), currency: this.currency },
    };
  }

  /** The customer's default sender profile when it may be used (approved), else null. */
  async defaultSenderProfile(customerId: string): Promise<{ id: string; sender_id: string } | null> {
    const p = await this.profiles.approvedDefault(customerId);
    return p ? { id: p.id, sender_id: p.sender_id } : null;
  }

  /** A message of the customer, or null. */
  async findMessage(customerId: string, id: string) {
    const row = await this.repo.message(customerId, id);
    return row ? messageView(row) : null;
  }

  // ---- the API

  async send(customerId: string, input: SendInput) {
    const body = input.message;
    if (body.trim() === '') throw smsErrors.emptyMessage();
    const parts = segment(body).parts.length;
    if (parts > MAX_PARTS) throw smsErrors.tooManyParts(parts);
    if (input.callback_url && !isHttpsUrl(input.callback_url)) throw smsErrors.callbackNotHttps();
    const scheduledAt = this.scheduledTime(input);
    const recipients = await this.recipients(customerId, input);
    const profile = await this.profiles.usable(customerId, input.sender_profile_id ?? null);
    const now = this.clock.nowMs();
    const batchId = newId();
    const rows = recipients.map((r) =>
      this.pipeline.outboundRow(
        {
          customerId,
          batchId,
          messageType: 'PLAIN',
          from: profile.sender_id,
          to: r.phone,
          body,
          senderProfileId: profile.id,
          contactId: r.contactId,
          customerRef: input.customer_ref ?? null,
          callbackUrl: input.callback_url ?? null,
          allowReply: input.allow_reply ?? profile.allow_reply === 1,
          scheduledAt,
          relatedMessageId: null,
        },
        now,
      ),
    );
    await this.pipeline.accept(rows);
    const first = rows[0]!;
    return {
      sms_message_id: first.id,
      to: rows.map((r) => r.to_number),
      status: first.status,
      scheduled_at: isoOf(scheduledAt),
      units_estimate: parts * rows.length,
      customer_ref: input.customer_ref ?? null,
      messages: rows.map((r) => ({ sms_message_id: r.id, to: r.to_number })),
    };
  }

  async listMessages(customerId: string, q: MessageListQuery) {
    const offset = (q.page - 1) * q.pageSize;
    const [rows, total] = await Promise.all([
      this.repo.listMessages(customerId, q.filter, q.pageSize, offset),
      this.repo.countMessages(customerId, q.filter),
    ]);
    return {
      messages: rows.map(messageView),
      total,
      page: q.page,
      page_size: q.pageSize,
      has_more: offset + rows.length < total,
    };
  }

  async getMessage(customerId: string, id: string) {
    const row = await this.repo.message(customerId, id);
    if (!row) throw smsErrors.messageNotFound();
    return messageView(row);
  }

  async cancel(customerId: string, id: string) {
    const row = await this.repo.message(customerId, id);
    if (!row) throw smsErrors.messageNotFound();
    if (!(await this.pipeline.cancel(row))) {
      const now = await this.repo.message(customerId, id);
      throw smsErrors.cannotCancel(now?.status ?? row.status);
    }
    return { message: 'Message cancelled.', message_id: id };
  }

  // ---- helpers

  private scheduledTime(input: SendInput): number | null {
    const tz = input.timezone ?? null;
    if (tz !== null && !isValidTimeZone(tz)) throw smsErrors.badTimeZone(tz);
    if (input.scheduled_at === undefined || input.scheduled_at === null) return null;
    const at = parseScheduledAt(input.scheduled_at, tz);
    if (at === null) throw smsErrors.badScheduledAt();
    const now = this.clock.nowMs();
    if (at <= now) throw smsErrors.scheduledInPast();
    if (at > now + HORIZON_MS) throw smsErrors.scheduledTooFar();
    return at;
  }

  /** `to` numbers, then contacts, then group members: one message per distinct number. */
  private async recipients(customerId: string, input: SendInput) {
    const to = input.to ?? [];
    const contactIds = input.to_contacts ?? [];
    const groupIds = input.to_groups ?? [];
    if (to.length + contactIds.length + groupIds.length === 0) throw smsErrors.noRecipients();
    const out: { phone: string; contactId: string | null }[] = [];
    const seen = new Set<string>();
    to.forEach((value, i) => {
      const phone = toE164(value);
      if (!phone) throw smsErrors.invalidNumber(`/body/to/${i}`, value);
      if (!seen.has(phone)) out.push({ phone, contactId: null });
      seen.add(phone);
    });
    if (contactIds.length + groupIds.length > 0) {
      if (!this.contacts)
        throw new AppError('unavailable', 'contacts_unavailable', 'Contacts are not available.');
      const resolved = await this.contacts.resolveRecipients(customerId, contactIds, groupIds);
      for (const r of resolved) {
        const phone = toE164(r.phone);
        if (!phone || seen.has(phone)) continue;
        seen.add(phone);
        out.push({ phone, contactId: r.contactId });
      }
      if (out.length === 0) throw smsErrors.contactsWithoutNumber();
    }
    if (out.length > MAX_RECIPIENTS) {
      throw new AppError('invalid', 'too_many_recipients', `At most ${MAX_RECIPIENTS} recipients per send.`);
    }
    return out;
  }

  /**
   * GDPR erasure of a contact. First every message to them still waiting is cancelled (never sent
   * to a masked number), then the number becomes `+47********` in every message kept and in the
   * customer's webhook delivery log (the status callbacks carried it).
   */
  private async forgetNumber(customerId: string, phone: string | null, contactId: string) {
    await this.pipeline.stopWaitingFor(customerId, phone, contactId);
    const masked = phone ? maskNumber(phone) : '';
    await this.repo.maskNumber(customerId, phone, masked, contactId);
    if (phone) await this.webhooks.scrub(customerId, phone, masked);
  }
}

function isHttpsUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'https:' && u.hostname !== '';
  } catch {
    return false;
  }
}

export function messageView(m: MessagesTable) {
  return {
    id: m.id,
    direction: m.direction,
    message_type: m.message_type,
    from_number: m.from_number,
    to_number: m.to_number,
    body: m.body,
    status: m.status as MessageStatus,
    units_count: m.units_count,
    customer_ref: m.customer_ref,
    created_at: isoOf(m.created_at)!,
    scheduled_at: isoOf(m.scheduled_at),
    sent_at: isoOf(m.sent_at),
    delivered_at: isoOf(m.delivered_at),
    related_message_id: m.related_message_id,
    error_message: m.error_message,
    encoding: m.encoding === 'GSM7' ? 'GSM-7' : 'UCS-2',
    sender_profile_id: m.sender_profile_id,
    contact_id: m.contact_id,
    callback_url: m.callback_url,
    allow_reply: m.allow_reply === 1,
  };
}
