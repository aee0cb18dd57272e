import { useQueries, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { DataTable, type Row } from '../../ui/table.js';
import { Failure, Panel } from '../../ui/widgets.js';
import { Field, State } from './shared.js';

/** Sessions started or looked up here, by id (the API has no list of sessions): kept for this tab. */
const KEY = 'fjord.verify.sessions';
const remembered = (): string[] => JSON.parse(sessionStorage.getItem(KEY) ?? '[]');

export function VerifyPage() {
  const api = useApi();
  const [ids, setIds] = useState<string[]>(remembered);
  const queries = useQueryClient();
  const remember = (id: string) => {
    void queries.invalidateQueries({ queryKey: ['verify', id] });
    const next = [id, ...ids.filter((i) => i !== id)].slice(0, 50);
    sessionStorage.setItem(KEY, JSON.stringify(next));
    setIds(next);
  };
  const sessions = useQueries({
    queries: ids.map((id) => ({
      queryKey: ['verify', id],
      queryFn: () =>
        must(api.GET('/v1/verify/status/{session_id}', { params: { path: { session_id: id } } })),
      refetchInterval: 3000,
    })),
  });
  return (
    <section>
      <h1>Verification</h1>
      <p class="intro">
        One-time codes by SMS, voice or e-mail. Your application starts and checks sessions through the API (
        <code>POST /v1/verify/start</code>, <code>/v1/verify/check</code>); try them here.
      </p>
      <div class="two">
        <Start onStarted={remember} />
        <Check onChecked={remember} />
      </div>
      <h2>Sessions</h2>
      <Lookup onFound={remember} />
      <DataTable
        label="Verification sessions"
        rows={sessions.map((s) => s.data).filter(Boolean) as unknown as Row[]}
        columns={[
          { key: 'session_id', label: 'Session' },
          { key: 'channel', label: 'Channel' },
          { key: 'recipient', label: 'Recipient' },
          { key: 'status', label: 'Status', render: (r) => <State value={String(r['status'])} /> },
          {
            key: 'attempt_count',
            label: 'Attempts',
            render: (r) => `${r['attempt_count']} of ${r['max_attempts']}`,
          },
          { key: 'error_message', label: 'Problem' },
        ]}
        empty="No sessions yet here. Start one above, or look one up by its id."
      />
    </section>
  );
}

function Start({ onStarted }: { onStarted(id: string): void }) {
  const api = useApi();
  const [channel, setChannel] = useState<'sms' | 'voice' | 'email'>('sms');
  const [recipient, setRecipient] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <Panel title="Start a verification" open>
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            onStarted(
              (await must(api.POST('/v1/verify/start', { body: { channel, recipient } }))).session_id,
            );
          } catch (err) {
            setError(err);
          }
        }}
      >
        <Field id="verify-channel" label="Channel">
          <select
            id="verify-channel"
            value={channel}
            onChange={(e) => setChannel(e.currentTarget.value as typeof channel)}
          >
            <option value="sms">SMS</option>
            <option value="voice">Voice call</option>
            <option value="email">E-mail</option>
          </select>
        </Field>
        <Field id="verify-recipient" label={channel === 'email' ? 'E-mail address' : 'Phone number (E.164)'}>
          <input
            id="verify-recipient"
            required
            value={recipient}
            onInput={(e) => setRecipient(e.currentTarget.value)}
          />
        </Field>
        <div class="actions">
          <button type="submit">Send code</button>
        </div>
        {error ? <Failure error={error} /> : null}
      </form>
    </Panel>
  );
}

function Check({ onChecked }: { onChecked(id: string): void }) {
  const api = useApi();
  const [session, setSession] = useState('');
  const [code, setCode] = useState('');
  const [result, setResult] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <Panel title="Check a code" open>
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            const r = await must(api.POST('/v1/verify/check', { body: { session_id: session, code } }));
            setResult(
              r.status === 'verified'
                ? 'The code is right: verified.'
                : `Not verified (${r.error ?? r.status}); ${r.attempts_remaining} attempts left.`,
            );
            onChecked(session);
          } catch (err) {
            setError(err);
          }
        }}
      >
        <Field id="check-session" label="Session id">
          <input
            id="check-session"
            required
            value={session}
            onInput={(e) => setSession(e.currentTarget.value)}
          />
        </Field>
        <Field id="check-code" label="Code">
          <input
            id="check-code"
            required
            value={code}
            autoComplete="one-time-code"
            onInput={(e) => setCode(e.currentTarget.value)}
          />
        </Field>
        <div class="actions">
          <button type="submit">Check code</button>
        </div>
        <p role="status">{result}</p>
        {error ? <Failure error={error} /> : null}
      </form>
    </Panel>
  );
}

function Lookup({ onFound }: { onFound(id: string): void }) {
  const api = useApi();
  const [id, setId] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="form"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        try {
          await must(
            api.GET('/v1/verify/status/{session_id}', { params: { path: { session_id: id.trim() } } }),
          );
          onFound(id.trim());
        } catch (err) {
          setError(err);
        }
      }}
    >
      <Field id="verify-lookup" label="Look up a session by id">
        <input id="verify-lookup" required value={id} onInput={(e) => setId(e.currentTarget.value)} />
      </Field>
      <div class="actions">
        <button type="submit">Look up</button>
      </div>
      {error ? <Failure error={error} /> : null}
    </form>
  );
}
