import type { Transporter } from 'nodemailer';
import { lazyPackage } from '../../../kernel/lazy.js';

const nodemailer = lazyPackage<typeof import('nodemailer')>('nodemailer');

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId?: string;
  headers?: Record<string, string>;
}

export interface MailDriver {
  readonly name: string;
  readonly simulated: boolean;
  /** Resolves with the Message-ID once the server accepted the message for delivery. */
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
  close(): void;
}

/** Real SMTP through nodemailer: `smtp://` or `smtps://`, auth and options in the URL. */
export class SmtpMailDriver implements MailDriver {
  readonly name = 'smtp';
  readonly simulated = false;
  private readonly transport: Transporter;
  constructor(url: string) {
    this.transport = nodemailer().createTransport(url);
  }
  async send(mail: OutgoingMail) {
    const info = await this.transport.sendMail(mail);
    return { messageId: String(info.messageId) };
  }
  close() {
    this.transport.close();
  }
}

/**
 * No SMTP server configured: nodemailer still builds the whole RFC 5322 message (its JSON
 * transport), and the last 1000 are kept in memory for developers and tests. Nothing leaves.
 */
export class SimulatedMailDriver implements MailDriver {
  readonly name = 'simulated';
  readonly simulated = true;
  private transport: Transporter | null = null;
  readonly outbox: (OutgoingMail & { messageId: string; sentAt: number })[] = [];
  /** `now`: the kernel clock, so the inbox orders mail and calls on one time line. */
  constructor(private readonly now: () => number = Date.now) {}
  async send(mail: OutgoingMail) {
    this.transport ??= nodemailer().createTransport({ jsonTransport: true });
    const info = await this.transport.sendMail(mail);
    const messageId = String(info.messageId);
    this.outbox.push({ ...mail, messageId, sentAt: this.now() });
    if (this.outbox.length > 1000) this.outbox.shift();
    return { messageId };
  }
  close() {}
}
