import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
// The server's own segmentation: the count shown as you type is the count the API charges.
import { segment } from '../../../../src/areas/sms/segments.js';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { DataTable, type Row } from '../../ui/table.js';
import { Failure, Panel, QueryView } from '../../ui/widgets.js';
import { Field, fmt, State } from './shared.js';

const PENDING = /QUEUED|SCHEDULED|SENT|ENROUTE|ACCEPTED/;

export function SmsPage() {
  return (
    <section>
      <h1>SMS</h1>
      <p class="intro">Text messages sent and received, with their delivery states.</p>
      <Send />
      <Log />
      <SenderProfiles />
      <Keywords />
    </section>
  );
}

function Send() {
  const api = useApi();
  const queries = useQueryClient();
  const usage = useQuery({ queryKey: ['sms', 'usage'], queryFn: () => must(api.GET('/v1/sms/usage', {})) });
  const profiles = useQuery({
    queryKey: ['sms', 'profiles'],
    queryFn: () => must(api.GET('/v1/sms/sender-profiles')),
  });
  const [to, setTo] = useState('');
  const [message, setMessage] = useState('');
  const [profile, setProfile] = useState('');
  const [sent, setSent] = useState('');
  const [error, setError] = useState<unknown>(null);
  const recipients = to
    .split(/[,;\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
  const seg = segment(message);
  const parts = message ? seg.parts.length : 0;
  const price = usage.data ? parts * Math.max(1, recipients.length) * usage.data.price_per_unit : null;
  return (
    <Panel title="Send a message" open>
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            const r = await must(
              api.POST('/v1/sms/send', {
                body: { to: recipients, message, ...(profile ? { sender_profile_id: profile } : {}) },
              }),
            );
            setSent(
              `Sent to ${r.to.length} recipient${r.to.length === 1 ? '' : 's'}: ${r.units_estimate} units.`,
            );
            setMessage('');
            await queries.invalidateQueries({ queryKey: ['sms'] });
          } catch (err) {
            setError(err);
          }
        }}
      >
        <Field id="sms-to" label="To (E.164 numbers, comma-separated)">
          <input id="sms-to" required value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </Field>
        <Field id="sms-profile" label="Sender">
          <select id="sms-profile" value={profile} onChange={(e) => setProfile(e.currentTarget.value)}>
            <option value="">Default sender</option>
            {(profiles.data ?? []).map((p) => (
              <option key={p.id} value={p.id}>
                {p.name} ({p.sender_id})
              </option>
            ))}
          </select>
        </Field>
        <Field id="sms-message" label="Message">
          <textarea
            id="sms-message"
            required
            rows={4}
            value={message}
            onInput={(e) => setMessage(e.currentTarget.value)}
          />
        </Field>
        <p class="meter" aria-live="polite" data-testid="sms-meter">
          {[...message].length} characters · {seg.encoding === 'GSM7' ? 'GSM-7' : 'UCS-2 (Unicode)'} · {parts}{' '}
          segment
          {parts === 1 ? '' : 's'}
          {recipients.length > 1 && ` × ${recipients.length} recipients`}
          {price !== null && usage.data && ` · ${fmt(price)} ${usage.data.currency}`}
        </p>
        <div class="actions">
          <button type="submit">Send message</button>
        </div>
        <p role="status">{sent}</p>
        {error ? <Failure error={error} /> : null}
      </form>
    </Panel>
  );
}

/** The message log, kept current while messages are on their way to a final delivery state. */
function Log() {
  const api = useApi();
  const messages = useQuery({
    queryKey: ['sms', 'messages'],
    queryFn: async () =>
      (await must(api.GET('/v1/sms/messages', { params: { query: { page_size: 100 } } }))).messages,
    refetchInterval: (q) => ((q.state.data ?? []).some((m) => PENDING.test(String(m.status))) ? 2000 : false),
  });
  return (
    <>
      <h2>Messages</h2>
      <QueryView query={messages} what="messages">
        {(data) => (
          <DataTable
            name="messages"
            label="Messages"
            rows={(data ?? []) as unknown as Row[]}
            columns={[
              { key: 'to_number', label: 'To' },
              { key: 'from_number', label: 'From' },
              { key: 'direction', label: 'Direction' },
              { key: 'status', label: 'Delivery', render: (r) => <State value={String(r['status'])} /> },
              { key: 'units_count', label: 'Segments' },
              { key: 'body', label: 'Text' },
              {
                key: 'created_at',
                label: 'Created',
                render: (r) => (r['created_at'] ? new Date(String(r['created_at'])).toLocaleString() : '—'),
              },
            ]}
            empty="No messages yet. Send one above."
          />
        )}
      </QueryView>
    </>
  );
}

function SenderProfiles() {
  const api = useApi();
  const queries = useQueryClient();
  const profiles = useQuery({
    queryKey: ['sms', 'profiles'],
    queryFn: () => must(api.GET('/v1/sms/sender-profiles')),
  });
  const [name, setName] = useState('');
  const [sender, setSender] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <>
      <h2>Sender profiles</h2>
      <DataTable
        name="profiles"
        label="Sender profiles"
        rows={(profiles.data ?? []) as unknown as Row[]}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'sender_id', label: 'Sender' },
          {
            key: 'approval_status',
            label: 'Approval',
            render: (r) => <State value={String(r['approval_status'])} />,
          },
          { key: 'is_default', label: 'Default' },
          { key: 'allow_reply', label: 'Replies' },
        ]}
        empty="No sender profiles yet. Add one below: messages are sent from it."
      />
      <Panel title="Add a sender profile">
        <form
          class="form"
          onSubmit={async (e) => {
            e.preventDefault();
            setError(null);
            try {
              await must(api.POST('/v1/sms/sender-profiles', { body: { name, sender_id: sender } }));
              await queries.invalidateQueries({ queryKey: ['sms', 'profiles'] });
            } catch (err) {
              setError(err);
            }
          }}
        >
          <Field id="profile-name" label="Profile name">
            <input id="profile-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field id="profile-sender" label="Sender (a number or up to 11 letters)">
            <input
              id="profile-sender"
              required
              value={sender}
              onInput={(e) => setSender(e.currentTarget.value)}
            />
          </Field>
          <div class="actions">
            <button type="submit">Add profile</button>
          </div>
          {error ? <Failure error={error} /> : null}
        </form>
      </Panel>
    </>
  );
}

function Keywords() {
  const api = useApi();
  const queries = useQueryClient();
  const keywords = useQuery({
    queryKey: ['sms', 'keywords'],
    queryFn: () => must(api.GET('/v1/sms/keywords')),
  });
  const [keyword, setKeyword] = useState('');
  const [reply, setReply] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <>
      <h2>Keywords</h2>
      <QueryView query={keywords} what="keywords">
        {(data) => (
          <DataTable
            name="keywords"
            label="Keywords"
            rows={(data ?? []) as unknown as Row[]}
            columns={[
              { key: 'keyword', label: 'Keyword' },
              { key: 'is_active', label: 'Active' },
              { key: 'auto_reply_message', label: 'Auto-reply' },
              { key: 'messages_received', label: 'Received' },
            ]}
            empty="No keywords. Reserve one so replies starting with it reach you."
          />
        )}
      </QueryView>
      <Panel title="Reserve a keyword">
        <form
          class="form"
          onSubmit={async (e) => {
            e.preventDefault();
            setError(null);
            try {
              await must(
                api.POST('/v1/sms/keywords', {
                  body: {
                    keyword,
                    ...(reply ? { auto_reply_message: reply, auto_reply_enabled: true } : {}),
                  },
                }),
              );
              await queries.invalidateQueries({ queryKey: ['sms', 'keywords'] });
            } catch (err) {
              setError(err);
            }
          }}
        >
          <Field id="keyword-word" label="Keyword">
            <input
              id="keyword-word"
              required
              value={keyword}
              onInput={(e) => setKeyword(e.currentTarget.value)}
            />
          </Field>
          <Field id="keyword-reply" label="Auto-reply (optional)">
            <input id="keyword-reply" value={reply} onInput={(e) => setReply(e.currentTarget.value)} />
          </Field>
          <div class="actions">
            <button type="submit">Reserve keyword</button>
          </div>
          {error ? <Failure error={error} /> : null}
        </form>
      </Panel>
    </>
  );
}
