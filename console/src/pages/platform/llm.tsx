import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { DataTable, type Row } from '../../ui/table.js';
import { Failure, Panel, pending, QueryView } from '../../ui/widgets.js';
import { BarChart, Field, fmt, readEvents } from './shared.js';

const CURRENCIES = ['NOK', 'SEK', 'DKK', 'EUR', 'USD'] as const;
type Currency = (typeof CURRENCIES)[number];
const today = () => new Date().toISOString().slice(0, 10);

export function LlmPage() {
  const [currency, setCurrency] = useState<Currency>('NOK');
  return (
    <section>
      <h1>Language models</h1>
      <p class="intro">
        The models behind Fjord’s OpenAI-compatible gateway (<code>/v1/chat/completions</code>). Try one here;
        each reply shows its tokens and what it cost.
      </p>
      <Field id="llm-currency" label="Currency">
        <select
          id="llm-currency"
          value={currency}
          onChange={(e) => setCurrency(e.currentTarget.value as Currency)}
        >
          {CURRENCIES.map((c) => (
            <option key={c}>{c}</option>
          ))}
        </select>
      </Field>
      <Playground currency={currency} />
      <Usage currency={currency} />
      <Budgets />
    </section>
  );
}

interface Reply {
  prompt: string;
  text: string;
  done: boolean;
  tokens?: { prompt: number; completion: number };
  cost?: number;
  error?: string;
}

function useUsage() {
  const api = useApi();
  return useQuery({
    queryKey: ['llm', 'usage'],
    queryFn: async () => (await must(api.GET('/v1/llm/usage', {}))).data,
  });
}

/**
 * The playground: an alias, a system prompt and the sampling parameters; the answer streams in
 * token by token (the gateway's Server-Sent Events). Tokens come from the stream's usage chunk;
 * the cost is what the reply added to the model's usage today.
 */
function Playground({ currency }: { currency: Currency }) {
  const api = useApi();
  const queries = useQueryClient();
  const models = useQuery({
    queryKey: ['llm', 'models'],
    queryFn: async () => (await must(api.GET('/v1/llm/models'))).data,
  });
  const [model, setModel] = useState('');
  const [system, setSystem] = useState('You are a helpful assistant.');
  const [prompt, setPrompt] = useState('');
  const [temperature, setTemperature] = useState(0.7);
  const [maxTokens, setMaxTokens] = useState(512);
  const [replies, setReplies] = useState<Reply[]>([]);
  const [busy, setBusy] = useState(false);
  const chosen = model || models.data?.[0]?.id || '';
  const costToday = async (m: string) => {
    const u = await must(api.GET('/v1/llm/usage', { params: { query: { from: today(), to: today() } } }));
    return u.data.find((d) => d.model === m)?.cost[currency] ?? 0;
  };
  const update = (fn: (r: Reply) => Reply) =>
    setReplies((rs) => [...rs.slice(0, -1), fn(rs[rs.length - 1]!)]);
  const wait = pending(models, 'models');
  if (wait) return wait;
  if (!models.data?.length) return <p class="empty">No models are configured on this install.</p>;
  return (
    <>
      <h2>Playground</h2>
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!prompt.trim() || busy) return;
          setBusy(true);
          const asked = prompt;
          setPrompt('');
          setReplies((rs) => [...rs, { prompt: asked, text: '', done: false }]);
          try {
            const before = await costToday(chosen);
            const history = replies
              .filter((r) => r.done && !r.error)
              .flatMap((r) => [
                { role: 'user', content: r.prompt },
                { role: 'assistant', content: r.text },
              ]);
            const { response } = await api.POST('/v1/llm/chat', {
              body: {
                model: chosen,
                stream: true,
                stream_options: { include_usage: true },
                temperature,
                max_tokens: maxTokens,
                messages: [
                  ...(system.trim() ? [{ role: 'system', content: system }] : []),
                  ...history,
                  { role: 'user', content: asked },
                ],
              } as never,
              parseAs: 'stream',
            });
            if (!response.ok) {
              const body = await response.json().catch(() => ({}));
              throw new Error(
                body?.error?.message ?? body?.detail?.message ?? `The model refused (${response.status}).`,
              );
            }
            await readEvents(response, (data) => {
              if (data === '[DONE]') return;
              const chunk = JSON.parse(data) as {
                choices?: { delta?: { content?: string } }[];
                usage?: { prompt_tokens: number; completion_tokens: number };
                error?: { message: string };
              };
              const piece = chunk.choices?.[0]?.delta?.content;
              if (piece) update((r) => ({ ...r, text: r.text + piece }));
              if (chunk.usage)
                update((r) => ({
                  ...r,
                  tokens: { prompt: chunk.usage!.prompt_tokens, completion: chunk.usage!.completion_tokens },
                }));
              if (chunk.error) update((r) => ({ ...r, error: chunk.error!.message }));
            });
            const after = await costToday(chosen);
            update((r) => ({ ...r, done: true, cost: Math.max(0, after - before) }));
            await queries.invalidateQueries({ queryKey: ['llm', 'usage'] });
          } catch (err) {
            update((r) => ({ ...r, done: true, error: (err as Error).message }));
          } finally {
            setBusy(false);
          }
        }}
      >
        <div class="two">
          <div>
            <Field id="llm-model" label="Model">
              <select id="llm-model" value={chosen} onChange={(e) => setModel(e.currentTarget.value)}>
                {models.data.map((m) => (
                  <option key={m.id}>{m.id}</option>
                ))}
              </select>
            </Field>
            <Field id="llm-system" label="System prompt">
              <textarea
                id="llm-system"
                rows={3}
                value={system}
                onInput={(e) => setSystem(e.currentTarget.value)}
              />
            </Field>
            <Field id="llm-temperature" label={`Temperature (${temperature})`}>
              <input
                id="llm-temperature"
                type="range"
                min="0"
                max="2"
                step="0.1"
                value={temperature}
                onInput={(e) => setTemperature(Number(e.currentTarget.value))}
              />
            </Field>
            <Field id="llm-max" label="Maximum tokens">
              <input
                id="llm-max"
                type="number"
                min="1"
                max="32768"
                value={maxTokens}
                onInput={(e) => setMaxTokens(Number(e.currentTarget.value))}
              />
            </Field>
          </div>
          <div>
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard */}
            <div class="chat" role="log" aria-label="Conversation" tabIndex={0}>
              {replies.length === 0 && <p class="help">The answers appear here as they are written.</p>}
              {replies.map((r, i) => (
                <div key={i}>
                  <p class="you">You: {r.prompt}</p>
                  <p data-testid="answer">{r.text}</p>
                  {r.error && (
                    <p class="error" role="alert">
                      {r.error}
                    </p>
                  )}
                  {r.done && r.tokens && (
                    <p class="meter">
                      {r.tokens.prompt} prompt + {r.tokens.completion} completion tokens
                      {r.cost !== undefined && ` · ${fmt(r.cost)} ${currency}`}
                    </p>
                  )}
                </div>
              ))}
            </div>
            <Field id="llm-prompt" label="Message">
              <textarea
                id="llm-prompt"
                rows={3}
                value={prompt}
                onInput={(e) => setPrompt(e.currentTarget.value)}
              />
            </Field>
            <div class="actions">
              <button type="submit" disabled={busy || !prompt.trim()}>
                {busy ? 'Answering…' : 'Send'}
              </button>
              <button type="button" onClick={() => setReplies([])} disabled={busy}>
                Clear
              </button>
            </div>
          </div>
        </div>
      </form>
    </>
  );
}

function Usage({ currency }: { currency: Currency }) {
  const usage = useUsage();
  const rows = usage.data ?? [];
  return (
    <>
      <h2>This month’s usage per model</h2>
      <QueryView query={usage} what="usage">
        {() => (
          <>
            <BarChart
              title="Tokens this month"
              unit="tokens"
              bars={rows.map((r) => ({ label: r.model, value: r.total_tokens }))}
            />
            <BarChart
              title="Cost this month"
              unit={currency}
              bars={rows.map((r) => ({ label: r.model, value: r.cost[currency] }))}
            />
          </>
        )}
      </QueryView>
    </>
  );
}

function Budgets() {
  const api = useApi();
  const queries = useQueryClient();
  const budgets = useQuery({
    queryKey: ['llm', 'budgets'],
    queryFn: async () => (await must(api.GET('/v1/llm/budgets'))).budgets,
  });
  const keys = useQuery({
    queryKey: ['llm', 'keys'],
    queryFn: async () => (await must(api.GET('/v1/account/api-keys'))) as Row[],
  });
  const [key, setKey] = useState('');
  const [limit, setLimit] = useState(100);
  const [currency, setCurrency] = useState<Currency>('NOK');
  const [error, setError] = useState<unknown>(null);
  const keyList = Array.isArray(keys.data) ? keys.data : [];
  return (
    <>
      <h2>Budgets</h2>
      <p>A key that has spent its monthly budget gets 429 until the month ends.</p>
      <QueryView query={budgets} what="budgets">
        {(data) => (
          <DataTable
            name="budgets"
            label="Budgets"
            rows={(data ?? []) as Row[]}
            columns={[
              { key: 'key_id', label: 'Key' },
              { key: 'monthly_limit', label: 'Monthly limit' },
              { key: 'spent_this_month', label: 'Spent this month' },
              { key: 'currency', label: 'Currency' },
            ]}
            empty="No budgets. Give a key one below."
            actions={(r) => (
              <button
                type="button"
                onClick={async () => {
                  await must(
                    api.DELETE('/v1/llm/budgets/{key_id}', {
                      params: { path: { key_id: String(r['key_id']) } },
                    }),
                  );
                  await queries.invalidateQueries({ queryKey: ['llm', 'budgets'] });
                }}
              >
                Remove budget
              </button>
            )}
          />
        )}
      </QueryView>
      <Panel title="Set a budget">
        <form
          class="form"
          onSubmit={async (e) => {
            e.preventDefault();
            setError(null);
            try {
              await must(
                api.PUT('/v1/llm/budgets/{key_id}', {
                  params: { path: { key_id: key || String(keyList[0]?.['id'] ?? '') } },
                  body: { monthly_limit: limit, currency },
                }),
              );
              await queries.invalidateQueries({ queryKey: ['llm', 'budgets'] });
            } catch (err) {
              setError(err);
            }
          }}
        >
          <Field id="budget-key" label="Key">
            <select id="budget-key" value={key} onChange={(e) => setKey(e.currentTarget.value)}>
              {keyList.map((k) => (
                <option key={String(k['id'])} value={String(k['id'])}>
                  {String(k['description'] ?? k['name'] ?? k['id'])}
                </option>
              ))}
            </select>
          </Field>
          <Field id="budget-limit" label="Monthly limit">
            <input
              id="budget-limit"
              type="number"
              min="0"
              step="0.01"
              value={limit}
              onInput={(e) => setLimit(Number(e.currentTarget.value))}
            />
          </Field>
          <Field id="budget-currency" label="Budget currency">
            <select
              id="budget-currency"
              value={currency}
              onChange={(e) => setCurrency(e.currentTarget.value as Currency)}
            >
              {CURRENCIES.map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </Field>
          <div class="actions">
            <button type="submit">Set budget</button>
          </div>
          {error ? <Failure error={error} /> : null}
        </form>
      </Panel>
    </>
  );
}
