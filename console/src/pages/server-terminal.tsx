import '@xterm/xterm/css/xterm.css';
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useConsole } from '../context.js';
import { adoptInlineStyles } from './adopted-styles.js';

/**
 * The server's web terminal: xterm.js over a WebSocket to Fjord, which relays it to the server's
 * sshd (see docs/console.md). The CSRF token goes as a subprotocol, since a browser's WebSocket
 * cannot send headers; the cookie goes by itself. Sized to its box, resized with the window;
 * a closed connection says why and offers to reconnect.
 */
export function ServerTerminal({ id }: { id: string }) {
  const { session } = useConsole();
  const box = useRef<HTMLDivElement>(null);
  const [attempt, setAttempt] = useState(0);
  const [state, setState] = useState<{ open: boolean; message: string }>({
    open: false,
    message: 'Connecting…',
  });

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    adoptInlineStyles();
    const term = new Terminal({ cursorBlink: true, fontSize: 14, lineHeight: 1.15, scrollback: 5000 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el);
    fit.fit();
    // Opened below the fold, it would stay blank: xterm.js draws nothing while it is off screen.
    el.scrollIntoView({ block: 'nearest' });
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${scheme}//${location.host}/console/vps/${encodeURIComponent(id)}/terminal?cols=${term.cols}&rows=${term.rows}`;
    const ws = new WebSocket(url, ['fjord-terminal', `fjord-csrf.${session.csrf_token}`]);
    ws.binaryType = 'arraybuffer';
    const encoder = new TextEncoder();
    setState({ open: false, message: 'Connecting…' });
    ws.onopen = () => {
      setState({ open: true, message: 'Connected.' });
      term.focus();
    };
    ws.onmessage = (e) => {
      term.write(typeof e.data === 'string' ? e.data : new Uint8Array(e.data as ArrayBuffer));
    };
    ws.onclose = (e) => {
      const why =
        e.reason ||
        (e.code === 1006
          ? 'The connection was refused or lost (is the server yours, and are you signed in?).'
          : '');
      setState({ open: false, message: `Disconnected. ${why}`.trim() });
    };
    const input = term.onData((d) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(d));
    });
    const resized = term.onResize(({ cols, rows }) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'resize', cols, rows }));
    });
    const refit = () => fit.fit();
    const watcher = new ResizeObserver(refit);
    watcher.observe(el);
    return () => {
      watcher.disconnect();
      input.dispose();
      resized.dispose();
      ws.close();
      term.dispose();
    };
  }, [id, attempt, session.csrf_token]);

  return (
    <div class="terminal">
      <div class="terminal-screen" ref={box} role="application" aria-label="Server terminal" />
      <div class="actions">
        <p role="status" class="terminal-status">
          {state.message}
        </p>
        <button type="button" onClick={() => setAttempt((n) => n + 1)}>
          Reconnect
        </button>
      </div>
    </div>
  );
}
