import { Type } from '@sinclair/typebox';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { Nullable, NullableTimestamp, Timestamp } from '../../kernel/http/common-schemas.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { WebhookService } from '../../kernel/webhooks/webhooks.js';

const TAG = 'Webhooks';
const read: CustomerAccess = {
  kind: 'customer',
  services: 'any',
  scopes: ['account:read'],
  oidc: true,
  bearer: true,
};
const write: CustomerAccess = { kind: 'customer', scopes: ['account:write'], oidc: true, bearer: true };

const Secret = Type.Object(
  {
    secret: Type.String({ description: 'HMAC-SHA256 key of the Fjord-Signature header' }),
    signature_header: Type.String(),
  },
  { title: 'WebhookSecret' },
);
const Delivery = Type.Object(
  {
    id: Type.String(),
    event_type: Type.String(),
    url: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attempts: Type.Integer(),
    last_status_code: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    created_at: Timestamp(),
    delivered_at: NullableTimestamp(),
  },
  { title: 'WebhookDelivery' },
);
const SIGNATURE_HEADER = 'Fjord-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">';

/** Signing secret and delivery log of the webhooks every area sends (docs/webhooks.md). */
export function webhookRoutes(webhooks: WebhookService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/webhooks/secret',
      operationId: 'getWebhookSecret',
      tag: TAG,
      summary: 'Get the secret that signs this account’s webhooks',
      description:
        'Whoever holds the secret can forge webhooks, so only account administrators (PAT `account:write`, OIDC) may read it.',
      access: write,
      response: { 200: Secret },
      handler: async ({ principal }) => ({
        secret: await webhooks.secretFor(principal.customerId),
        signature_header: SIGNATURE_HEADER,
      }),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/webhooks/secret/rotate',
      operationId: 'rotateWebhookSecret',
      tag: TAG,
      summary: 'Replace the webhook signing secret',
      access: write,
      response: { 200: Secret },
      handler: async ({ principal }) => ({
        secret: await webhooks.rotateSecret(principal.customerId),
        signature_header: SIGNATURE_HEADER,
      }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/webhooks/deliveries',
      operationId: 'listWebhookDeliveries',
      tag: TAG,
      summary: 'List recent webhook deliveries (newest first)',
      access: read,
      query: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) }),
      response: { 200: Type.Object({ deliveries: Type.Array(Delivery), total: Type.Integer() }) },
      handler: async ({ principal, query }) => {
        return webhooks.listDeliveries(principal.customerId, query.limit ?? 50);
      },
    }),
  ];
}
