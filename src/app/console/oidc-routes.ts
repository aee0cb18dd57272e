import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { cookieValue } from '../../kernel/auth/console-sessions.js';
import { publicAccess } from '../../kernel/auth/principal.js';
import { kernelErrors } from '../../kernel/errors.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { Kernel } from '../../kernel/kernel.js';
import {
  CALLBACK_PATH,
  ConsoleOidcSignIn,
  FLOW_COOKIE,
  FLOW_SECONDS,
  OidcSignInError,
} from './oidc-sign-in.js';
import { sessionCookie } from './session-routes.js';

const TAG = 'Console';
const FLOW_PATH = '/console/oidc';

/**
 * "Sign in with …" on the console's sign-in page, when an OIDC issuer and the console's client id
 * are configured (FJORD_OIDC_ISSUER, FJORD_OIDC_CLIENT_ID). `start` sends the browser to the
 * issuer; the issuer sends it back to `callback`, which ends at the console signed in (the same
 * session cookie as a PAT's sign-in) or at the sign-in page with `?sign_in_error=…`.
 */
export function consoleOidcRoutes(kernel: Kernel) {
  const settings = kernel.config.oidc;
  const signIn =
    settings?.clientId && kernel.oidc
      ? new ConsoleOidcSignIn({
          verifier: kernel.oidc,
          client: { clientId: settings.clientId, clientSecret: settings.clientSecret },
          secrets: kernel.secrets,
          sessions: kernel.consoleSessions,
          identity: kernel.identity,
          issuer: settings.issuer,
          redirectUri: () => `${kernel.baseUrl()}${CALLBACK_PATH}`,
          now: Date.now,
        })
      : null;
  const secure = () => (kernel.baseUrl().startsWith('https:') ? '; Secure' : '');
  // Lax, not Strict: the callback is a navigation that comes from the issuer's site.
  const flowCookie = (value: string, maxAge: number) =>
    `${FLOW_COOKIE}=${value}; Path=${FLOW_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure()}`;
  const redirect = (reply: FastifyReply, location: string, cookies: string[]) => {
    reply
      .header('cache-control', 'no-store')
      .header('set-cookie', cookies)
      .code(302)
      .header('location', location);
    reply.send();
    return null;
  };
  const configured = () => {
    if (!signIn)
      throw kernelErrors.notFound('An OIDC sign-in (set FJORD_OIDC_ISSUER and FJORD_OIDC_CLIENT_ID)');
    return signIn;
  };
  const Redirect = Type.Null({ description: 'A redirect (`Location`)' });
  return [
    defineRoute({
      method: 'GET',
      url: '/console/oidc',
      operationId: 'consoleOidcSignInOptions',
      tag: TAG,
      summary: 'Whether the console offers a sign-in through an OIDC issuer, and its name',
      access: publicAccess,
      response: {
        200: Type.Object({
          available: Type.Boolean(),
          name: Type.Union([Type.String(), Type.Null()], {
            description: 'The issuer’s name for the “Sign in with …” button (FJORD_OIDC_NAME)',
          }),
          start_url: Type.Union([Type.String(), Type.Null()], { description: 'Where the button leads' }),
        }),
      },
      handler: async () => ({
        available: signIn !== null,
        name: signIn ? settings!.name : null,
        start_url: signIn ? `${FLOW_PATH}/start` : null,
      }),
    }),
    defineRoute({
      method: 'GET',
      url: '/console/oidc/start',
      operationId: 'consoleOidcStart',
      tag: TAG,
      summary: 'Start a console sign-in at the OIDC issuer (authorization code with PKCE)',
      description:
        'Redirects to the issuer’s authorization endpoint with `state`, `nonce` and an S256 `code_challenge`, and sets a short-lived, HttpOnly cookie (`fjord_oidc_flow`, sealed with the data key) that the callback needs. When the issuer cannot be reached, redirects to the sign-in page with `sign_in_error=issuer`.',
      access: publicAccess,
      status: 302,
      response: { 302: Redirect },
      errors: [404],
      handler: async ({ reply }) => {
        const flow = configured();
        try {
          const { location, flow: sealed } = await flow.begin();
          return redirect(reply, location, [flowCookie(sealed, FLOW_SECONDS)]);
        } catch (err) {
          if (!(err instanceof OidcSignInError)) throw err;
          kernel.log.warn({ problem: err.problem, err: err.message }, 'console OIDC sign-in failed');
          return redirect(reply, `/console/?sign_in_error=${err.problem}`, []);
        }
      },
    }),
    defineRoute({
      method: 'GET',
      url: CALLBACK_PATH,
      operationId: 'consoleOidcCallback',
      tag: TAG,
      summary: 'The OIDC issuer’s redirect back: exchanges the code and signs in to the console',
      description:
        'Checks `state` against the flow cookie, exchanges `code` with the PKCE verifier at the issuer’s token endpoint, verifies the ID token (issuer, keys, audience = the client id, nonce, expiry) and sets the console’s session cookie, then redirects to `/console/`. Any failure redirects to `/console/?sign_in_error=` one of `denied`, `expired`, `exchange`, `token`, `no_customer`, `issuer`. An identity signs in as the customer it is linked to, or as the active customer whose e-mail the issuer marks verified.',
      access: publicAccess,
      status: 302,
      query: Type.Object({
        code: Type.Optional(Type.String({ maxLength: 4096 })),
        state: Type.Optional(Type.String({ maxLength: 512 })),
        error: Type.Optional(Type.String({ maxLength: 256 })),
        error_description: Type.Optional(Type.String({ maxLength: 2048 })),
      }),
      response: { 302: Redirect },
      errors: [404],
      handler: async ({ query, raw, reply }) => {
        const flow = configured();
        const clearFlow = flowCookie('', 0);
        try {
          const { token, session } = await flow.finish(query, cookieValue(raw.headers.cookie, FLOW_COOKIE));
          const maxAge = Math.max(1, Math.floor((session.expiresAt - Date.now()) / 1000));
          return redirect(reply, '/console/', [clearFlow, sessionCookie(kernel, token, maxAge)]);
        } catch (err) {
          if (!(err instanceof OidcSignInError)) throw err;
          kernel.log.info({ problem: err.problem, err: err.message }, 'console OIDC sign-in refused');
          return redirect(reply, `/console/?sign_in_error=${err.problem}`, [clearFlow]);
        }
      },
    }),
  ];
}
