import { Type } from '@sinclair/typebox';
import type { Principal } from '../../../kernel/auth/principal.js';
import { pageOf } from '../../../kernel/http/pagination.js';
import { defineRoute } from '../../../kernel/http/route.js';
import { iotAccess } from '../catalogue/routes.js';
import type { Alarms } from './alarms.js';
import type { NotificationSettings } from './channels.js';
import type { Notifier } from './notifier.js';
import type { Rules } from './rules.js';
import {
  Alarm,
  AlarmList,
  AlarmParams,
  AlarmSummary,
  Channel,
  ChannelParams,
  CreateChannelBody,
  CreatePolicyBody,
  CreateRuleBody,
  Delivery,
  DeliveryList,
  ListAlarmsQuery,
  ListDeliveriesQuery,
  PatchChannelBody,
  PatchPolicyBody,
  PatchRuleBody,
  Policy,
  PolicyParams,
  Rule,
  RuleParams,
  Timeline,
} from './schemas.js';

const Empty = Type.Null({ description: 'No content' });
const actor = (p: Principal) => `${p.credential.kind}:${p.credential.id}`;
const time = (s: string | undefined) => (s === undefined ? undefined : Date.parse(s));

/** Alarm rules, alarms, notification channels, policies and deliveries. */
export function iotAlarmRoutes(
  rules: Rules,
  alarms: Alarms,
  settings: NotificationSettings,
  notifier: Notifier,
) {
  const read = { tag: 'IoT alarms', access: iotAccess('iot:read'), rateLimit: ['iot'] };
  const write = { tag: 'IoT alarms', access: iotAccess('iot:write'), rateLimit: ['iot'] };
  return [
    // --- rules ---------------------------------------------------------------------------------
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/rules',
      operationId: 'iotListRules',
      summary: 'Alarm rules, oldest first',
      response: { 200: Type.Object({ rules: Type.Array(Rule) }) },
      handler: async ({ principal }) => rules.list(principal.customerId),
    }),
    defineRoute({
      ...write,
      method: 'POST',
      url: '/v1/iot/rules',
      operationId: 'iotCreateRule',
      summary:
        'Create an alarm rule: its devices, a condition per severity, a clear condition and a schedule',
      body: CreateRuleBody,
      response: { 201: Rule },
      errors: [403],
      handler: async ({ principal, body, reply }) => {
        reply.code(201);
        return rules.create(principal.customerId, body);
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/rules/:rule_id',
      operationId: 'iotGetRule',
      summary: 'An alarm rule',
      params: RuleParams,
      response: { 200: Rule },
      errors: [404],
      handler: async ({ principal, params }) => rules.get(principal.customerId, params.rule_id),
    }),
    defineRoute({
      ...write,
      method: 'PATCH',
      url: '/v1/iot/rules/:rule_id',
      operationId: 'iotUpdateRule',
      summary: 'Change an alarm rule; it applies from the next message (counters start again)',
      params: RuleParams,
      body: PatchRuleBody,
      response: { 200: Rule },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        rules.update(principal.customerId, params.rule_id, body),
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      url: '/v1/iot/rules/:rule_id',
      operationId: 'iotDeleteRule',
      summary: 'Delete an alarm rule (its alarms stay in the history)',
      params: RuleParams,
      response: { 204: Empty },
      errors: [404],
      handler: async ({ principal, params, reply }) => {
        await rules.remove(principal.customerId, params.rule_id);
        return reply.code(204).send();
      },
    }),
    ...(['enable', 'disable'] as const).map((action) =>
      defineRoute({
        ...write,
        method: 'POST',
        url: `/v1/iot/rules/:rule_id/${action}`,
        operationId: action === 'enable' ? 'iotEnableRule' : 'iotDisableRule',
        summary:
          action === 'enable'
            ? 'Enable an alarm rule (judged from the next message)'
            : 'Disable an alarm rule (not judged; its counters are forgotten; open alarms stay)',
        params: RuleParams,
        response: { 200: Rule },
        errors: [404],
        handler: async ({ principal, params }) =>
          rules.setEnabled(principal.customerId, params.rule_id, action === 'enable'),
      }),
    ),
    // --- alarms --------------------------------------------------------------------------------
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/alarms',
      operationId: 'iotListAlarms',
      summary: 'Alarms, newest first, filtered by status, severity, device, rule and time',
      query: ListAlarmsQuery,
      response: { 200: AlarmList },
      handler: async ({ principal, query }) =>
        alarms.list(
          principal.customerId,
          {
            status: query.status,
            severity: query.severity,
            device_id: query.device_id,
            rule_id: query.rule_id,
            from: time(query.from),
            to: time(query.to),
          },
          pageOf(query, 'page_size', 50),
        ),
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/alarms/summary',
      operationId: 'iotAlarmSummary',
      summary: 'Alarm counts by status, and open alarms by severity',
      response: { 200: AlarmSummary },
      handler: async ({ principal }) => alarms.summary(principal.customerId),
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/alarms/:alarm_id',
      operationId: 'iotGetAlarm',
      summary: 'An alarm',
      params: AlarmParams,
      response: { 200: Alarm },
      errors: [404],
      handler: async ({ principal, params }) => alarms.get(principal.customerId, params.alarm_id),
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/alarms/:alarm_id/timeline',
      operationId: 'iotAlarmTimeline',
      summary: 'Every move of an alarm, oldest first, with who or what made it',
      params: AlarmParams,
      response: { 200: Timeline },
      errors: [404],
      handler: async ({ principal, params }) => alarms.timeline(principal.customerId, params.alarm_id),
    }),
    ...(
      [
        ['acknowledge', 'iotAcknowledgeAlarm', 'Acknowledge an active alarm (it stays open until resolved)'],
        ['resolve', 'iotResolveAlarm', 'Resolve an active or acknowledged alarm'],
        ['reopen', 'iotReopenAlarm', 'Reopen a resolved alarm (active again, unacknowledged)'],
      ] as const
    ).map(([action, operationId, summary]) =>
      defineRoute({
        ...write,
        method: 'POST',
        url: `/v1/iot/alarms/:alarm_id/${action}`,
        operationId,
        summary,
        params: AlarmParams,
        response: { 200: Alarm },
        errors: [404, 409],
        handler: async ({ principal, params }) =>
          alarms[action](principal.customerId, params.alarm_id, actor(principal)),
      }),
    ),
    // --- notification channels ----------------------------------------------------------------
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/notifications/channels',
      operationId: 'iotListChannels',
      summary: 'Notification channels',
      response: { 200: Type.Object({ channels: Type.Array(Channel) }) },
      handler: async ({ principal }) => settings.channels(principal.customerId),
    }),
    defineRoute({
      ...write,
      method: 'POST',
      url: '/v1/iot/notifications/channels',
      operationId: 'iotCreateChannel',
      summary: 'Create a notification channel (webhook: config.url)',
      body: CreateChannelBody,
      response: { 201: Channel },
      errors: [403],
      handler: async ({ principal, body, reply }) => {
        reply.code(201);
        return settings.createChannel(principal.customerId, body);
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/notifications/channels/:channel_id',
      operationId: 'iotGetChannel',
      summary: 'A notification channel',
      params: ChannelParams,
      response: { 200: Channel },
      errors: [404],
      handler: async ({ principal, params }) => settings.channel(principal.customerId, params.channel_id),
    }),
    defineRoute({
      ...write,
      method: 'PATCH',
      url: '/v1/iot/notifications/channels/:channel_id',
      operationId: 'iotUpdateChannel',
      summary: 'Change a notification channel',
      params: ChannelParams,
      body: PatchChannelBody,
      response: { 200: Channel },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        settings.updateChannel(principal.customerId, params.channel_id, body),
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      url: '/v1/iot/notifications/channels/:channel_id',
      operationId: 'iotDeleteChannel',
      summary: 'Delete a notification channel (refused while a policy sends to it)',
      params: ChannelParams,
      response: { 204: Empty },
      errors: [404, 409],
      handler: async ({ principal, params, reply }) => {
        await settings.removeChannel(principal.customerId, params.channel_id);
        return reply.code(204).send();
      },
    }),
    defineRoute({
      ...write,
      method: 'POST',
      url: '/v1/iot/notifications/channels/:channel_id/test',
      operationId: 'iotTestChannel',
      summary: 'Send a clearly marked test notification through a channel; answers its delivery',
      params: ChannelParams,
      response: { 202: Delivery },
      errors: [404],
      handler: async ({ principal, params, reply }) => {
        reply.code(202);
        return notifier.test(principal.customerId, params.channel_id);
      },
    }),
    // --- notification policies ----------------------------------------------------------------
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/notifications/policies',
      operationId: 'iotListPolicies',
      summary: 'Notification policies',
      response: { 200: Type.Object({ policies: Type.Array(Policy) }) },
      handler: async ({ principal }) => settings.policies(principal.customerId),
    }),
    defineRoute({
      ...write,
      method: 'POST',
      url: '/v1/iot/notifications/policies',
      operationId: 'iotCreatePolicy',
      summary:
        'Create a notification policy: which alarms go to which channels, on which events, and when not',
      body: CreatePolicyBody,
      response: { 201: Policy },
      errors: [403],
      handler: async ({ principal, body, reply }) => {
        reply.code(201);
        return settings.createPolicy(principal.customerId, body);
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/notifications/policies/:policy_id',
      operationId: 'iotGetPolicy',
      summary: 'A notification policy',
      params: PolicyParams,
      response: { 200: Policy },
      errors: [404],
      handler: async ({ principal, params }) => settings.policy(principal.customerId, params.policy_id),
    }),
    defineRoute({
      ...write,
      method: 'PATCH',
      url: '/v1/iot/notifications/policies/:policy_id',
      operationId: 'iotUpdatePolicy',
      summary: 'Change a notification policy',
      params: PolicyParams,
      body: PatchPolicyBody,
      response: { 200: Policy },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        settings.updatePolicy(principal.customerId, params.policy_id, body),
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      url: '/v1/iot/notifications/policies/:policy_id',
      operationId: 'iotDeletePolicy',
      summary: 'Delete a notification policy',
      params: PolicyParams,
      response: { 204: Empty },
      errors: [404],
      handler: async ({ principal, params, reply }) => {
        await settings.removePolicy(principal.customerId, params.policy_id);
        return reply.code(204).send();
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/notifications/deliveries',
      operationId: 'iotListDeliveries',
      summary: 'Notification deliveries, newest first, with their status, response code and error',
      query: ListDeliveriesQuery,
      response: { 200: DeliveryList },
      handler: async ({ principal, query }) =>
        notifier.list(
          principal.customerId,
          { channel_id: query.channel_id, alarm_id: query.alarm_id, status: query.status },
          pageOf(query, 'page_size', 50),
        ),
    }),
  ];
}
