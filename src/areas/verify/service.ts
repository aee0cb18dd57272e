import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import { isoOf } from '../../kernel/clock.js';
import { AppError } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import type { RateLimiter } from '../../kernel/limits/rate-limiter.js';
import { fromJson, toJson } from '../../kernel/store/dialect.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import { codeMatches, generateCode, hashCode } from './codes.js';
import type { Delivery } from './delivery.js';
import { verifyErrors } from './errors.js';
import type { IpReputation, IpRisk } from './ip-risk.js';
import { type Locale, VOICE_LOCALES } from './messages.js';
import type { Channel, VerifySessionsTable } from './migrations.js';
import { DEFAULT_CURRENCY, sessionFee } from './prices.js';
import { normaliseRecipient, phonePrefix } from './recipients.js';
import { OPEN_STATUSES, type VerifyRepo } from './repo.js';
import type { VerifySmsPort } from './sms-port.js';

export const MAX_ATTEMPTS = 5;
/** `metadata` is stored with every session; 4 KiB of JSON is plenty for references (ours). */
export const MAX_METADATA_BYTES = 4096;

export interface StartInput {
  channel?: Channel;
  recipient: string;
  code_length?: number;
  ttl_seconds?: number;
  client_reference?: string | null;
  locale?: Locale;
  metadata?: Record<string, unknown> | null;
  client_ip?: string | null;
}

type CheckError =
  | 'invalid_code'
  | 'session_expired'
  | 'max_attempts_exceeded'
  | 'voice_no_answer'
  | 'voice_busy';

export interface CheckResult {
  status: 'verified' | 'pending' | 'failed' | 'expired';
  verified_at: string | null;
  /** Null on success, and for a session whose SMS could not be delivered (no error of the table fits). */
  error: CheckError | null;
  attempts_remaining: number;
  ip_risk?: IpRisk;
}

/**
 * One-time-code sessions: a code is drawn, handed to its channel and forgotten; only its salted
 * SHA-256 stays. A session is open (`pending`, `delivered`) until it is verified, runs out of
 * attempts or delivery (`failed`), passes its TTL (`expired`) or is cancelled. Expiry is read
 * from the kernel clock whenever a session is looked at, so moving the clock expires it at once.
 */
export class VerifyService {
  private readonly repo: VerifyRepo;
  constructor(
    private readonly data: Units<VerifyRepo>,
    private readonly clock: Clock,
    private readonly limiter: RateLimiter,
    readonly delivery: Delivery,
    private readonly sms: () => VerifySmsPort | null,
    private readonly log: Logger,
    /** `ip_risk`'s source: the IP-intelligence area's data, or the builtin ranges without it. */
    private readonly ipReputation: IpReputation,
    /** The deployment's billing currency (the SMS area's FJORD_SMS_CURRENCY). */
    private readonly currency: string = DEFAULT_CURRENCY,
  ) {
    this.repo = data.read;
  }

  /** For other areas: sends a notification e-mail through Fjord's mail delivery (SMTP or the inbox). */
  sendNotificationMail(customerId: string, mail: { to: string; subject: string; text: string }) {
    return this.delivery.notificationMail(customerId, mail);
  }

  async start(customerId: string, input: StartInput) {
    const channel = input.channel ?? 'sms';
    const locale = input.locale ?? 'en';
    const codeLength = input.code_length ?? 6;
    const ttlSeconds = input.ttl_seconds ?? 300;
    if (channel === 'voice' && !(VOICE_LOCALES as readonly string[]).includes(locale)) {
      throw verifyErrors.unsupportedLocale(locale);
    }
    const metadata = input.metadata ? toJson(input.metadata) : null;
    if (metadata && Buffer.byteLength(metadata) > MAX_METADATA_BYTES)
      throw verifyErrors.metadataTooLarge(MAX_METADATA_BYTES);
    const recipient = normaliseRecipient(channel, input.recipient);
    const ipRisk = input.client_ip ? await this.assessIp(input.client_ip) : undefined;
    const sender = await this.delivery.prepare(customerId, channel);
    await this.guardAgainstPumping(customerId, channel, recipient);

    const code = generateCode(codeLength);
    const { salt, hash } = hashCode(code);
    const now = this.clock.nowMs();
    const currency = this.currency;
    const row: VerifySessionsTable = {
      id: `vs_${newId()}`,
      customer_id: customerId,
      channel,
      recipient,
      status: 'pending',
      code_hash: hash,
      code_salt: salt,
      code_length: codeLength,
      locale,
      client_reference: input.client_reference ?? null,
      metadata,
      client_ip: input.client_ip ?? null,
      ip_risk: ipRisk ? toJson(ipRisk) : null,
      attempt_count: 0,
      max_attempts: MAX_ATTEMPTS,
      error_message: null,
      error_code: null,
      sender,
      currency,
      delivery_ref: null,
      created_at: now,
      expires_at: now + ttlSeconds * 1000,
      delivered_at: null,
      verified_at: null,
      ended_at: null,
    };
    await this.data.run([], (repo) =>
      repo.insertSessionWithFee(row, {
        id: newId(),
        customer_id: customerId,
        session_id: row.id,
        item: 'session',
        channel,
        quantity: 1,
        amount_minor: sessionFee(currency),
        currency,
        created_at: now,
      }),
    );
    const status = await this.delivery.deliver(row, code);
    return {
      session_id: row.id,
      status,
      channel,
      expires_at: isoOf(row.expires_at)!,
      created_at: isoOf(row.created_at)!,
      ...(ipRisk ? { ip_risk: ipRisk } : {}),
    };
  }

  async check(customerId: string, sessionId: string, code: string, clientIp?: string | null) {
    const ipRisk = clientIp ? await this.assessIp(clientIp) : undefined;
    const answer = (r: Omit<CheckResult, 'ip_risk'>): CheckResult => (ipRisk ? { ...r, ip_risk: ipRisk } : r);
    let s = await this.current(customerId, sessionId);
    const closed = this.closedAnswer(s);
    if (closed) return answer(closed);

    // The code is compared first (in constant time); the attempt is then spent and the session
    // settled in one statement, which is what decides under concurrent checks.
    const right = codeMatches(code, { salt: s.code_salt, hash: s.code_hash });
    const locked = `The code was entered wrong ${s.max_attempts} times; the session is locked.`;
    const spent = await this.repo.spendAttempt(s.id, this.clock.nowMs(), right, locked);
    if (!spent) {
      // Another check (or the clock) closed the session between the read and the attempt.
      s = await this.current(customerId, sessionId);
      return answer(this.closedAnswer(s) ?? { ...this.failedAnswer(s), status: 'failed' });
    }
    const remaining = spent.max_attempts - spent.attempt_count;
    if (spent.status === 'verified') {
      return answer({
        status: 'verified',
        verified_at: isoOf(spent.verified_at),
        error: null,
        attempts_remaining: remaining,
      });
    }
    if (spent.status === 'failed') {
      return answer({
        status: 'failed',
        verified_at: null,
        error: 'max_attempts_exceeded',
        attempts_remaining: 0,
      });
    }
    return answer({
      status: 'pending',
      verified_at: null,
      error: 'invalid_code',
      attempts_remaining: remaining,
    });
  }

  async status(customerId: string, sessionId: string) {
    return this.view(await this.current(customerId, sessionId));
  }

  /** Cancels an open session; the answer is the session as it is now (`cancelled`). */
  async cancel(customerId: string, sessionId: string) {
    const s = await this.current(customerId, sessionId);
    if (!(OPEN_STATUSES as readonly string[]).includes(s.status)) throw verifyErrors.notCancellable(s.status);
    const now = this.clock.nowMs();
    const moved = await this.repo.transition(s.id, OPEN_STATUSES, { status: 'cancelled', ended_at: now });
    const after = await this.current(customerId, sessionId);
    if (!moved) throw verifyErrors.notCancellable(after.status);
    return this.view(after);
  }

  /** Billing lines of one session (session fee, then delivery), for the billing area. */
  async charges(customerId: string, sessionId: string) {
    await this.current(customerId, sessionId);
    return this.repo.charges(customerId, sessionId);
  }

  /**
   * The session as of now: an open session past its TTL is stored as `expired` first, and an SMS
   * session learns from the SMS area whether its message has arrived.
   */
  private async current(customerId: string, sessionId: string): Promise<VerifySessionsTable> {
    const s = await this.repo.session(customerId, sessionId);
    if (!s) throw verifyErrors.sessionNotFound();
    const now = this.clock.nowMs();
    if ((OPEN_STATUSES as readonly string[]).includes(s.status) && now >= s.expires_at) {
      await this.repo.transition(s.id, OPEN_STATUSES, { status: 'expired', ended_at: s.expires_at });
      return (await this.repo.session(customerId, sessionId)) ?? s;
    }
    if (s.channel === 'sms' && s.status === 'pending' && s.delivery_ref) return this.followSms(s);
    return s;
  }

  private async followSms(s: VerifySessionsTable): Promise<VerifySessionsTable> {
    const state = await this.sms()
      ?.findMessage?.(s.customer_id, s.delivery_ref!)
      .catch((err: unknown) => {
        this.log.warn({ err, session: s.id }, 'SMS state unavailable');
        return null;
      });
    if (state?.status === 'FAILED') {
      // The code never arrived: the session ends, with no check error of the spec's table to name.
      const message = `The SMS could not be delivered${state.error_message ? `: ${state.error_message}` : ''}.`;
      const now = this.clock.nowMs();
      await this.repo.transition(s.id, ['pending'], {
        status: 'failed',
        ended_at: now,
        error_message: message,
      });
      return { ...s, status: 'failed', ended_at: now, error_message: message };
    }
    if (state?.status !== 'DELIVERED') return s;
    const at = state.delivered_at ? new Date(state.delivered_at).getTime() : this.clock.nowMs();
    const deliveredAt = Number.isFinite(at) ? at : this.clock.nowMs();
    await this.repo.transition(s.id, ['pending'], { status: 'delivered', delivered_at: deliveredAt });
    return { ...s, status: 'delivered', delivered_at: deliveredAt };
  }

  /** The check answer for a session that takes no more attempts, or null when it is open. */
  private closedAnswer(s: VerifySessionsTable): Omit<CheckResult, 'ip_risk'> | null {
    const remaining = Math.max(0, s.max_attempts - s.attempt_count);
    switch (s.status) {
      case 'pending':
      case 'delivered':
        return s.attempt_count >= s.max_attempts ? this.failedAnswer(s) : null;
      case 'expired':
        return {
          status: 'expired',
          verified_at: null,
          error: 'session_expired',
          attempts_remaining: remaining,
        };
      case 'failed':
        return this.failedAnswer(s);
      // A verified or cancelled session is gone for checking, as Twilio Verify answers 404 for
      // approved and cancelled verifications: a code can never be replayed.
      case 'verified':
        throw verifyErrors.sessionNotFound('This session is already verified; start a new one.');
      case 'cancelled':
        throw verifyErrors.sessionNotFound('This session was cancelled; start a new one.');
    }
  }

  private failedAnswer(s: VerifySessionsTable): Omit<CheckResult, 'ip_risk'> {
    const error =
      (s.error_code as CheckError | null) ??
      (s.attempt_count >= s.max_attempts ? 'max_attempts_exceeded' : null);
    return {
      status: 'failed',
      verified_at: null,
      error,
      attempts_remaining: Math.max(0, s.max_attempts - s.attempt_count),
    };
  }

  private view(s: VerifySessionsTable) {
    const ipRisk = fromJson<IpRisk | null>(s.ip_risk, null);
    return {
      session_id: s.id,
      channel: s.channel,
      status: s.status,
      recipient: s.recipient,
      created_at: isoOf(s.created_at)!,
      expires_at: isoOf(s.expires_at)!,
      delivered_at: isoOf(s.delivered_at),
      verified_at: isoOf(s.verified_at),
      attempt_count: s.attempt_count,
      max_attempts: s.max_attempts,
      client_reference: s.client_reference,
      error_message: s.error_message,
      locale: s.locale,
      code_length: s.code_length,
      metadata: fromJson<Record<string, unknown> | null>(s.metadata, null),
      ...(ipRisk ? { ip_risk: ipRisk } : {}),
    };
  }

  private async assessIp(ip: string): Promise<IpRisk> {
    if (!isIP(ip)) {
      throw new AppError('invalid', 'invalid_client_ip', 'client_ip must be an IPv4 or IPv6 address.', {
        errors: [{ path: '/body/client_ip', message: 'must be an IPv4 or IPv6 address' }],
      });
    }
    return this.ipReputation.assess(ip);
  }

  /**
   * Like Twilio Verify's fraud guard: sessions to one recipient, and by phone to one number range,
   * are rate limited per customer (buckets `verify.recipient`, `verify.prefix`; FJORD_RATE_LIMITS).
   */
  private async guardAgainstPumping(customerId: string, channel: Channel, recipient: string) {
    const perRecipient = await this.limiter.consume(['verify.recipient'], `${customerId}:${recipient}`);
    if (!perRecipient.allowed) throw verifyErrors.pumpingGuard('this recipient', perRecipient);
    if (channel === 'email') return;
    const prefix = phonePrefix(recipient);
    const perPrefix = await this.limiter.consume(['verify.prefix'], `${customerId}:${prefix}`);
    if (!perPrefix.allowed) throw verifyErrors.pumpingGuard(`numbers starting ${prefix}`, perPrefix);
  }
}
