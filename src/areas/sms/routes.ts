import { Type } from '@sinclair/typebox';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { MessageStatus } from './migrations.js';
import type { SmsReporting } from './reporting.js';
import {
  CancelResult,
  MessageIdParams,
  MessageList,
  MessageListQuery,
  NewSenderProfileBody,
  ProfileDeleted,
  ProfileIdParams,
  SendBody,
  SenderProfile,
  SendResult,
  SmsMessage,
  SmsStats,
  SmsStatus,
  SmsUsage,
  UsageQuery,
} from './schemas.js';
import type { SmsService } from './service.js';

const TAG = 'SMS';
/** SMS takes `X-API-Key` (doc 3, Authentication §4): a service key for `sms`, or a PAT with the scope. */
export const smsAccess = (scope: string): CustomerAccess => ({
  kind: 'customer',
  services: ['sms'],
  scopes: [scope],
});

const ms = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));

export function smsRoutes(sms: SmsService, reporting: SmsReporting) {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/sms/send',
      operationId: 'sendSms',
      tag: TAG,
      summary: 'Send an SMS to numbers, contacts and groups, now or at a scheduled time',
      description:
        'Recipients from `to`, `to_contacts` and `to_groups` are resolved and de-duplicated; each gets its own message. ' +
        '`units_estimate` is parts × recipients, with exact GSM-7/UCS-2 segmentation (docs/sms.md).',
      access: smsAccess('sms:write'),
      body: SendBody,
      response: { 201: SendResult },
      errors: [404, 409],
      handler: async ({ principal, body }) => sms.send(principal.customerId, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/sms/messages',
      operationId: 'listSmsMessages',
      tag: TAG,
      summary: 'List SMS messages, newest first, with filters',
      access: smsAccess('sms:read'),
      query: MessageListQuery,
      response: { 200: MessageList },
      handler: async ({ principal, query }) =>
        sms.listMessages(principal.customerId, {
          page: query.page ?? 1,
          pageSize: query.page_size ?? 50,
          filter: {
            status: query.status as MessageStatus | undefined,
            direction: query.direction,
            messageType: query.message_type,
            fromMs: ms(query.date_from),
            toMs: ms(query.date_to),
            recipient: query.recipient,
            customerRef: query.customer_ref,
          },
        }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/sms/messages/:message_id',
      operationId: 'getSmsMessage',
      tag: TAG,
      summary: 'Get an SMS message',
      access: smsAccess('sms:read'),
      params: MessageIdParams,
      response: { 200: SmsMessage },
      errors: [404],
      handler: async ({ principal, params }) => sms.getMessage(principal.customerId, params.message_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/sms/messages/:message_id/cancel',
      operationId: 'cancelSmsMessage',
      tag: TAG,
      summary: 'Cancel a QUEUED or SCHEDULED message',
      description: 'A message already SENDING, SENT, DELIVERED or FAILED is not moved: 409 `cannot_cancel`.',
      access: smsAccess('sms:write'),
      params: MessageIdParams,
      response: { 200: CancelResult },
      errors: [404, 409],
      handler: async ({ principal, params }) => sms.cancel(principal.customerId, params.message_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/sms/sender-profiles',
      operationId: 'listSmsSenderProfiles',
      tag: TAG,
      summary: 'List sender profiles',
      access: smsAccess('sms:read'),
      response: { 200: Type.Array(SenderProfile) },
      handler: async ({ principal }) => sms.profiles.list(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/sms/sender-profiles',
      operationId: 'createSmsSenderProfile',
      tag: TAG,
      summary: 'Create a sender profile (a custom alphanumeric sender waits for approval)',
      access: smsAccess('sms:write'),
      body: NewSenderProfileBody,
      response: { 201: SenderProfile },
      handler: async ({ principal, body }) => sms.profiles.create(principal.customerId, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/sms/sender-profiles/:profile_id',
      operationId: 'deleteSmsSenderProfile',
      tag: TAG,
      summary: 'Delete a sender profile (not the default while it is the only one)',
      access: smsAccess('sms:write'),
      params: ProfileIdParams,
      response: { 200: ProfileDeleted },
      errors: [404, 409],
      handler: async ({ principal, params }) => sms.profiles.delete(principal.customerId, params.profile_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/sms/status',
      operationId: 'getSmsStatus',
      tag: TAG,
      summary: 'Whether the account can send, and its message counts',
      access: smsAccess('sms:read'),
      response: { 200: SmsStatus },
      handler: async ({ principal }) => reporting.status(principal.customerId),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/sms/usage',
      operationId: 'getSmsUsage',
      tag: TAG,
      summary: 'Units and cost of a month',
      access: smsAccess('sms:read'),
      query: UsageQuery,
      response: { 200: SmsUsage },
      handler: async ({ principal, query }) => reporting.usage(principal.customerId, query.period),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/sms/stats',
      operationId: 'getSmsStats',
      tag: TAG,
      summary: 'Sent, received, units and delivery rate by period, and counts by status',
      access: smsAccess('sms:read'),
      response: { 200: SmsStats },
      handler: async ({ principal }) => reporting.stats(principal.customerId),
    }),
  ];
}
