import { Type } from '@sinclair/typebox';
import { operatorAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { SimulatedMailDriver } from './drivers/mail.js';
import type { SimulatedVoiceDriver } from './drivers/voice.js';

/**
 * The emulator's inbox: what the simulated e-mail and voice drivers "delivered", newest first,
 * so that a developer (or a test) can read the one-time code a real user would have received —
 * as LocalStack's SES endpoint and MailHog do. Kept in this process's memory (the last 1000 of
 * each), so scaled out, ask the process that sent it. SMS codes are in the SMS message list.
 */
const InboxItem = Type.Object({
  kind: Type.Union([Type.Literal('email'), Type.Literal('voice')]),
  to: Type.String(),
  from: Type.String({ description: 'Sender address, or the caller id of a call' }),
  subject: Type.Union([Type.String(), Type.Null()]),
  text: Type.String({ description: 'The e-mail’s text part, or what the call said' }),
  at: Type.String({ format: 'date-time' }),
  id: Type.String({ description: 'Message id, or call id' }),
  outcome: Type.Union([Type.String(), Type.Null()], { description: 'Calls: answered, busy or no_answer' }),
});

export function inboxRoutes(mail: SimulatedMailDriver | null, voice: SimulatedVoiceDriver) {
  return [
    defineRoute({
      method: 'GET',
      url: '/admin/v1/emulator/inbox',
      operationId: 'getEmulatorInbox',
      tag: 'Operator',
      summary: 'E-mails and calls the simulated drivers delivered, newest first (with their codes)',
      access: operatorAccess,
      query: Type.Object({
        to: Type.Optional(Type.String({ description: 'Only this recipient (address or E.164 number)' })),
        kind: Type.Optional(Type.Union([Type.Literal('email'), Type.Literal('voice')])),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
      }),
      response: { 200: Type.Object({ messages: Type.Array(InboxItem) }) },
      handler: async ({ query }) => {
        const to = query.to?.trim().toLowerCase();
        const items = [
          ...(query.kind === 'voice' || !mail
            ? []
            : mail.outbox.map((m) => ({
                kind: 'email' as const,
                to: m.to,
                from: m.from,
                subject: m.subject,
                text: m.text,
                at: new Date(m.sentAt).toISOString(),
                id: m.messageId,
                outcome: null,
              }))),
          ...(query.kind === 'email'
            ? []
            : voice.calls().map((c) => ({
                kind: 'voice' as const,
                to: c.to,
                from: c.callerId,
                subject: null,
                text: c.script.join(' '),
                at: new Date(c.placedAt).toISOString(),
                id: c.callId,
                outcome: c.outcome,
              }))),
        ];
        return {
          messages: items
            .filter((i) => !to || i.to.toLowerCase() === to)
            .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
            .slice(0, query.limit ?? 50),
        };
      },
    }),
  ];
}
