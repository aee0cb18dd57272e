import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { JobQueue } from '../../kernel/jobs/queue.js';
import { GroupCommit } from '../../kernel/store/group-commit.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import type { WebhookService } from '../../kernel/webhooks/webhooks.js';
import {
  type DriverSink,
  type InboundSms,
  type Receipt,
  type SmsDriver,
  SubmitError,
} from './drivers/driver.js';
import type { MessageStatus, MessagesTable, PartsTable } from './migrations.js';
import type { SmsRepo } from './repo.js';
import { type SmsEncoding, segment } from './segmentation.js';
import type { SenderProfileRepo } from './sender-profile-repo.js';
import { statusPayload } from './status-payload.js';

export const SUBMIT_JOB = 'sms.submit';
export const RECEIPT_JOB = 'sms.receipt';
export const INBOUND_JOB = 'sms.inbound';
const SUBMIT_ATTEMPTS = 8;
/** Most message rows one group commit of accepted sends writes (a send is never split). */
const GROUP_COMMIT_ROWS = 2000;
/** Replies are matched to messages sent at most this long ago. */
const REPLY_WINDOW_MS = 30 * 86400_000;

export type InboundRoute =
  | { routed: 'keyword'; message_id: string; customer_id: string; keyword_id: string }
  | { routed: 'reply'; message_id: string; customer_id: string; related_message_id: string }
  | { routed: 'number'; message_id: string; customer_id: string }
  | { routed: 'none'; message_id: null; customer_id: null };

/** What the keywords part does with an inbound message on the shared number. */
export interface KeywordRouter {
  route(inbound: InboundSms, receivedAt: number): Promise<InboundRoute | null>;
}

export interface NewOutbound {
  customerId: string;
  batchId: string;
  messageType: MessagesTable['message_type'];
  from: string;
  to: string;
  body: string;
  senderProfileId: string | null;
  contactId: string | null;
  customerRef: string | null;
  callbackUrl: string | null;
  allowReply: boolean;
  scheduledAt: number | null;
  relatedMessageId: string | null;
}

/**
 * The life of a message after it is accepted: QUEUED (or SCHEDULED until its time, a job on the
 * clock) → SENDING → SENT when the network took every part → DELIVERED when every part's receipt
 * says so, FAILED when one does not. Receipts and inbound messages are first written as jobs and
 * only then acknowledged to the network, so nothing the network was told we have is lost.
 * Every status change of a message with a `callback_url` sends a signed webhook.
 */
export class SmsPipeline<Keywords extends KeywordRouter = KeywordRouter> implements DriverSink {
  /** The SMSC link; it reports back to this pipeline, so it is made from it (see `parts`). */
  readonly driver: SmsDriver;
  readonly keywords: Keywords;

  private readonly repo: SmsRepo;

  constructor(
    private readonly data: Units<SmsRepo>,
    private readonly profiles: SenderProfileRepo,
    private readonly jobs: JobQueue,
    private readonly webhooks: WebhookService,
    private readonly clock: Clock,
    private readonly log: Logger,
    readonly sharedNumber: string,
    parts: {
      driver: (sink: SmsPipeline<Keywords>) => SmsDriver;
      /** Keyword replies are sent through the pipeline, and inbound messages routed to keywords. */
      keywords: (pipeline: SmsPipeline<Keywords>) => Keywords;
    },
  ) {
    this.repo = data.read;
    this.driver = parts.driver(this);
    this.keywords = parts.keywords(this);
    jobs.register<{ messageId: string }>(SUBMIT_JOB, {
      maxAttempts: SUBMIT_ATTEMPTS,
      // Submissions wait on the SMSC: run a claimed batch at once, and let the driver's window
      // bound what is outstanding.
      concurrent: true,
      backoffSeconds: (attempt) => Math.min(300, 2 ** attempt),
      run: ({ messageId }, ctx) => this.submit(messageId, ctx.attempt >= SUBMIT_ATTEMPTS),
    });
    jobs.register<Receipt>(RECEIPT_JOB, {
      maxAttempts: 20,
      // A receipt can overtake the submission it belongs to: look again soon.
      backoffSeconds: (attempt) => Math.min(60, attempt),
      run: (r) => this.applyReceipt(r),
    });
    jobs.register<InboundSms & { receivedAt: number }>(INBOUND_JOB, {
      run: async (m) => void (await this.routeInbound(m, m.receivedAt)),
    });
  }

  /** Builds the row of a new outbound message (QUEUED, or SCHEDULED when it has a time). */
  outboundRow(m: NewOutbound, now: number): MessagesTable {
    const seg = segment(m.body);
    return {
      id: newId(),
      customer_id: m.customerId,
      batch_id: m.batchId,
      direction: 'OUTBOUND',
      message_type: m.messageType,
      from_number: m.from,
      to_number: m.to,
      body: m.body,
      status: m.scheduledAt !== null ? 'SCHEDULED' : 'QUEUED',
      encoding: seg.encoding,
      units_count: seg.parts.length,
      customer_ref: m.customerRef,
      callback_url: m.callbackUrl,
      allow_reply: m.allowReply ? 1 : 0,
      sender_profile_id: m.senderProfileId,
      contact_id: m.contactId,
      keyword_id: null,
      related_message_id: m.relatedMessageId,
      error_message: null,
      created_at: now,
      scheduled_at: m.scheduledAt,
      sent_at: null,
      delivered_at: null,
      updated_at: now,
    };
  }

  /**
   * Stores new outbound messages and puts each on the clock; resolves once they are committed.
   * Sends arriving together share a transaction (rows and jobs as multi-row inserts).
   */
  accept(rows: MessagesTable[]): Promise<void> {
    return this.acceptor.submit(rows);
  }

  private readonly acceptor = new GroupCommit<MessagesTable>(
    (rows) => this.writeAccepted(rows),
    GROUP_COMMIT_ROWS,
  );

  /** One transaction: an accepted message always has its job. */
  private async writeAccepted(rows: MessagesTable[]): Promise<void> {
    await this.data.run([], async (repo, { tx }) => {
      await repo.insertMessages(rows);
      await this.jobs.enqueueMany(
        SUBMIT_JOB,
        rows.map((row) => ({ payload: { messageId: row.id }, runAt: row.scheduled_at ?? undefined })),
        { db: tx },
      );
    });
    if (rows.some((r) => r.scheduled_at === null)) this.jobs.wake(SUBMIT_JOB);
  }

  /** Cancels a message still waiting; false when it has already moved on. */
  cancel(message: MessagesTable): Promise<boolean> {
    return this.move(message, ['QUEUED', 'SCHEDULED'], 'CANCELLED', {});
  }

  /**
   * Before a recipient is erased: every message to them still waiting (QUEUED or SCHEDULED) is
   * CANCELLED — the one move the spec allows from those states short of sending — with its status
   * webhook. Answers how many were stopped. One already SENDING is in the driver's hands; if its
   * submission has to be retried after the number is masked, the driver refuses the masked
   * destination and the message FAILS.
   */
  async stopWaitingFor(customerId: string, phone: string | null, contactId: string | null): Promise<number> {
    let stopped = 0;
    for (const msg of await this.repo.waitingFor(customerId, phone, contactId)) {
      const moved = await this.move(msg, ['QUEUED', 'SCHEDULED'], 'CANCELLED', {
        error_message: 'cancelled before sending: the recipient was erased (GDPR)',
      });
      if (moved) stopped++;
    }
    return stopped;
  }

  // ---- driver callbacks: made durable first, then acknowledged

  async receipt(r: Receipt): Promise<void> {
    await this.jobs.enqueue(RECEIPT_JOB, r);
  }

  async inbound(m: InboundSms): Promise<void> {
    await this.jobs.enqueue(INBOUND_JOB, { ...m, receivedAt: this.clock.nowMs() });
  }

  // ---- the steps

  private async submit(messageId: string, lastAttempt: boolean): Promise<void> {
    let msg = await this.repo.messageById(messageId);
    if (!msg) return;
    if (msg.status === 'QUEUED' || msg.status === 'SCHEDULED') {
      // While the SMSC cannot be reached the message keeps waiting (and can still be cancelled).
      try {
        await this.driver.ready();
      } catch (err) {
        if (!lastAttempt) throw err;
        const reason = `the network could not be reached: ${err instanceof Error ? err.message : String(err)}`;
        await this.move(msg, ['QUEUED', 'SCHEDULED'], 'FAILED', { error_message: reason.slice(0, 500) });
        return;
      }
      if (!(await this.move(msg, ['QUEUED', 'SCHEDULED'], 'SENDING', {}))) return; // cancelled meanwhile
      msg = { ...msg, status: 'SENDING' };
    } else if (msg.status !== 'SENDING') {
      return; // cancelled, or already handled by an earlier attempt
    }
    if (msg.sender_profile_id) {
      // An operator may have rejected the sender since the message was accepted (or scheduled).
      const profile = await this.profiles.profileById(msg.sender_profile_id);
      if (profile && profile.approval_status !== 'approved') {
        await this.move(msg, ['SENDING'], 'FAILED', {
          error_message: `the sender profile is ${profile.approval_status}`,
        });
        return;
      }
    }
    const seg = segment(msg.body);
    // An earlier attempt that submitted but died before recording SENT must not send twice.
    const recorded = await this.repo.partsOf(msg.id);
    let parts: PartsTable[] = [];
    if (recorded.length < seg.parts.length) {
      let ids: string[];
      try {
        ids = await this.driver.submit({
          messageId: msg.id,
          from: msg.from_number,
          to: msg.to_number,
          encoding: seg.encoding as SmsEncoding,
          parts: seg.parts,
        });
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        if ((err instanceof SubmitError && err.permanent) || lastAttempt) {
          await this.move(msg, ['SENDING'], 'FAILED', { error_message: reason.slice(0, 500) });
          return;
        }
        throw err;
      }
      const at = this.clock.nowMs();
      parts = ids.map((id, i) => ({
        smsc_message_id: id,
        message_id: msg.id,
        part_number: i + 1,
        state: 'SUBMITTED' as const,
        error: null,
        submitted_at: at,
      }));
    }
    // The parts' SMSC ids and SENT in one commit: receipts can only find a part of a sent message.
    const now = this.clock.nowMs();
    const patch = { sent_at: now, updated_at: now };
    let moved = false;
    await this.data.run([], async (repo) => {
      if (parts.length > 0) await repo.insertParts(parts);
      moved = await repo.transition(msg.id, ['SENDING'], 'SENT', patch);
    });
    if (moved) await this.notify(msg, 'SENT', patch);
  }

  private async applyReceipt(r: Receipt): Promise<void> {
    const part = await this.repo.part(r.smscMessageId);
    if (!part) {
      // Not ours (e.g. sent by another system on the same bind), or overtaking its submission.
      throw new Error(`no submitted part with SMSC id ${r.smscMessageId} (yet)`);
    }
    if (part.state !== 'SUBMITTED') return;
    await this.repo.setPartState(part.smsc_message_id, r.delivered ? 'DELIVERED' : 'FAILED', r.error);
    const msg = await this.repo.messageById(part.message_id);
    if (!msg) return;
    const parts = await this.repo.partsOf(msg.id);
    const failed = parts.find((p) => p.state === 'FAILED');
    if (failed) {
      await this.move(msg, ['SENDING', 'SENT'], 'FAILED', {
        error_message: `part ${failed.part_number} not delivered: ${failed.error ?? 'no reason given'}`,
      });
    } else if (parts.every((p) => p.state === 'DELIVERED') && parts.length >= msg.units_count) {
      await this.move(msg, ['SENDING', 'SENT'], 'DELIVERED', { delivered_at: this.clock.nowMs() });
    }
  }

  /**
   * Routes a mobile-originated message: a keyword on the shared number first, then a reply to
   * the last message sent to that phone with `allow_reply`, then a customer's own number.
   */
  async routeInbound(m: InboundSms, receivedAt: number): Promise<InboundRoute> {
    const to = m.to || this.sharedNumber;
    const inbound = { ...m, to };
    if (to === this.sharedNumber) {
      const routed = await this.keywords.route(inbound, receivedAt);
      if (routed) return routed;
    }
    // A reply goes to the message sent from the number it was sent to; on the shared number (and
    // from alphanumeric senders, which phones cannot answer) to the last one that allowed replies.
    const since = receivedAt - REPLY_WINDOW_MS;
    const original =
      (await this.repo.lastReplyableTo(m.from, since, to)) ??
      (to === this.sharedNumber ? await this.repo.lastReplyableTo(m.from, since, null) : undefined);
    if (original) {
      const row = this.inboundRow(original.customer_id, inbound, receivedAt, {
        message_type: 'REPLY',
        related_message_id: original.id,
      });
      await this.repo.insertMessages([row]);
      if (original.callback_url) {
        await this.webhooks.send({
          customerId: original.customer_id,
          url: original.callback_url,
          eventType: 'sms.inbound',
          payload: statusPayload(row, null),
        });
      }
      return {
        routed: 'reply',
        message_id: row.id,
        customer_id: row.customer_id,
        related_message_id: original.id,
      };
    }
    const owner = await this.profiles.profileBySenderId(to);
    if (owner) {
      const row = this.inboundRow(owner.customer_id, inbound, receivedAt, {});
      await this.repo.insertMessages([row]);
      return { routed: 'number', message_id: row.id, customer_id: row.customer_id };
    }
    this.log.info({ to }, 'inbound SMS matched no keyword, reply or number; dropped');
    return { routed: 'none', message_id: null, customer_id: null };
  }

  /** The row of a received message. */
  inboundRow(
    customerId: string,
    m: InboundSms,
    receivedAt: number,
    extra: Partial<MessagesTable>,
  ): MessagesTable {
    const seg = segment(m.text);
    return {
      id: newId(),
      customer_id: customerId,
      batch_id: newId(),
      direction: 'INBOUND',
      message_type: 'PLAIN',
      from_number: m.from,
      to_number: m.to,
      body: m.text,
      status: 'RECEIVED',
      encoding: seg.encoding,
      units_count: seg.parts.length,
      customer_ref: null,
      callback_url: null,
      allow_reply: 0,
      sender_profile_id: null,
      contact_id: null,
      keyword_id: null,
      related_message_id: null,
      error_message: null,
      created_at: receivedAt,
      scheduled_at: null,
      sent_at: null,
      delivered_at: receivedAt,
      updated_at: receivedAt,
      ...extra,
    };
  }

  /** One guarded status change, and its webhook. */
  private async move(
    msg: MessagesTable,
    from: readonly MessageStatus[],
    to: MessageStatus,
    patch: Partial<MessagesTable>,
  ): Promise<boolean> {
    const now = this.clock.nowMs();
    const full = { ...patch, updated_at: now };
    const moved = await this.repo.transition(msg.id, from, to, full);
    if (moved) await this.notify(msg, to, full);
    return moved;
  }

  /** The status callback of a change just made. */
  private async notify(msg: MessagesTable, to: MessageStatus, patch: Partial<MessagesTable>): Promise<void> {
    if (!msg.callback_url) return;
    await this.webhooks.send({
      customerId: msg.customer_id,
      url: msg.callback_url,
      eventType: 'sms.status',
      payload: statusPayload({ ...msg, ...patch, status: to }, msg.status),
    });
  }
}
