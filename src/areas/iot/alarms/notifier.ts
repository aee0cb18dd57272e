import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../../../kernel/clock.js';
import type { PageRequest } from '../../../kernel/http/pagination.js';
import { newId } from '../../../kernel/ids.js';
import type { Store } from '../../../kernel/store/store.js';
import type { WebhookService } from '../../../kernel/webhooks/webhooks.js';
import type { IotTables } from '../migrations.js';
import { IotRepo } from '../repo.js';
import { type AlarmEvent, type Alarms, alarmView } from './alarms.js';
import { channelView, type NotificationSettings, policyInputOf } from './channels.js';
import { minutesOf } from './conditions.js';
import type { IotAlarmsTable, IotChannelsTable, IotDeliveriesTable } from './tables.js';

export const RENOTIFY_JOB = 'iot.alarms.renotify';
/** A flapping device cannot flood a channel: at most this many notifications per channel and device… */
export const THROTTLE_COUNT = 10;
/** …in this window; the rest are recorded as `suppressed` (throttled). */
export const THROTTLE_WINDOW_MS = 10 * 60_000;

type Db = Kysely<IotTables>;

/** How e-mail and SMS leave (the verify and SMS areas' services); absent when those areas are. */
export interface AlertSenders {
  mail?: (customerId: string, to: string, subject: string, text: string) => Promise<string>;
  sms?: (customerId: string, to: string, text: string) => Promise<string>;
}
type NotifyEvent = AlarmEvent | 'renotify';

export interface DeliveryFilter {
  channel_id?: string;
  alarm_id?: string;
  status?: IotDeliveriesTable['status'];
}

/**
 * Sends alarm notifications: each alarm move is matched against the customer's enabled policies
 * (severities, rules, groups, devices, events), and each matching channel gets one notification
 * per move, unless quiet hours or the throttle hold it back (recorded as `suppressed`). Webhooks
 * go through Fjord's signed, retried webhook delivery; their state is read from it.
 */
export class Notifier {
  private readonly db: Db;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly settings: NotificationSettings,
    private readonly alarms: Alarms,
    private readonly webhooks: WebhookService,
    private readonly senders: AlertSenders,
    private readonly log: Logger,
  ) {
    this.db = store.typed<IotTables>();
    alarms.onEvent((alarm, event) => {
      void this.dispatch(alarm, event).catch((err) =>
        this.log.error({ err, alarm: alarm.id }, 'iot: notify failed'),
      );
    });
  }

  async dispatch(alarm: IotAlarmsTable, event: NotifyEvent): Promise<number> {
    const policies = (await this.settings.policyRows(alarm.customer_id)).filter((p) => p.enabled === 1);
    if (policies.length === 0) return 0;
    const groups = await IotRepo.of(this.store).groupsOf(alarm.device_pk);
    const now = this.clock.nowMs();
    const sentTo = new Set<string>();
    let sent = 0;
    for (const p of policies) {
      const rule = policyInputOf(p);
      if (event === 'renotify' ? !rule.renotify_minutes : !rule.events?.includes(event)) continue;
      if (rule.severities && !rule.severities.includes(alarm.severity)) continue;
      if (rule.rule_ids && !rule.rule_ids.includes(alarm.rule_id)) continue;
      if (rule.device_ids && !rule.device_ids.includes(alarm.device_id)) continue;
      if (rule.group_ids && !rule.group_ids.some((g) => groups.includes(g))) continue;
      for (const channelId of rule.channel_ids) {
        if (sentTo.has(channelId)) continue;
        sentTo.add(channelId);
        const channel = await this.db
          .selectFrom('iot_channels')
          .selectAll()
          .where('id', '=', channelId)
          .executeTakeFirst();
        if (!channel || channel.enabled !== 1) continue;
        const held =
          rule.quiet_hours && quiet(rule.quiet_hours, now)
            ? 'quiet_hours'
            : await this.throttled(channel, alarm, now);
        await this.deliver(channel, {
          policyId: p.id,
          alarm,
          event,
          suppressed: held || null,
          payload: {
            type: `iot.alarm.${event}`,
            test: false,
            alarm: alarmView(alarm),
            policy: { id: p.id, name: p.name },
            channel: { id: channel.id, name: channel.name },
            sent_at: new Date(now).toISOString(),
          },
        });
        if (!held) sent++;
      }
    }
    if (sent) await this.alarms.noteNotified(alarm.id, { event, channels: [...sentTo] });
    return sent;
  }

  /** A clearly marked test notification through one channel; answers its delivery. */
  async test(customerId: string, channelId: string) {
    const channel = await this.settings.channelRow(customerId, channelId);
    const id = await this.deliver(channel, {
      policyId: null,
      alarm: null,
      event: 'test',
      suppressed: null,
      payload: {
        type: 'iot.alarm.test',
        test: true,
        message: 'This is a test notification from Fjord IoT. No alarm was raised.',
        channel: { id: channel.id, name: channel.name },
        sent_at: new Date(this.clock.nowMs()).toISOString(),
      },
    });
    return (await this.views([await this.row(id)]))[0]!;
  }

  async list(customerId: string, f: DeliveryFilter, page: PageRequest) {
    let q = this.db.selectFrom('iot_deliveries').where('customer_id', '=', customerId);
    if (f.channel_id) q = q.where('channel_id', '=', f.channel_id);
    if (f.alarm_id) q = q.where('alarm_id', '=', f.alarm_id);
    const rows = await q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    // The state of webhook deliveries lives in Fjord's webhook log: read it, then filter by it.
    const views = (await this.views(rows)).filter((d) => !f.status || d.status === f.status);
    const slice = views.slice(page.offset, page.offset + page.limit);
    return {
      deliveries: slice,
      total: views.length,
      page: page.page,
      page_size: page.size,
      has_more: page.offset + slice.length < views.length,
    };
  }

  /** Unacknowledged active alarms whose policy asks to be told again: the clock's sweep. */
  async renotify(): Promise<number> {
    const now = this.clock.nowMs();
    const policies = await this.db
      .selectFrom('iot_policies')
      .selectAll()
      .where('enabled', '=', 1)
      .where('renotify_minutes', 'is not', null)
      .execute();
    let sent = 0;
    const customers = new Map<string, number>();
    for (const p of policies) {
      const m = Number(p.renotify_minutes);
      customers.set(p.customer_id, Math.min(customers.get(p.customer_id) ?? m, m));
    }
    for (const [customerId, minutes] of customers) {
      const due = await this.db
        .selectFrom('iot_alarms')
        .selectAll()
        .where('customer_id', '=', customerId)
        .where('status', '=', 'active')
        .execute();
      for (const alarm of due) {
        const last = Number(alarm.last_notified_at ?? alarm.created_at);
        if (now - last >= minutes * 60_000) sent += await this.dispatch(alarm, 'renotify');
      }
    }
    return sent;
  }

  private async throttled(
    channel: IotChannelsTable,
    alarm: IotAlarmsTable,
    now: number,
  ): Promise<string | null> {
    const r = await this.db
      .selectFrom('iot_deliveries as d')
      .innerJoin('iot_alarms as a', 'a.id', 'd.alarm_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('d.channel_id', '=', channel.id)
      .where('a.device_pk', '=', alarm.device_pk)
      .where('d.status', '!=', 'suppressed')
      .where('d.created_at', '>', now - THROTTLE_WINDOW_MS)
      .executeTakeFirst();
    return Number(r?.n ?? 0) >= THROTTLE_COUNT ? 'throttled' : null;
  }

  private async deliver(
    channel: IotChannelsTable,
    d: {
      policyId: string | null;
      alarm: IotAlarmsTable | null;
      event: string;
      suppressed: string | null;
      payload: Record<string, unknown>;
    },
  ): Promise<string> {
    const now = this.clock.nowMs();
    const config = channelView(channel).config;
    const webhookId =
      d.suppressed || channel.channel_type !== 'webhook'
        ? null
        : await this.webhooks.send({
            customerId: channel.customer_id,
            url: String(config['url']),
            eventType: String(d.payload['type']),
            payload: d.payload,
          });
    // E-mail and SMS are handed over now, once per recipient; no retry (SMS has its own).
    const handed =
      d.suppressed || channel.channel_type === 'webhook'
        ? null
        : await this.handOver(channel, config['to'] as string[], d.payload);
    const row: IotDeliveriesTable = {
      id: newId(),
      customer_id: channel.customer_id,
      channel_id: channel.id,
      policy_id: d.policyId,
      alarm_id: d.alarm?.id ?? null,
      event: d.event,
      status: d.suppressed ? 'suppressed' : handed ? (handed.error ? 'failed' : 'delivered') : 'pending',
      error: d.suppressed ?? handed?.error ?? null,
      response_code: null,
      test: d.alarm ? 0 : 1,
      webhook_delivery_id: webhookId,
      created_at: now,
      completed_at: d.suppressed || handed ? now : null,
    };
    await this.db.insertInto('iot_deliveries').values(row).execute();
    return row.id;
  }

  /** Sends an e-mail or SMS to every recipient; the error names those that failed. */
  private async handOver(channel: IotChannelsTable, to: string[], payload: Record<string, unknown>) {
    const { subject, text, short } = alertText(payload);
    const failed: string[] = [];
    for (const recipient of to) {
      try {
        if (channel.channel_type === 'email') {
          if (!this.senders.mail) throw new Error('e-mail is not available');
          await this.senders.mail(channel.customer_id, recipient, subject, text);
        } else {
          if (!this.senders.sms) throw new Error('SMS is not available');
          await this.senders.sms(channel.customer_id, recipient, short);
        }
      } catch (err) {
        failed.push(`${recipient}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return { error: failed.length ? failed.join('; ').slice(0, 1000) : null };
  }

  private async row(id: string) {
    return this.db.selectFrom('iot_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  private async views(rows: IotDeliveriesTable[]) {
    const hooks = await this.webhooks.deliveriesByIds(
      rows.flatMap((r) => (r.webhook_delivery_id ? [r.webhook_delivery_id] : [])),
    );
    return rows.map((r) => {
      const h = r.webhook_delivery_id ? hooks.get(r.webhook_delivery_id) : undefined;
      return {
        id: r.id,
        channel_id: r.channel_id,
        policy_id: r.policy_id,
        alarm_id: r.alarm_id,
        event: r.event,
        test: r.test === 1,
        status: h ? h.status : r.status,
        attempts: h?.attempts ?? 0,
        response_code: h?.last_status_code ?? r.response_code,
        error: h ? h.last_error : r.error,
        created_at: new Date(Number(r.created_at)).toISOString(),
        completed_at: h
          ? h.delivered_at
          : r.completed_at === null
            ? null
            : new Date(Number(r.completed_at)).toISOString(),
      };
    });
  }
}

function quiet(q: { timezone: string; start: string; end: string }, ms: number): boolean {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: q.timezone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(ms));
  const minute =
    Number(parts.find((p) => p.type === 'hour')?.value) * 60 +
    Number(parts.find((p) => p.type === 'minute')?.value);
  const start = minutesOf(q.start);
  const end = minutesOf(q.end);
  // The same start and end: quiet all day (a channel muted until the policy changes).
  if (start === end) return true;
  return start < end ? minute >= start && minute < end : minute >= start || minute < end;
}

/** The words of an e-mail or SMS notification. */
function alertText(payload: Record<string, unknown>) {
  const alarm = payload['alarm'] as
    | { severity: string; device_id: string; rule_name: string; status: string; details: unknown; id: string }
    | undefined;
  const event = String(payload['type']).replace('iot.alarm.', '');
  if (!alarm) {
    const text = 'This is a test notification from Fjord IoT. No alarm was raised.';
    return { subject: '[Fjord IoT] Test notification', text, short: text };
  }
  const head = `${alarm.severity.toUpperCase()} alarm ${event} on ${alarm.device_id}: ${alarm.rule_name}`;
  const text = [
    head,
    '',
    `Alarm:    ${alarm.id}`,
    `Device:   ${alarm.device_id}`,
    `Rule:     ${alarm.rule_name}`,
    `Severity: ${alarm.severity}`,
    `Status:   ${alarm.status}`,
    `Details:  ${JSON.stringify(alarm.details)}`,
    `Sent at:  ${String(payload['sent_at'])}`,
  ].join('\n');
  return { subject: `[Fjord IoT] ${head}`, text, short: `Fjord IoT: ${head}`.slice(0, 300) };
}
