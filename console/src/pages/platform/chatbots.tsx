import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { Link, navigate, navigateIfStillHere } from '../../router.js';
import { DataTable, type Row } from '../../ui/table.js';
import { ConfirmDelete, Facts, Failure, Panel, QueryView } from '../../ui/widgets.js';
import { Chat } from './chatbot-chat.js';
import { Field, State, subPath } from './shared.js';

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
