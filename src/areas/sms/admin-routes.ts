import { Type } from '@sinclair/typebox';
import { operatorAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { SmsPipeline } from './pipeline.js';
import { InboundRouted, InjectInboundBody, ProfileIdParams, ReviewedProfile } from './schemas.js';
import type { SenderProfiles } from './sender-profiles.js';

const TAG = 'Operator';

/** The operator's SMS controls: sender-id review, and inbound messages for the sandbox SMSC. */
export function smsAdminRoutes(profiles: SenderProfiles, pipeline: SmsPipeline, now: () => number) {
  const review = (decision: 'approved' | 'rejected', verb: string) =>
    defineRoute({
      method: 'POST',
      url: `/admin/v1/sms/sender-profiles/:profile_id/${verb}`,
      operationId: verb === 'approve' ? 'adminApproveSmsSender' : 'adminRejectSmsSender',
      tag: TAG,
      summary: `${verb === 'approve' ? 'Approve' : 'Reject'} a custom SMS sender id`,
      access: operatorAccess,
      params: ProfileIdParams,
      body: Type.Optional(
        Type.Object(
          { note: Type.Optional(Type.String({ maxLength: 500 })) },
          { additionalProperties: false },
        ),
      ),
      response: { 200: ReviewedProfile },
      errors: [404, 409],
      handler: async ({ params, body }) => profiles.review(params.profile_id, decision, body?.note ?? null),
    });
  return [
    defineRoute({
      method: 'GET',
      url: '/admin/v1/sms/sender-profiles',
      operationId: 'adminListSmsSenders',
      tag: TAG,
      summary: 'List sender profiles of every customer, by approval status',
      access: operatorAccess,
      query: Type.Object(
        {
          approval_status: Type.Optional(
            Type.Union(['pending', 'approved', 'rejected'].map((s) => Type.Literal(s))),
          ),
        },
        { additionalProperties: false },
      ),
      response: { 200: Type.Object({ sender_profiles: Type.Array(ReviewedProfile) }) },
      handler: async ({ query }) => ({
        sender_profiles: await profiles.listForReview(query.approval_status as 'pending' | undefined),
      }),
    }),
    review('approved', 'approve'),
    review('rejected', 'reject'),
    defineRoute({
      method: 'POST',
      url: '/admin/v1/sms/inbound',
      operationId: 'adminInjectInboundSms',
      tag: TAG,
      summary: 'Inject a mobile-originated SMS, as if a phone had sent it (sandbox SMSC)',
      description:
        'Routed like any inbound message: a keyword on the shared number, a reply to the last message sent to `from` with `allow_reply`, or a customer’s own number.',
      access: operatorAccess,
      body: InjectInboundBody,
      response: { 200: InboundRouted },
      handler: async ({ body }) =>
        pipeline.routeInbound({ from: body.from, to: body.to ?? '', text: body.message }, now()),
    }),
  ];
}
