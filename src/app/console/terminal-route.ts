import { Type } from '@sinclair/typebox';
import { publicAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import { CSRF_PROTOCOL_PREFIX, TERMINAL_PROTOCOL } from './terminal-auth.js';

/**
 * The terminal's address in the OpenAPI document. The WebSocket itself is answered by the HTTP
 * server's upgrade handler (terminal.ts) before Fastify sees the request; a plain GET, without
 * `Upgrade: websocket`, reaches this route and is told how to connect.
 */
export function consoleTerminalRoute() {
  return defineRoute({
    method: 'GET',
    url: '/console/vps/:vps_id/terminal',
    operationId: 'consoleVpsTerminal',
    tag: 'Console',
    summary: "Console: a WebSocket to the server's shell (xterm.js ↔ the server's sshd)",
    description: [
      'A WebSocket, opened by the console page. Accepted only with the console session cookie, the',
      `subprotocols \`${TERMINAL_PROTOCOL}\` and \`${CSRF_PROTOCOL_PREFIX}<csrf_token>\` (a browser's`,
      "WebSocket cannot send the X-Fjord-CSRF header), an `Origin` equal to Fjord's own, and a PAT",
      'with `vps:write` behind the session; otherwise 401 or 403 before the upgrade. Another',
      "customer's server, or none, is 404. `?cols=&rows=` give the first size. Once open: binary",
      'frames are terminal bytes both ways; a text frame `{"type":"resize","cols":…,"rows":…}`',
      'resizes. Close codes: 4503 where servers are simulated (nothing to log in to), 4409 when',
      'the server is not running, 4401 when the session ends, 1011 when sshd cannot be reached,',
      '1000 when the shell exits.',
    ].join(' '),
    access: publicAccess,
    params: Type.Object({ vps_id: Type.String({ maxLength: 64 }) }),
    response: {
      101: Type.Null({ description: 'Switching Protocols: the WebSocket is open' }),
      426: Type.Object({ detail: Type.Object({ code: Type.String(), message: Type.String() }) }),
    },
    status: 426,
    errors: [401, 403, 404],
    idempotency: false,
    handler: async ({ reply }) => {
      reply.header('upgrade', 'websocket');
      return {
        detail: {
          code: 'upgrade_required',
          message: `Open this address as a WebSocket with the subprotocols ${TERMINAL_PROTOCOL} and ${CSRF_PROTOCOL_PREFIX}<csrf_token>.`,
        },
      };
    },
  });
}
