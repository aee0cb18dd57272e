import type { Clock } from '../../kernel/clock.js';
import { isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import { smsErrors } from './errors.js';
import type { ApprovalStatus, SenderProfilesTable } from './migrations.js';
import { toE164 } from './phone.js';
import { CUSTOM_SENDER_MONTHLY_PRICE } from './pricing.js';
import type { SenderProfileRepo } from './sender-profile-repo.js';

export interface NewProfile {
  name: string;
  sender_id: string;
  allow_reply?: boolean;
  is_default?: boolean;
  brand_confirmation?: boolean;
}

/**
 * Decides what kind of sender id a string is: an E.164 number, or an alphanumeric id of at most
 * 11 characters (letters A-Z, digits, space, `.`, `-`, `&`, `_`; at least one letter, as
 * networks require) — never with Æ, Ø or Å, which the GSM sender field cannot carry.
 */
export function classifySenderId(raw: string): { kind: 'number' | 'alphanumeric'; value: string } {
  const value = raw.trim();
  if (value.startsWith('+')) {
    const e164 = toE164(value);
    if (!e164) throw smsErrors.badSenderId(`${JSON.stringify(raw)} is not a valid E.164 phone number.`);
    return { kind: 'number', value: e164 };
  }
  if (/[ÆØÅæøå]/.test(value)) throw smsErrors.badSenderId('A sender id may not contain Æ, Ø or Å.');
  if (value.length === 0 || value.length > 11) {
    throw smsErrors.badSenderId('An alphanumeric sender id has 1 to 11 characters.');
  }
  if (!/^[A-Za-z0-9 .&_-]+$/.test(value)) {
    throw smsErrors.badSenderId(
      'An alphanumeric sender id uses A-Z, a-z, 0-9, space, `.`, `-`, `&` and `_`.',
    );
  }
  if (!/[A-Za-z]/.test(value)) {
    throw smsErrors.badSenderId(
      'An alphanumeric sender id needs at least one letter; use +E.164 for numbers.',
    );
  }
  return { kind: 'alphanumeric', value };
}

/** Serialises the writes to one customer's profiles (creating, deleting, choosing the default). */
const profilesLock = (customerId: string) => `sms:sender-profiles:${customerId}`;

export function profileView(p: SenderProfilesTable) {
  return {
    id: p.id,
    name: p.name,
    sender_id: p.sender_id,
    is_default: p.is_default === 1,
    allow_reply: p.allow_reply === 1,
    is_custom_sender: p.is_custom_sender === 1,
    approval_status: p.approval_status,
    monthly_price: p.monthly_price,
    created_at: isoOf(p.created_at)!,
  };
}

/**
 * Sender profiles: a number is approved at once; a custom alphanumeric sender needs the customer's
 * brand confirmation and waits in `pending` until an operator approves or rejects it (an
 * operator may later reject an approved one, or approve a rejected one after a new review).
 * One profile is the default; the first becomes it, and so does the oldest one left when the
 * default is deleted. The only profile cannot be deleted while it is the default.
 */
export class SenderProfiles {
  private readonly repo: SenderProfileRepo;
  constructor(
    private readonly data: Units<SenderProfileRepo>,
    private readonly clock: Clock,
    private readonly currency: string,
  ) {
    this.repo = data.read;
  }

  async list(customerId: string) {
    return (await this.repo.listProfiles(customerId)).map(profileView);
  }

  async create(customerId: string, input: NewProfile) {
    const sender = classifySenderId(input.sender_id);
    const custom = sender.kind === 'alphanumeric';
    if (custom && input.brand_confirmation !== true) throw smsErrors.brandConfirmationRequired();
    const row: SenderProfilesTable = {
      id: newId(),
      customer_id: customerId,
      name: input.name.trim(),
      sender_id: sender.value,
      is_default: 0,
      allow_reply: input.allow_reply ? 1 : 0,
      is_custom_sender: custom ? 1 : 0,
      brand_confirmation: input.brand_confirmation ? 1 : 0,
      approval_status: custom ? 'pending' : 'approved',
      review_note: null,
      monthly_price: custom ? (CUSTOM_SENDER_MONTHLY_PRICE[this.currency] ?? 0) : 0,
      created_at: this.clock.nowMs(),
      reviewed_at: null,
    };
    // The profile and the choice of default in one unit under the customer's profile lock, so
    // two concurrent first profiles make one default and one not (the store's unique index on
    // the default stands behind it).
    const isDefault = await this.data.run([profilesLock(customerId)], async (repo) => {
      await repo.insertProfile(row);
      if (input.is_default) {
        await repo.makeDefault(customerId, row.id);
        return true;
      }
      return repo.makeDefaultIfNone(customerId, row.id);
    });
    return profileView({ ...row, is_default: isDefault ? 1 : 0 });
  }

  async delete(customerId: string, id: string) {
    await this.data.run([profilesLock(customerId)], async (repo) => {
      const profile = await repo.profile(customerId, id);
      if (!profile) throw smsErrors.profileNotFound();
      if (profile.is_default === 1 && (await repo.countProfiles(customerId)) === 1) {
        throw smsErrors.onlyDefaultProfile();
      }
      await repo.deleteProfile(customerId, id);
      // The oldest profile left becomes the default, unless one is already. The lock keeps any
      // other change to the customer's profiles out until the unit ends.
      const next = await repo.oldestProfile(customerId);
      if (next) await repo.makeDefaultIfNone(customerId, next.id);
    });
    return { message: 'Sender profile deleted.', profile_id: id };
  }

  /** The profile to send from: the named one or the default; it must be approved. */
  async usable(customerId: string, id: string | null): Promise<SenderProfilesTable> {
    const p = id ? await this.repo.profile(customerId, id) : await this.repo.defaultProfile(customerId);
    if (!p) throw id ? smsErrors.profileNotFound() : smsErrors.noSenderProfile();
    if (p.approval_status !== 'approved') throw smsErrors.senderNotApproved(p.approval_status);
    return p;
  }

  /** The customer's default profile when it is approved, else undefined. */
  async approvedDefault(customerId: string): Promise<SenderProfilesTable | undefined> {
    const p = await this.repo.defaultProfile(customerId);
    return p?.approval_status === 'approved' ? p : undefined;
  }

  // ---- operator review

  async listForReview(status: ApprovalStatus | undefined) {
    return (await this.repo.listProfilesByApproval(status)).map((p) => ({
      ...profileView(p),
      customer_id: p.customer_id,
      brand_confirmation: p.brand_confirmation === 1,
      review_note: p.review_note,
      reviewed_at: isoOf(p.reviewed_at),
    }));
  }

  async review(id: string, decision: 'approved' | 'rejected', note: string | null) {
    const p = await this.repo.profileById(id);
    if (!p) throw smsErrors.profileNotFound();
    if (p.approval_status === decision) throw smsErrors.profileNotPending(p.approval_status);
    await this.repo.setApproval(id, decision, note, this.clock.nowMs());
    const after = (await this.repo.profileById(id))!;
    return {
      ...profileView(after),
      customer_id: after.customer_id,
      brand_confirmation: after.brand_confirmation === 1,
      review_note: after.review_note,
      reviewed_at: isoOf(after.reviewed_at),
    };
  }
}
