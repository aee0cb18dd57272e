import type { Kysely } from 'kysely';
import type { Clock } from '../../../kernel/clock.js';
import { AppError } from '../../../kernel/errors.js';
import { newId } from '../../../kernel/ids.js';
import type { Limits } from '../../../kernel/limits/quotas.js';
import type { Store } from '../../../kernel/store/store.js';
import type { IotTables } from '../migrations.js';
import { countOwned } from '../repo.js';
import { SEVERITIES, validTimezone } from './conditions.js';
import type { IotChannelsTable, IotPoliciesTable } from './tables.js';

export const CHANNEL_TYPES = ['webhook', 'email', 'sms'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
const MAX_RECIPIENTS = 10;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const E164 = /^\+[1-9][0-9]{6,14}$/;
export const POLICY_EVENTS = ['created', 'escalated', 'acknowledged', 'resolved', 'reopened'] as const;

export interface ChannelInput {
  name: string;
  channel_type: string;
  config: Record<string, unknown>;
  enabled?: boolean;
}
export interface QuietHours {
  timezone: string;
  start: string;
  end: string;
}
export interface PolicyInput {
  name: string;
  enabled?: boolean;
  channel_ids: string[];
  severities?: string[] | null;
  rule_ids?: string[] | null;
  group_ids?: string[] | null;
  device_ids?: string[] | null;
  events?: string[];
  renotify_minutes?: number | null;
  quiet_hours?: QuietHours | null;
}

export const notifyErrors = {
  channelNotFound: () => new AppError('not_found', 'channel_not_found', 'No such notification channel.'),
  policyNotFound: () => new AppError('not_found', 'policy_not_found', 'No such notification policy.'),
  invalid: (path: string, message: string) =>
    new AppError('invalid', 'invalid_notification_setting', `${path.replace('/body/', '')}: ${message}`, {
      errors: [{ path, message }],
    }),
  quota: (what: string, max: number) =>
    new AppError('forbidden', 'quota_exceeded', `An account has at most ${max} notification ${what}.`),
  unavailable: (type: string) =>
    new AppError(
      'invalid',
      'channel_type_unavailable',
      `This Fjord does not run the area that delivers ${type} (${type === 'sms' ? 'sms' : 'verify'}).`,
      { errors: [{ path: '/body/channel_type', message: `${type} is not available here` }] },
    ),
  channelInUse: (policies: string[]) =>
    new AppError(
      'conflict',
      'channel_in_use',
      `Notification policies use this channel: ${policies.join(', ')}.`,
      {
        extra: { policy_ids: policies },
      },
    ),
};

type Db = Kysely<IotTables>;

/** Notification channels (where alarms are sent) and policies (which alarms go where, and when). */
export class NotificationSettings {
  private readonly db: Db;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: Limits,
    /** Channel types this Fjord can deliver (e-mail and SMS need their areas). */
    private readonly available: ReadonlySet<ChannelType>,
  ) {
    this.db = store.typed<IotTables>();
  }

  // --- channels ------------------------------------------------------------------------------

  async createChannel(customerId: string, input: ChannelInput) {
    const now = this.clock.nowMs();
    const row: IotChannelsTable = {
      id: newId(),
      customer_id: customerId,
      name: input.name,
      channel_type: this.check(input.channel_type, input.config),
      config: JSON.stringify(input.config),
      enabled: input.enabled === false ? 0 : 1,
      created_at: now,
      updated_at: now,
    };
    const max = this.limits.of('iot.channels');
    await this.store.unitOfWork({ locks: [`iot:channels:${customerId}`] }, async ({ tx }) => {
      const db = tx;
      if (max !== null && (await countOwned(db, 'iot_channels', customerId)) >= max)
        throw notifyErrors.quota('channels', max);
      await db.insertInto('iot_channels').values(row).execute();
    });
    return channelView(row);
  }

  async channels(customerId: string) {
    const rows = await this.db
      .selectFrom('iot_channels')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return { channels: rows.map(channelView) };
  }

  async channel(customerId: string, id: string) {
    return channelView(await this.channelRow(customerId, id));
  }

  async channelRow(customerId: string, id: string) {
    const row = await this.db
      .selectFrom('iot_channels')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notifyErrors.channelNotFound();
    return row;
  }

  async updateChannel(customerId: string, id: string, patch: Partial<ChannelInput>) {
    const row = await this.channelRow(customerId, id);
    const type = patch.channel_type ?? row.channel_type;
    const config = patch.config ?? (JSON.parse(row.config) as Record<string, unknown>);
    const next: IotChannelsTable = {
      ...row,
      name: patch.name ?? row.name,
      channel_type: this.check(type, config),
      config: JSON.stringify(config),
      enabled: patch.enabled === undefined ? row.enabled : patch.enabled ? 1 : 0,
      updated_at: this.clock.nowMs(),
    };
    const { id: _i, customer_id: _c, created_at: _a, ...rest } = next;
    await this.db.updateTable('iot_channels').set(rest).where('id', '=', id).execute();
    return channelView(next);
  }

  /** Refused while a policy sends to it (change the policy first); past deliveries stay. */
  async removeChannel(customerId: string, id: string) {
    await this.channelRow(customerId, id);
    const using = (await this.policyRows(customerId)).filter((p) =>
      (JSON.parse(p.channel_ids) as string[]).includes(id),
    );
    if (using.length) throw notifyErrors.channelInUse(using.map((p) => p.id));
    await this.db.deleteFrom('iot_channels').where('id', '=', id).execute();
  }

  private check(type: string, config: Record<string, unknown>): ChannelType {
    const checked = checkChannel(type, config);
    if (!this.available.has(checked)) throw notifyErrors.unavailable(checked);
    return checked;
  }

  // --- policies ------------------------------------------------------------------------------

  async createPolicy(customerId: string, input: PolicyInput) {
    await this.checkPolicy(customerId, input);
    const now = this.clock.nowMs();
    const row = policyRow(newId(), customerId, input, now, now);
    const max = this.limits.of('iot.policies');
    await this.store.unitOfWork({ locks: [`iot:policies:${customerId}`] }, async ({ tx }) => {
      const db = tx;
      if (max !== null && (await countOwned(db, 'iot_policies', customerId)) >= max)
        throw notifyErrors.quota('policies', max);
      await db.insertInto('iot_policies').values(row).execute();
    });
    return policyView(row);
  }

  policyRows(customerId: string) {
    return this.db
      .selectFrom('iot_policies')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async policies(customerId: string) {
    return { policies: (await this.policyRows(customerId)).map(policyView) };
  }

  async policy(customerId: string, id: string) {
    return policyView(await this.policyRow(customerId, id));
  }

  async updatePolicy(customerId: string, id: string, patch: Partial<PolicyInput>) {
    const row = await this.policyRow(customerId, id);
    const merged: PolicyInput = {
      ...policyInputOf(row),
      ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
    };
    await this.checkPolicy(customerId, merged);
    const next = policyRow(id, customerId, merged, Number(row.created_at), this.clock.nowMs());
    const { id: _i, customer_id: _c, created_at: _a, ...rest } = next;
    await this.db.updateTable('iot_policies').set(rest).where('id', '=', id).execute();
    return policyView(next);
  }

  async removePolicy(customerId: string, id: string) {
    await this.policyRow(customerId, id);
    await this.db.deleteFrom('iot_policies').where('id', '=', id).execute();
  }

  private async policyRow(customerId: string, id: string) {
    const row = await this.db
      .selectFrom('iot_policies')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notifyErrors.policyNotFound();
    return row;
  }

  private async checkPolicy(customerId: string, p: PolicyInput) {
    const channels = new Set((await this.channels(customerId)).channels.map((c) => c.id));
    const unknown = p.channel_ids.filter((c) => !channels.has(c));
    if (unknown.length)
      throw notifyErrors.invalid('/body/channel_ids', `no such channels: ${unknown.join(', ')}`);
    for (const s of p.severities ?? [])
      if (!(SEVERITIES as readonly string[]).includes(s))
        throw notifyErrors.invalid('/body/severities', `${s} is not one of ${SEVERITIES.join(', ')}`);
    for (const e of p.events ?? [])
      if (!(POLICY_EVENTS as readonly string[]).includes(e))
        throw notifyErrors.invalid('/body/events', `${e} is not one of ${POLICY_EVENTS.join(', ')}`);
    if (p.quiet_hours && !validTimezone(p.quiet_hours.timezone))
      throw notifyErrors.invalid('/body/quiet_hours/timezone', 'not an IANA time zone');
  }
}

function checkChannel(type: string, config: Record<string, unknown>): ChannelType {
  if (!(CHANNEL_TYPES as readonly string[]).includes(type))
    throw notifyErrors.invalid('/body/channel_type', `one of ${CHANNEL_TYPES.join(', ')}`);
  if (type === 'webhook') {
    const url = config['url'];
    let parsed: URL | null = null;
    try {
      parsed = typeof url === 'string' ? new URL(url) : null;
    } catch {
      parsed = null;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol))
      throw notifyErrors.invalid('/body/config/url', 'a webhook channel needs config.url, an http(s) URL');
    return 'webhook';
  }
  const to = config['to'];
  const valid = type === 'email' ? EMAIL : E164;
  if (
    !Array.isArray(to) ||
    to.length === 0 ||
    to.length > MAX_RECIPIENTS ||
    !to.every((x) => typeof x === 'string' && valid.test(x))
  )
    throw notifyErrors.invalid(
      '/body/config/to',
      `an ${type} channel needs config.to, 1-${MAX_RECIPIENTS} ${type === 'email' ? 'e-mail addresses' : 'E.164 numbers (+4791234567)'}`,
    );
  return type as ChannelType;
}

const json = <T>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

function policyRow(
  id: string,
  customerId: string,
  p: PolicyInput,
  createdAt: number,
  now: number,
): IotPoliciesTable {
  const list = (xs: string[] | null | undefined) => (xs?.length ? JSON.stringify([...new Set(xs)]) : null);
  return {
    id,
    customer_id: customerId,
    name: p.name,
    enabled: p.enabled === false ? 0 : 1,
    channel_ids: JSON.stringify([...new Set(p.channel_ids)]),
    severities: list(p.severities),
    rule_ids: list(p.rule_ids),
    group_ids: list(p.group_ids),
    device_ids: list(p.device_ids),
    events: JSON.stringify(p.events?.length ? [...new Set(p.events)] : ['created', 'escalated']),
    renotify_minutes: p.renotify_minutes ?? null,
    quiet_hours: p.quiet_hours ? JSON.stringify(p.quiet_hours) : null,
    created_at: createdAt,
    updated_at: now,
  };
}

export function policyInputOf(r: IotPoliciesTable): PolicyInput {
  return {
    name: r.name,
    enabled: r.enabled === 1,
    channel_ids: JSON.parse(r.channel_ids) as string[],
    severities: json<string[]>(r.severities),
    rule_ids: json<string[]>(r.rule_ids),
    group_ids: json<string[]>(r.group_ids),
    device_ids: json<string[]>(r.device_ids),
    events: JSON.parse(r.events) as string[],
    renotify_minutes: r.renotify_minutes === null ? null : Number(r.renotify_minutes),
    quiet_hours: json<QuietHours>(r.quiet_hours),
  };
}

export const channelView = (c: IotChannelsTable) => ({
  id: c.id,
  name: c.name,
  channel_type: c.channel_type,
  config: JSON.parse(c.config) as Record<string, unknown>,
  enabled: c.enabled === 1,
  created_at: new Date(Number(c.created_at)).toISOString(),
  updated_at: new Date(Number(c.updated_at)).toISOString(),
});

export const policyView = (p: IotPoliciesTable) => ({
  id: p.id,
  ...policyInputOf(p),
  enabled: p.enabled === 1,
  created_at: new Date(Number(p.created_at)).toISOString(),
  updated_at: new Date(Number(p.updated_at)).toISOString(),
});
