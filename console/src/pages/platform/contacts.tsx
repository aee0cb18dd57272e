import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { DataTable, type Row } from '../../ui/table.js';
import { Failure, Panel, QueryView } from '../../ui/widgets.js';
import { saveFile } from '../sections.js';
import { Field } from './shared.js';

const COLUMNS = ['name', 'type', 'company_name', 'phone_number', 'email', 'tags', 'notes'] as const;

/** One CSV field: quoted when it holds a comma, quote or line break (RFC 4180). */
const csvField = (v: unknown): string => {
  const s = Array.isArray(v) ? v.join(';') : v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** RFC 4180 rows: quoted fields may hold commas, doubled quotes and line breaks. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      if (row.some((f) => f !== '')) rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  row.push(field);
  if (row.some((f) => f !== '')) rows.push(row);
  return rows;
}

export function ContactsPage() {
  const api = useApi();
  const contacts = useQuery({
    queryKey: ['contacts', 'list'],
    queryFn: async () =>
      (await must(api.GET('/v1/contacts', { params: { query: { per_page: 200 } } }))).contacts,
  });
  return (
    <section>
      <h1>Contacts</h1>
      <p class="intro">People and companies, for SMS and e-mail. Import and export them as CSV.</p>
      <Create />
      <Csv rows={(contacts.data ?? []) as unknown as Row[]} />
      <h2>Contacts</h2>
      <QueryView query={contacts} what="contacts">
        {(data) => (
          <DataTable
            name="contacts"
            label="Contacts"
            rows={(data ?? []) as unknown as Row[]}
            columns={[
              { key: 'name', label: 'Name' },
              { key: 'type', label: 'Type' },
              { key: 'phone_number', label: 'Phone' },
              { key: 'email', label: 'E-mail' },
              { key: 'tags', label: 'Tags', render: (r) => ((r['tags'] as string[]) ?? []).join(', ') },
            ]}
            empty="No contacts yet. Add one above or import a CSV file."
          />
        )}
      </QueryView>
      <Groups contacts={(contacts.data ?? []) as unknown as Row[]} />
    </section>
  );
}

function Create() {
  const api = useApi();
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [phone, setPhone] = useState('');
  const [email, setEmail] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <Panel title="Add a contact">
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            await must(
              api.POST('/v1/contacts', {
                body: { name, ...(phone ? { phone_number: phone } : {}), ...(email ? { email } : {}) },
              }),
            );
            setName('');
            setPhone('');
            setEmail('');
            await queries.invalidateQueries({ queryKey: ['contacts'] });
          } catch (err) {
            setError(err);
          }
        }}
      >
        <Field id="contact-name" label="Name">
          <input id="contact-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field id="contact-phone" label="Phone (E.164)">
          <input id="contact-phone" value={phone} onInput={(e) => setPhone(e.currentTarget.value)} />
        </Field>
        <Field id="contact-email" label="E-mail">
          <input
            id="contact-email"
            type="email"
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </Field>
        <div class="actions">
          <button type="submit">Add contact</button>
        </div>
        {error ? <Failure error={error} /> : null}
      </form>
    </Panel>
  );
}

/**
 * CSV import (a header row naming the columns; each row created through the API, problems
 * reported by line) and export of the list as shown.
 */
function Csv({ rows }: { rows: Row[] }) {
  const api = useApi();
  const queries = useQueryClient();
  const [report, setReport] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  return (
    <Panel title="Import or export CSV">
      <p class="help">
        Columns: {COLUMNS.join(', ')} (tags separated by semicolons). The first row names the columns.
      </p>
      <Field id="contacts-csv" label="Import a CSV file">
        <input
          id="contacts-csv"
          type="file"
          accept=".csv,text/csv"
          disabled={busy}
          onChange={async (e) => {
            const file = e.currentTarget.files?.[0];
            if (!file) return;
            setBusy(true);
            const [header, ...lines] = parseCsv(await file.text());
            const names = (header ?? []).map((h) => h.trim().toLowerCase());
            const out: string[] = [];
            let created = 0;
            for (const [i, line] of lines.entries()) {
              const body: Record<string, unknown> = {};
              names.forEach((n, j) => {
                const v = line[j]?.trim();
                if (!v || !(COLUMNS as readonly string[]).includes(n)) return;
                body[n] =
                  n === 'tags'
                    ? v
                        .split(';')
                        .map((t) => t.trim())
                        .filter(Boolean)
                    : v;
              });
              try {
                await must(api.POST('/v1/contacts', { body: body as never }));
                created++;
              } catch (err) {
                out.push(`Line ${i + 2}: ${(err as { message?: string }).message ?? String(err)}`);
              }
            }
            setReport([`Imported ${created} of ${lines.length} contacts.`, ...out]);
            setBusy(false);
            await queries.invalidateQueries({ queryKey: ['contacts'] });
          }}
        />
      </Field>
      <div role="status">
        <ul>
          {report.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      </div>
      <div class="actions">
        <button
          type="button"
          disabled={rows.length === 0}
          onClick={() =>
            saveFile(
              'contacts.csv',
              `${[COLUMNS.join(','), ...rows.map((r) => COLUMNS.map((c) => csvField(r[c])).join(','))].join('\r\n')}\r\n`,
              'text/csv',
            )
          }
        >
          Export CSV
        </button>
      </div>
    </Panel>
  );
}

function Groups({ contacts }: { contacts: Row[] }) {
  const api = useApi();
  const queries = useQueryClient();
  const groups = useQuery({
    queryKey: ['contacts', 'groups'],
    queryFn: async () =>
      (await must(api.GET('/v1/contacts/groups', {}))) as unknown as Row[] | { groups: Row[] },
  });
  const list = Array.isArray(groups.data) ? groups.data : (groups.data?.groups ?? []);
  const [name, setName] = useState('');
  const [group, setGroup] = useState('');
  const [member, setMember] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <>
      <h2>Groups</h2>
      <DataTable
        name="groups"
        label="Groups"
        rows={list}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'description', label: 'Description' },
          { key: 'member_count', label: 'Members' },
        ]}
        empty="No groups yet."
      />
      <div class="two">
        <Panel title="Create a group">
          <form
            class="form"
            onSubmit={async (e) => {
              e.preventDefault();
              setError(null);
              try {
                await must(api.POST('/v1/contacts/groups', { body: { name } }));
                setName('');
                await queries.invalidateQueries({ queryKey: ['contacts', 'groups'] });
              } catch (err) {
                setError(err);
              }
            }}
          >
            <Field id="group-name" label="Group name">
              <input id="group-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </Field>
            <div class="actions">
              <button type="submit">Create group</button>
            </div>
          </form>
        </Panel>
        <Panel title="Add a contact to a group">
          <form
            class="form"
            onSubmit={async (e) => {
              e.preventDefault();
              setError(null);
              try {
                await must(
                  api.POST('/v1/contacts/groups/{group_id}/members', {
                    params: { path: { group_id: group || String(list[0]?.['id'] ?? '') } },
                    body: { contact_ids: [member || String(contacts[0]?.['id'] ?? '')] } as never,
                  }),
                );
                await queries.invalidateQueries({ queryKey: ['contacts', 'groups'] });
              } catch (err) {
                setError(err);
              }
            }}
          >
            <Field id="member-group" label="Group">
              <select id="member-group" value={group} onChange={(e) => setGroup(e.currentTarget.value)}>
                {list.map((g) => (
                  <option key={String(g['id'])} value={String(g['id'])}>
                    {String(g['name'])}
                  </option>
                ))}
              </select>
            </Field>
            <Field id="member-contact" label="Contact">
              <select id="member-contact" value={member} onChange={(e) => setMember(e.currentTarget.value)}>
                {contacts.map((c) => (
                  <option key={String(c['id'])} value={String(c['id'])}>
                    {String(c['name'])}
                  </option>
                ))}
              </select>
            </Field>
            <div class="actions">
              <button type="submit">Add to group</button>
            </div>
          </form>
        </Panel>
      </div>
      {error ? <Failure error={error} /> : null}
    </>
  );
}
