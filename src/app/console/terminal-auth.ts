import type { IncomingMessage } from 'node:http';
import { scopesSatisfy } from '../../kernel/auth/catalogue.js';
import { ConsoleSessions, cookieValue, SESSION_COOKIE } from '../../kernel/auth/console-sessions.js';
import { constantTimeEqual } from '../../kernel/secrets.js';

/** The path of a server's terminal: `/console/vps/{vps_id}/terminal`. */
export const TERMINAL_PATH = /^\/console\/vps\/([A-Za-z0-9_-]{1,64})\/terminal$/;
/** The subprotocol the page asks for, and the one Fjord answers with. */
export const TERMINAL_PROTOCOL = 'fjord-terminal';
/** The second subprotocol carries the CSRF token: `fjord-csrf.<token>`. */
export const CSRF_PROTOCOL_PREFIX = 'fjord-csrf.';
/** What a terminal needs of the session's PAT: it acts on the server. */
export const TERMINAL_SCOPES = ['vps:write'] as const;

export type Refusal = { status: 401 | 403 | 404; message: string };
export type Admitted = { customerId: string; sessionToken: string; vpsId: string };

/**
 * Whether an upgrade request may open a terminal, before anything is upgraded. A browser's
 * WebSocket sends the cookie but no custom header, so the CSRF token comes as a subprotocol; the
 * Origin must be Fjord's own exactly (a page of another site carries its own origin, and the
 * SameSite=Strict cookie is not sent from it anyway). The server itself is looked up by the
 * caller, by the session's customer.
 */
export async function admitTerminal(
  req: IncomingMessage,
  sessions: ConsoleSessions,
  ownOrigin: string,
): Promise<Admitted | Refusal> {
  const url = new URL(req.url ?? '/', 'http://x');
  const vpsId = TERMINAL_PATH.exec(url.pathname)?.[1];
  if (!vpsId) return { status: 404, message: 'No such WebSocket endpoint.' };
  if (req.headers.origin !== ownOrigin)
    return { status: 403, message: `The terminal opens only from Fjord's own origin (${ownOrigin}).` };
  const token = cookieValue(req.headers.cookie, SESSION_COOKIE);
  if (!token) return { status: 401, message: 'No console session; sign in.' };
  const offered = String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim());
  const csrf = offered.find((p) => p.startsWith(CSRF_PROTOCOL_PREFIX))?.slice(CSRF_PROTOCOL_PREFIX.length);
  if (
    !offered.includes(TERMINAL_PROTOCOL) ||
    !csrf ||
    !constantTimeEqual(csrf, ConsoleSessions.csrfOf(token))
  )
    return {
      status: 401,
      message: `The terminal needs the subprotocols ${TERMINAL_PROTOCOL} and ${CSRF_PROTOCOL_PREFIX}<the session's CSRF token>.`,
    };
  const session = await sessions.lookUp(token);
  if (!session) return { status: 401, message: 'The console session has ended; sign in again.' };
  const { principal } = session;
  if (principal.customerId === null)
    return { status: 403, message: "The operator's session has no servers; sign in with a PAT." };
  const credential = principal.credential;
  if (credential.kind === 'pat' && !scopesSatisfy(credential.scopes, TERMINAL_SCOPES))
    return { status: 403, message: `The session's PAT lacks the scope ${TERMINAL_SCOPES.join(' ')}.` };
  return { customerId: principal.customerId, sessionToken: token, vpsId };
}
