import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import { CheckBody, CheckResponse, Session, SessionIdParams, StartBody, StartResponse } from './schemas.js';
import type { VerifyService } from './service.js';

const TAG = 'Code verification';
/** Doc 3, Authentication §4: `X-API-Key` — a `verify` service key or a PAT with the scope. */
const verify = (...scopes: string[]): CustomerAccess => ({ kind: 'customer', services: ['verify'], scopes });

export function verifyRoutes(service: VerifyService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/verify/start',
      operationId: 'startVerification',
      tag: TAG,
      summary: 'Start a one-time-code session by SMS, voice call or e-mail',
      description:
        'Draws a code of `code_length` digits, sends it and keeps only its salted SHA-256. `status` is `delivered` once an e-mail was accepted by the SMTP server; SMS and voice sessions start `pending` and become `delivered` when the message arrives or the call has read the code. Too many sessions to one recipient or number range answer 429 (docs/verify.md).',
      access: verify('verify:write'),
      body: StartBody,
      response: { 200: StartResponse },
      errors: [400, 429, 502, 503],
      handler: async ({ principal, body }) => service.start(principal.customerId, body),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/verify/check',
      operationId: 'checkVerification',
      tag: TAG,
      summary: 'Check a code the user entered',
      description:
        'Wrong codes, expiry, spent attempts and failed calls answer 200 with `error` (`invalid_code`, `session_expired`, `max_attempts_exceeded`, `voice_no_answer`, `voice_busy`). An unknown, verified, cancelled or another customer’s session answers 404 `session_not_found`.',
      access: verify('verify:write'),
      body: CheckBody,
      response: { 200: CheckResponse },
      errors: [404],
      handler: async ({ principal, body }) =>
        service.check(principal.customerId, body.session_id, body.code, body.client_ip),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/verify/status/:session_id',
      operationId: 'getVerificationStatus',
      tag: TAG,
      summary: 'Get a verification session',
      access: verify('verify:read'),
      params: SessionIdParams,
      response: { 200: Session },
      errors: [404],
      handler: async ({ principal, params }) => service.status(principal.customerId, params.session_id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/verify/sessions/:session_id',
      operationId: 'cancelVerification',
      tag: TAG,
      summary: 'Cancel a pending or delivered session',
      description:
        'Answers with the session, now `cancelled`. Any other state answers 409 `session_not_cancellable`.',
      access: verify('verify:write'),
      params: SessionIdParams,
      response: { 200: Session },
      errors: [404, 409],
      handler: async ({ principal, params }) => service.cancel(principal.customerId, params.session_id),
    }),
  ];
}
