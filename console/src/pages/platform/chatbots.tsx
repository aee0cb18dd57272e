import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { Link, navigate, navigateIfStillHere } from '../../router.js';
import { DataTable, type Row } from '../../ui/table.js';
import { ConfirmDelete, Facts, Failure, Panel, QueryView } from '../../ui/widgets.js';
import { Field, readEvents, State, subPath } from './shared.js';

export function ChatbotsPage({ path }: { path: string }) {
  const [id] = subPath(path);
  return id ? <Bot id={id} /> : <Bots />;
}

function Bots() {
  const api = useApi();
  const queries = useQueryClient();
  const bots = useQuery({
    queryKey: ['chatbots', 'list'],
    queryFn: async () => (await must(api.GET('/v1/chatbot/bots'))).bots,
  });
  const [name, setName] = useState('');
  const [prompt, setPrompt] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <section>
      <h1>Chatbots</h1>
      <p class="intro">
        Chatbots answering from your knowledge sources, citing where each answer comes from.
      </p>
      <Panel title="Create a bot" open={bots.data?.length === 0}>
        <form
          class="form"
          onSubmit={async (e) => {
            e.preventDefault();
            setError(null);
            const go = navigateIfStillHere();
            try {
              const bot = await must(
                api.POST('/v1/chatbot/bots', {
                  body: { name, ...(prompt.trim() ? { system_prompt: prompt } : {}) },
                }),
              );
              await queries.invalidateQueries({ queryKey: ['chatbots'] });
              go(`/chatbots/${bot.slug}`);
            } catch (err) {
              setError(err);
            }
          }}
        >
          <Field id="bot-name" label="Name">
            <input id="bot-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field id="bot-prompt" label="System prompt">
            <textarea
              id="bot-prompt"
              rows={3}
              value={prompt}
              onInput={(e) => setPrompt(e.currentTarget.value)}
            />
          </Field>
          <div class="actions">
            <button type="submit">Create bot</button>
          </div>
          {error ? <Failure error={error} /> : null}
        </form>
      </Panel>
      <QueryView query={bots} what="bots">
        {(data) => (
          <DataTable
            label="Bots"
            rows={(data ?? []) as Row[]}
            href={(r) => `/chatbots/${r['slug']}`}
            columns={[
              { key: 'name', label: 'Name' },
              { key: 'status', label: 'Status', render: (r) => <State value={String(r['status'])} /> },
              { key: 'model', label: 'Model' },
              {
                key: 'sources_ready',
                label: 'Sources ready',
                render: (r) => `${r['sources_ready']} of ${r['sources']}`,
              },
            ]}
            empty="No chatbots yet. Create one above, then give it knowledge to answer from."
          />
        )}
      </QueryView>
    </section>
  );
}

function Bot({ id }: { id: string }) {
  const api = useApi();
  const bot = useQuery({
    queryKey: ['chatbots', 'bot', id],
    queryFn: () => must(api.GET('/v1/chatbot/bots/{bot_id}', { params: { path: { bot_id: id } } })),
  });
  return (
    <section>
      <p class="crumbs">
        <Link href="/chatbots">Chatbots</Link> /
      </p>
      <h1>Chatbots: {bot.data?.name ?? id}</h1>
      <QueryView query={bot} what="the bot">
        {(b) => (
          <>
            <Facts
              data={b as unknown as Row}
              keys={['slug', 'status', 'model', 'simulated', 'language', 'temperature', 'citation_style']}
            />
            <div class="two">
              <div>
                <Sources bot={b.slug} />
              </div>
              <div>
                <Chat bot={b.slug} />
              </div>
            </div>
            <h2>Delete</h2>
            <ConfirmDelete
              name={b.name}
              what="bot"
              onConfirm={async () => {
                await must(api.DELETE('/v1/chatbot/bots/{bot_id}', { params: { path: { bot_id: id } } }));
                navigate('/chatbots');
              }}
            />
          </>
        )}
      </QueryView>
    </section>
  );
}

/** Knowledge sources with their indexing state, kept current while any is still being indexed. */
function Sources({ bot }: { bot: string }) {
  const api = useApi();
  const queries = useQueryClient();
  const sources = useQuery({
    queryKey: ['chatbots', 'sources', bot],
    queryFn: async () =>
      (await must(api.GET('/v1/chatbot/bots/{bot_id}/sources', { params: { path: { bot_id: bot } } })))
        .sources,
    refetchInterval: (q) =>
      (q.state.data ?? []).some((s) => /pending|indexing/.test(s.status)) ? 1500 : false,
  });
  const [kind, setKind] = useState<'text' | 'url' | 'file'>('text');
  const [title, setTitle] = useState('');
  const [text, setText] = useState('');
  const [url, setUrl] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [error, setError] = useState<unknown>(null);
  return (
    <>
      <h2>Knowledge</h2>
      <QueryView query={sources} what="sources">
        {(data) => (
          <DataTable
            name="sources"
            label="Knowledge sources"
            rows={(data ?? []) as Row[]}
            columns={[
              { key: 'title', label: 'Title' },
              { key: 'kind', label: 'Kind' },
              {
                key: 'status',
                label: 'Indexing',
                render: (r) => (
                  <>
                    <State value={String(r['status'])} /> {r['error'] ? String(r['error']) : ''}
                  </>
                ),
              },
              { key: 'chunks', label: 'Passages' },
            ]}
            actions={(r) => (
              <button
                type="button"
                onClick={async () => {
                  await must(
                    api.POST('/v1/chatbot/bots/{bot_id}/sources/{source_id}/reindex', {
                      params: { path: { bot_id: bot, source_id: String(r['id']) } },
                    }),
                  );
                  await queries.invalidateQueries({ queryKey: ['chatbots', 'sources', bot] });
                }}
              >
                Re-index {String(r['title'])}
              </button>
            )}
            empty="No knowledge yet. Add a text, a web page or a file below."
          />
        )}
      </QueryView>
      <Panel title="Add knowledge" open={sources.data?.length === 0}>
        <form
          class="form"
          onSubmit={async (e) => {
            e.preventDefault();
            setError(null);
            try {
              // A file is read here and sent as text: the API indexes text, Markdown and HTML.
              const body =
                kind === 'url'
                  ? { kind: 'url' as const, url, ...(title ? { title } : {}) }
                  : kind === 'file' && file
                    ? { kind: 'text' as const, title: title || file.name, text: await file.text() }
                    : { kind: 'text' as const, title, text };
              await must(
                api.POST('/v1/chatbot/bots/{bot_id}/sources', { params: { path: { bot_id: bot } }, body }),
              );
              setTitle('');
              setText('');
              setUrl('');
              await queries.invalidateQueries({ queryKey: ['chatbots'] });
            } catch (err) {
              setError(err);
            }
          }}
        >
          <Field id="source-kind" label="Kind">
            <select
              id="source-kind"
              value={kind}
              onChange={(e) => setKind(e.currentTarget.value as typeof kind)}
            >
              <option value="text">Text</option>
              <option value="url">Web page (URL)</option>
              <option value="file">File (text, Markdown, HTML)</option>
            </select>
          </Field>
          <Field id="source-title" label={kind === 'text' ? 'Title' : 'Title (optional)'}>
            <input
              id="source-title"
              required={kind === 'text'}
              value={title}
              onInput={(e) => setTitle(e.currentTarget.value)}
            />
          </Field>
          {kind === 'text' && (
            <Field id="source-text" label="Text">
              <textarea
                id="source-text"
                required
                rows={5}
                value={text}
                onInput={(e) => setText(e.currentTarget.value)}
              />
            </Field>
          )}
          {kind === 'url' && (
            <Field id="source-url" label="Address">
              <input
                id="source-url"
                type="url"
                required
                value={url}
                onInput={(e) => setUrl(e.currentTarget.value)}
              />
            </Field>
          )}
          {kind === 'file' && (
            <Field id="source-file" label="File">
              <input
                id="source-file"
                type="file"
                required
                accept=".txt,.md,.html,.htm,text/*"
                onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
              />
            </Field>
          )}
          <div class="actions">
            <button type="submit">Add source</button>
          </div>
          {error ? <Failure error={error} /> : null}
        </form>
      </Panel>
    </>
  );
}

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
function Chat({ bot }: { bot: string }) {
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
