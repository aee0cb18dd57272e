/**
 * The console's web terminal: a WebSocket at `/console/vps/{vps_id}/terminal` relayed to the
 * server's sshd. Fjord logs in as the server's login user with an Ed25519 key pair made for this
 * one connection, added inside the server through the VPS area and taken out again as soon as the
 * login succeeded; the private key never leaves this process. Nothing runs on the host: the bytes
 * go between the page (xterm.js) and an SSH session in the customer's own server.
 *
 * Frames: binary both ways are terminal bytes; a text frame from the page is a control message,
 * `{"type":"resize","cols":…,"rows":…}`. Refusals before the upgrade are HTTP statuses (401, 403,
 * 404); once upgraded, the close frame carries a code (4000 + the HTTP status it stands for) and a
 * reason the page shows.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { type ClientChannel, Client as SshClient, utils as sshUtils } from 'ssh2';
import { WebSocket, WebSocketServer } from 'ws';
import type { VpsService } from '../../areas/vps/service.js';
import { AppError } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import { admitTerminal, TERMINAL_PATH, TERMINAL_PROTOCOL } from './terminal-auth.js';

/** Largest frame the page may send (keystrokes and pastes; a paste larger is cut by the page). */
const MAX_FRAME = 64 * 1024;
/** Bytes waiting for a slow page past which the server's output is paused. */
const MAX_UNSENT = 1024 * 1024;
/** How often the session behind an open terminal is checked (sign-out, revoked PAT). */
const SESSION_CHECK_MS = 30_000;
const LOGIN_TIMEOUT_MS = 15_000;

const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' };

function refuse(socket: Duplex, status: number, message: string): void {
  const body = `${JSON.stringify({ detail: { code: status === 404 ? 'not_found' : 'unauthenticated', message } })}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

const clamp = (n: unknown, lo: number, hi: number, dflt: number) =>
  typeof n === 'number' && Number.isInteger(n) ? Math.min(hi, Math.max(lo, n)) : dflt;

/** Attaches the terminal to the API's HTTP server (upgrade requests never reach Fastify). */
export function attachConsoleTerminal(
  server: Server,
  kernel: Kernel,
  vps: () => VpsService | undefined,
): void {
  const log = kernel.log.child({ component: 'console-terminal' });
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME,
    handleProtocols: (offered) => (offered.has(TERMINAL_PROTOCOL) ? TERMINAL_PROTOCOL : false),
  });
  // Upgraded sockets are no longer the HTTP server's: they end with it.
  server.on('close', () => {
    for (const client of wss.clients) client.terminate();
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (!TERMINAL_PATH.test(path)) return refuse(socket, 404, 'No such WebSocket endpoint.');
      const admitted = await admitTerminal(req, kernel.consoleSessions, new URL(kernel.baseUrl()).origin);
      if ('status' in admitted) return refuse(socket, admitted.status, admitted.message);
      const service = vps();
      if (!service) return refuse(socket, 404, 'Virtual servers are not served here.');
      // Another customer's server, or none: 404 before anything is upgraded.
      try {
        await service.get(admitted.customerId, admitted.vpsId);
      } catch (err) {
        if (err instanceof AppError && err.kind === 'not_found')
          return refuse(socket, 404, 'No such virtual server.');
        throw err;
      }
      const size = new URL(req.url ?? '/', 'http://x').searchParams;
      wss.handleUpgrade(req, socket, head, (ws) =>
        relay(ws, service, kernel, admitted, log, {
          cols: clamp(Number(size.get('cols')), 10, 500, 80),
          rows: clamp(Number(size.get('rows')), 4, 200, 24),
        }),
      );
    })().catch((err) => {
      log.error({ err }, 'terminal upgrade failed');
      socket.destroy();
    });
  });
}

async function relay(
  ws: WebSocket,
  vps: VpsService,
  kernel: Kernel,
  who: { customerId: string; sessionToken: string; vpsId: string },
  log: Logger,
  size: { cols: number; rows: number },
): Promise<void> {
  const close = (code: number, reason: string) => {
    if (ws.readyState === WebSocket.OPEN) ws.close(code, reason.slice(0, 120));
  };
  // Keys typed before the shell is up are kept for it; a page gone meanwhile ends it all.
  const early: Buffer[] = [];
  const keep = (data: unknown, isBinary: boolean) => {
    if (isBinary) early.push(Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]));
  };
  ws.on('message', keep);
  const keys = sshUtils.generateKeyPairSync('ed25519');
  let grant: Awaited<ReturnType<VpsService['grantTerminalLogin']>>;
  try {
    grant = await vps.grantTerminalLogin(who.customerId, who.vpsId, keys.public);
  } catch (err) {
    if (err instanceof AppError) {
      const status = { not_found: 404, conflict: 409, unavailable: 503 }[err.kind as string] ?? 500;
      return close(4000 + status, err.message);
    }
    log.error({ err, vps: who.vpsId }, 'terminal: adding the login key failed');
    return close(1011, 'The server could not take the terminal’s key.');
  }
  const revoke = () =>
    grant.revoke().catch((err) => log.warn({ err, vps: who.vpsId }, 'terminal: removing the key failed'));
  ws.off('message', keep);
  if (ws.readyState !== WebSocket.OPEN) return void revoke();
  const ssh = new SshClient();
  let channel: ClientChannel | null = null;
  const pending: Buffer[] = early;
  let size_ = size;
  const sessionCheck = setInterval(() => {
    kernel.consoleSessions.lookUp(who.sessionToken).then(
      (s) => {
        if (!s) close(4401, 'The console session has ended; sign in again.');
      },
      (err) => log.warn({ err }, 'terminal: checking the session failed'),
    );
  }, SESSION_CHECK_MS);
  sessionCheck.unref();
  const finish = () => {
    clearInterval(sessionCheck);
    ssh.end();
    void revoke();
  };
  ws.on('close', finish);
  ws.on('error', finish);
  ws.on('message', (data, isBinary) => {
    const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
    if (isBinary) {
      if (channel) channel.write(bytes);
      else pending.push(bytes);
      return;
    }
    let msg: { type?: string; cols?: unknown; rows?: unknown };
    try {
      msg = JSON.parse(bytes.toString('utf8'));
    } catch {
      return;
    }
    if (msg.type === 'resize') {
      size_ = { cols: clamp(msg.cols, 10, 500, size_.cols), rows: clamp(msg.rows, 4, 200, size_.rows) };
      channel?.setWindow(size_.rows, size_.cols, 0, 0);
    }
  });
  ssh.on('ready', () => {
    // Logged in: the key has done its work and leaves the server now, not at the end.
    void revoke();
    ssh.shell({ term: 'xterm-256color', cols: size_.cols, rows: size_.rows }, (err, stream) => {
      if (err) return close(1011, `The server refused a shell: ${err.message}`);
      channel = stream;
      for (const b of pending.splice(0)) stream.write(b);
      let paused = false;
      stream.on('data', (chunk: Buffer) => {
        if (ws.readyState !== WebSocket.OPEN) return;
        ws.send(chunk, { binary: true });
        if (!paused && ws.bufferedAmount > MAX_UNSENT) {
          paused = true;
          stream.pause();
          const wait = setInterval(() => {
            if (ws.readyState !== WebSocket.OPEN || ws.bufferedAmount < MAX_UNSENT / 2) {
              clearInterval(wait);
              paused = false;
              stream.resume();
            }
          }, 50);
        }
      });
      stream.stderr.on('data', (chunk: Buffer) => ws.readyState === WebSocket.OPEN && ws.send(chunk));
      stream.on('close', () => close(1000, 'The session ended.'));
    });
  });
  ssh.on('error', (err) => {
    log.warn({ err: err.message, vps: who.vpsId }, 'terminal: ssh connection failed');
    close(1011, `Could not reach the server’s sshd: ${err.message}`);
  });
  ssh.on('close', () => close(1000, 'The server closed the connection.'));
  ssh.connect({
    host: grant.host,
    port: grant.port,
    username: grant.user,
    privateKey: keys.private,
    readyTimeout: LOGIN_TIMEOUT_MS,
    keepaliveInterval: 30_000,
    // The address is the server's own link on this host, reached by Fjord alone; its host keys are
    // the customer's to change, so there is nothing fixed to pin them to.
    hostVerifier: () => true,
  });
}
