import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  type ConsoleSession,
  ConsoleSessions,
  CSRF_HEADER,
  cookieValue,
  SESSION_COOKIE,
} from '../../kernel/auth/console-sessions.js';
import { publicAccess } from '../../kernel/auth/principal.js';
import { kernelErrors } from '../../kernel/errors.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { Kernel } from '../../kernel/kernel.js';

const TAG = 'Console';

const SessionView = Type.Object({
  kind: Type.Union([Type.Literal('customer'), Type.Literal('operator')], {
    description: 'Whose session: a customer (signed in with a PAT) or the operator',
  }),
  customer_id: Type.Union([Type.String(), Type.Null()]),
  expires_at: Type.String({ format: 'date-time' }),
  csrf_token: Type.String({
    description: `Send it in the ${CSRF_HEADER} header with every API call the session cookie authenticates`,
  }),
});

/** The session cookie's Set-Cookie value (also set by the sign-in through the OIDC issuer). */
export const sessionCookie = (kernel: Kernel, value: string, maxAgeSeconds: number) =>
  `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${kernel.baseUrl().startsWith('https:') ? '; Secure' : ''}`;

const view = (session: ConsoleSession, csrf: string) => ({
  kind: session.kind,
  customer_id: session.customerId,
  expires_at: new Date(session.expiresAt).toISOString(),
  csrf_token: csrf,
});

/**
 * The console's sign-in: `POST /console/session` exchanges a PAT or the operator token for an
 * HttpOnly, SameSite=Strict session cookie (the token itself is never kept by the browser);
 * `GET` tells the page who is signed in and its CSRF token after a reload; `DELETE` signs out.
 */
export function consoleSessionRoutes(kernel: Kernel) {
  const cookie = (value: string, maxAgeSeconds: number) => sessionCookie(kernel, value, maxAgeSeconds);
  const sessionToken = (req: FastifyRequest) => cookieValue(req.headers.cookie, SESSION_COOKIE);
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');
  return [
    defineRoute({
      method: 'POST',
      url: '/console/session',
      operationId: 'consoleSignIn',
      tag: TAG,
      summary: 'Sign in to the console: a PAT or the operator token for a session cookie',
      description:
        "Sets the `fjord_console` cookie (HttpOnly, SameSite=Strict, expiring with the session). API calls authenticated by that cookie must send `csrf_token` in the `X-Fjord-CSRF` header; a cookie alone authenticates nothing. The session ends at sign-out, at `expires_at` (8 hours, or the PAT's own expiry if sooner), or when the PAT is revoked.",
      access: publicAccess,
      idempotency: false,
      body: Type.Object(
        { token: Type.String({ minLength: 1, maxLength: 512, description: 'A PAT, or the operator token' }) },
        { additionalProperties: false },
      ),
      response: { 201: SessionView },
      errors: [401],
      handler: async ({ body, reply }) => {
        const { token, csrf, session } = await kernel.consoleSessions.signIn(body.token.trim());
        noStore(reply);
        reply.header(
          'set-cookie',
          cookie(token, Math.max(1, Math.floor((session.expiresAt - Date.now()) / 1000))),
        );
        return view(session, csrf);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/console/session',
      operationId: 'consoleGetSession',
      tag: TAG,
      summary: 'The console session the cookie names, with its CSRF token',
      description:
        'Read by the console when it loads. Answered to the cookie alone: another origin cannot read the answer (no CORS), and SameSite=Strict keeps the cookie off its requests.',
      access: publicAccess,
      response: { 200: SessionView },
      errors: [401],
      handler: async ({ raw, reply }) => {
        noStore(reply);
        const token = sessionToken(raw);
        const found = token ? await kernel.consoleSessions.lookUp(token) : null;
        if (!token || !found) throw kernelErrors.unauthenticated('No console session; sign in.');
        return view(found, ConsoleSessions.csrfOf(token));
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/console/session',
      operationId: 'consoleSignOut',
      tag: TAG,
      summary: 'Sign out of the console: ends the session and clears its cookie',
      access: publicAccess,
      response: { 204: Type.Null() },
      errors: [401],
      handler: async ({ raw, reply }) => {
        const token = sessionToken(raw);
        const csrf = raw.headers[CSRF_HEADER];
        if (!token || typeof csrf !== 'string' || csrf !== ConsoleSessions.csrfOf(token))
          throw kernelErrors.unauthenticated(`Signing out needs the session's CSRF token in ${CSRF_HEADER}.`);
        await kernel.consoleSessions.signOut(token);
        reply.header('set-cookie', cookie('', 0));
        return null;
      },
    }),
  ];
}
