import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import { isAppError } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import type { MailDriver } from './drivers/mail.js';
import type { CallReport, VoiceDriver } from './drivers/voice.js';
import { verifyErrors } from './errors.js';
import { emailContent, type Locale, smsText, voiceScript } from './messages.js';
import type { Channel, VerifySessionsTable } from './migrations.js';
import { toMinor, voiceCost, voiceMinutes } from './prices.js';
import { OPEN_STATUSES, type VerifyRepo } from './repo.js';
import type { VerifySmsPort } from './sms-port.js';

const CHANNEL_LABEL: Record<Channel, string> = { sms: 'SMS', voice: 'call', email: 'e-mail' };

/** The domain of an address such as `Fjord <no-reply@fjord.localhost>`. */
const domainOf = (address: string) => /@([^>\s]+)>?\s*$/.exec(address)?.[1] ?? 'localhost';

/** E-mail domains a customer has verified for sending (domain verification purpose `email`). */
export interface VerifiedSenderDomains {
  emailDomainsOf(customerId: string): Promise<string[]>;
}

/** Without the domain-verification area, no customer has a verified domain. */
export const NO_VERIFIED_DOMAINS: VerifiedSenderDomains = { emailDomainsOf: async () => [] };

export interface DeliveryDeps {
  repo: VerifyRepo;
  /** The repo bound to a unit, for writes that land together. */
  units: Units<VerifyRepo>;
  clock: Clock;
  log: Logger;
  sms: () => VerifySmsPort | null;
  voice: VoiceDriver;
  mail: MailDriver;
  mailFrom: string;
  callerId: string;
}

/** Hands a fresh code to its channel; the code lives only in this call's memory. */
export class Delivery {
  senderDomains: VerifiedSenderDomains = NO_VERIFIED_DOMAINS;

  constructor(private readonly d: DeliveryDeps) {
    d.voice.onOutcome((report) => this.callEnded(report));
  }

  /** The voice driver, for the banner and for tests that listen to the simulated calls. */
  get voice(): VoiceDriver {
    return this.d.voice;
  }

  /** Checks a channel can deliver for this customer before a session is made; returns the sender. */
  async prepare(customerId: string, channel: Channel): Promise<string> {
    if (channel === 'sms') {
      const sms = this.d.sms();
      if (!sms) throw verifyErrors.smsUnavailable();
      const profile = await sms.defaultSenderProfile(customerId);
      if (!profile) throw verifyErrors.senderProfileRequired();
      return profile.id;
    }
    if (channel === 'voice') return this.d.callerId;
    const domains = await this.senderDomains.emailDomainsOf(customerId);
    return domains[0] ? `no-reply@${domains[0]}` : this.d.mailFrom;
  }

  /**
   * A plain notification e-mail for another area (IoT alarms), from the same sender a code would
   * come from; resolves with the Message-ID once the server accepted it.
   */
  async notificationMail(customerId: string, mail: { to: string; subject: string; text: string }) {
    const from = await this.prepare(customerId, 'email');
    return this.d.mail.send({
      from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: `<pre>${mail.text.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!)}</pre>`,
      headers: { 'Auto-Submitted': 'auto-generated' },
    });
  }

  /** Returns the status the session has once handed over: `delivered` for accepted e-mail. */
  async deliver(s: VerifySessionsTable, code: string): Promise<'pending' | 'delivered'> {
    const locale = s.locale as Locale;
    try {
      if (s.channel === 'sms') {
        const sms = this.d.sms();
        if (!sms) throw verifyErrors.smsUnavailable();
        const sent = await sms.sendSystemMessage({
          customerId: s.customer_id,
          to: s.recipient,
          message: smsText(locale, code, (s.expires_at - s.created_at) / 1000),
          senderProfileId: s.sender!,
          kind: 'VERIFY',
        });
        const cost = typeof sent.cost === 'number' ? { amount: sent.cost, currency: s.currency } : sent.cost;
        await this.d.units.run([], (repo) =>
          repo.handedOver(
            s.id,
            sent.messageId,
            this.chargeRow(s, sent.units, toMinor(cost.amount), cost.currency),
          ),
        );
        return 'pending';
      }
      if (s.channel === 'voice') {
        const { callId } = await this.d.voice.place({
          reference: s.id,
          to: s.recipient,
          callerId: s.sender!,
          locale,
          script: voiceScript(locale, code),
        });
        await this.d.units.run([], (repo) => repo.handedOver(s.id, callId, null));
        return 'pending';
      }
      const content = emailContent(locale, code, (s.expires_at - s.created_at) / 1000);
      const { messageId } = await this.d.mail.send({
        from: s.sender!,
        to: s.recipient,
        // Our own Message-ID names the session (and spares nodemailer five random draws per mail).
        messageId: `<${s.id}@${domainOf(s.sender!)}>`,
        ...content,
        headers: { 'X-Fjord-Verify-Session': s.id, 'Auto-Submitted': 'auto-generated' },
      });
      // E-mail delivery is included in the session price: a zero delivery line keeps the record whole.
      const now = this.d.clock.nowMs();
      await this.d.units.run([], (repo) =>
        repo.delivered(
          s.id,
          { delivered_at: now, delivery_ref: messageId },
          this.chargeRow(s, 1, 0, s.currency),
        ),
      );
      return 'delivered';
    } catch (err) {
      // The code never left: the session cannot be verified, so it ends here.
      await this.d.repo.transition(s.id, OPEN_STATUSES, {
        status: 'failed',
        ended_at: this.d.clock.nowMs(),
        error_message: `The ${CHANNEL_LABEL[s.channel]} could not be handed over for delivery.`,
      });
      this.d.log.warn({ err, session: s.id, channel: s.channel }, 'verification delivery failed');
      if (isAppError(err)) throw err;
      throw verifyErrors.deliveryFailed(CHANNEL_LABEL[s.channel], err);
    }
  }

  private async callEnded(report: CallReport): Promise<void> {
    const now = this.d.clock.nowMs();
    if (report.outcome === 'answered') {
      const s = await this.d.repo.sessionById(report.reference);
      if (!s) return;
      // A call that was answered is billed even when the session ended meanwhile.
      const minutes = voiceMinutes(report.durationSeconds);
      const charge = this.chargeRow(s, minutes, voiceCost(s.currency, minutes * 60), s.currency);
      const moved = await this.d.units.run([], (repo) => repo.delivered(s.id, { delivered_at: now }, charge));
      if (!moved) this.d.log.debug({ session: s.id }, 'call answered after the session ended');
      return;
    }
    const code = report.outcome === 'busy' ? 'voice_busy' : 'voice_no_answer';
    await this.d.repo.transition(report.reference, OPEN_STATUSES, {
      status: 'failed',
      ended_at: now,
      error_code: code,
      error_message: report.outcome === 'busy' ? 'The line was busy.' : 'The call was not answered.',
    });
  }

  /** The delivery line of a session's bill. */
  private chargeRow(s: VerifySessionsTable, quantity: number, amountMinor: number, currency: string) {
    return {
      id: newId(),
      customer_id: s.customer_id,
      session_id: s.id,
      item: 'delivery' as const,
      channel: s.channel,
      quantity,
      amount_minor: amountMinor,
      currency,
      created_at: this.d.clock.nowMs(),
    };
  }
}
