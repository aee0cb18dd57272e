import { useState } from 'preact/hooks';
import { useApi } from '../../context.js';
import { Field, readEvents } from './shared.js';

// A bot's chat pane: questions asked, answers streamed in with the sources they cite.

interface Turn {
  question: string;
  answer: string;
  citations: { title: string; url: string | null; snippet?: string }[];
  error?: string;
  done: boolean;
}

/**
 * A chat with the bot: the answer streams in (meta with the citations first, then tokens), and
 * the conversation is one session until "New session".
 */
export function Chat({ bot }: { bot: string }) {
  const api = useApi();
  const [session, setSession] = useState<string | null>(null);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const update = (fn: (t: Turn) => Turn) => setTurns((ts) => [...ts.slice(0, -1), fn(ts[ts.length - 1]!)]);
  return (
    <>
      <h2>Chat</h2>
      <p class="meter">{session ? `Session ${session}` : 'A new session starts with your first message.'}</p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard */}
      <div class="chat" role="log" aria-label="Chat" tabIndex={0}>
        {turns.length === 0 && <p class="help">Ask something your knowledge answers.</p>}
        {turns.map((t, i) => (
          <div key={i}>
            <p class="you">You: {t.question}</p>
            <p data-testid="bot-answer">{t.answer}</p>
            {t.error && (
              <p class="error" role="alert">
                {t.error}
              </p>
            )}
            {t.citations.length > 0 && (
              <ol class="citations" aria-label="Sources of this answer">
                {t.citations.map((c, j) => (
                  <li key={j}>
                    {c.url && /^https?:/.test(c.url) ? (
                      <a href={c.url} rel="noreferrer noopener" target="_blank">
                        {c.title}
                      </a>
                    ) : (
                      c.title
                    )}
                  </li>
                ))}
              </ol>
            )}
          </div>
        ))}
      </div>
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!message.trim() || busy) return;
          setBusy(true);
          const question = message;
          setMessage('');
          setTurns((ts) => [...ts, { question, answer: '', citations: [], done: false }]);
          try {
            const { response } = await api.POST('/v1/chatbot/api/chat/stream', {
              body: { bot_id: bot, message: question, ...(session ? { session_id: session } : {}) },
              parseAs: 'stream',
            });
            if (!response.ok) {
              const body = await response.json().catch(() => ({}));
              throw new Error(body?.detail?.message ?? `The bot could not answer (${response.status}).`);
            }
            await readEvents(response, (data) => {
              const ev = JSON.parse(data) as {
                type: string;
                content?: string;
                data?: { session_id: string; citations: Turn['citations'] };
              };
              if (ev.type === 'meta' && ev.data) {
                setSession(ev.data.session_id);
                update((t) => ({ ...t, citations: ev.data!.citations }));
              } else if (ev.type === 'token')
                update((t) => ({ ...t, answer: t.answer + (ev.content ?? '') }));
              else if (ev.type === 'error')
                update((t) => ({ ...t, error: ev.content ?? 'The answer broke off.' }));
            });
            update((t) => ({ ...t, done: true }));
          } catch (err) {
            update((t) => ({ ...t, done: true, error: (err as Error).message }));
          } finally {
            setBusy(false);
          }
        }}
      >
        <Field id="chat-message" label="Message to the bot">
          <textarea
            id="chat-message"
            rows={2}
            value={message}
            onInput={(e) => setMessage(e.currentTarget.value)}
          />
        </Field>
        <div class="actions">
          <button type="submit" disabled={busy || !message.trim()}>
            Ask
          </button>
          <button
            type="button"
            disabled={busy}
            onClick={() => {
              setSession(null);
              setTurns([]);
            }}
          >
            New session
          </button>
        </div>
      </form>
    </>
  );
}
