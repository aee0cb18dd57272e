import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { type ApiProblem, must } from '../api.js';
import { useApi, useConsole } from '../context.js';
import { SchemaForm } from '../ui/schema-form.js';
import { DataTable, type Row } from '../ui/table.js';
import { Failure, Panel, QueryView, SecretOnce } from '../ui/widgets.js';

/** The operator's pages: customers, plans and limits, the emulator's clock, inbox and reset. */
export const OPERATOR_PAGES = [
  { slug: 'customers', name: 'Customers' },
  { slug: 'plans', name: 'Plans and limits' },
  { slug: 'clock', name: 'Emulator clock' },
  { slug: 'inbox', name: 'Emulator inbox' },
  { slug: 'reset', name: 'Reset' },
];

export function OperatorPage({ slug, name }: { slug: string; name: string }) {
  const Page =
    { customers: Customers, plans: Plans, clock: Clock, inbox: Inbox, reset: Reset }[slug] ?? Customers;
  return (
    <section>
      <h1>{name}</h1>
      <Page />
    </section>
  );
}

const PLANS_KEY = ['operator', 'limits'];
const useLimits = () => {
  const api = useApi();
  return useQuery({ queryKey: PLANS_KEY, queryFn: () => must(api.GET('/admin/v1/limits')) });
};

/** Customers: create (the first PAT shown once), each one's plan, suspend and reactivate. */
function Customers() {
  const api = useApi();
  const queries = useQueryClient();
  const [secret, setSecret] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const [problem, setProblem] = useState<unknown>(null);
  const limits = useLimits();
  const list = useQuery({
    queryKey: ['operator', 'customers'],
    queryFn: async () => (await must(api.GET('/admin/v1/customers', {}))).customers as unknown as Row[],
  });
  const change = async (what: Promise<unknown>, done: string) => {
    setProblem(null);
    try {
      await what;
      setNotice(done);
    } catch (err) {
      setProblem(err);
    }
    await queries.invalidateQueries({ queryKey: ['operator', 'customers'] });
  };
  const plans = limits.data?.plans ?? [];
  return (
    <>
      <Panel title="Create a customer">
        <SchemaForm
          operationId="adminCreateCustomer"
          submitLabel="Create customer"
          onSubmit={async (body) => {
            const c = await must(api.POST('/admin/v1/customers', { body: body as never }));
            setSecret(c.pat ?? null);
            await queries.invalidateQueries({ queryKey: ['operator'] });
          }}
        />
      </Panel>
      {secret && <SecretOnce label="Customer's token" value={secret} onDone={() => setSecret(null)} />}
      <p role="status" class="notice">
        {notice}
      </p>
      {problem ? <Failure error={problem} /> : null}
      <QueryView query={list} what="customers">
        {(rows) => (
          <DataTable
            label="Customers"
            rows={rows ?? []}
            columns={[
              { key: 'email', label: 'E-mail' },
              { key: 'short_id', label: 'Short id' },
              { key: 'customer_type', label: 'Type' },
              {
                key: 'plan',
                label: 'Plan',
                render: (r) => {
                  const id = `plan-${String(r['customer_id'])}`;
                  return (
                    <>
                      <label for={id} class="visually-hidden">
                        Plan of {String(r['email'])}
                      </label>
                      <select
                        id={id}
                        value={String(r['plan'])}
                        onChange={(e) => {
                          const plan = e.currentTarget.value;
                          void change(
                            must(
                              api.PUT('/admin/v1/customers/{customer_id}/plan', {
                                params: { path: { customer_id: String(r['customer_id']) } },
                                body: { plan: plan as never },
                              }),
                            ),
                            `${String(r['email'])} is now on the ${plan} plan.`,
                          );
                        }}
                      >
                        {(plans.length ? plans : [String(r['plan'])]).map((p) => (
                          <option key={p} value={p}>
                            {p}
                          </option>
                        ))}
                      </select>
                    </>
                  );
                },
              },
              { key: 'status', label: 'Status' },
            ]}
            actions={(r) => {
              const suspended = r['status'] === 'suspended';
              const email = String(r['email']);
              return (
                <button
                  type="button"
                  class={suspended ? undefined : 'danger'}
                  aria-label={`${suspended ? 'Reactivate' : 'Suspend'} ${email}`}
                  onClick={() =>
                    void change(
                      must(
                        api.PATCH('/admin/v1/customers/{customer_id}', {
                          params: { path: { customer_id: String(r['customer_id']) } },
                          body: { status: suspended ? 'active' : 'suspended' },
                        }),
                      ),
                      suspended
                        ? `${email} is active again.`
                        : `${email} is suspended: its keys and sessions stop working.`,
                    )
                  }
                >
                  {suspended ? 'Reactivate' : 'Suspend'}
                </button>
              );
            }}
            empty={<p>No customers yet. Create the first above.</p>}
          />
        )}
      </QueryView>
    </>
  );
}

type LimitValue = number | null | Record<string, number | null>;
const shown = (v: number | null | undefined) =>
  v === null ? 'unlimited' : v === undefined ? '—' : String(v);

/** The limits table in force: each plan's quotas side by side, and the limits that are one number. */
function Plans() {
  const limits = useLimits();
  return (
    <QueryView query={limits} what="limits">
      {(data) => {
        const rows = Object.entries(data.limits).map(([name, l]) => {
          const value = l.value as LimitValue;
          const row: Row = { name, doc: l.doc, unit: l.unit ?? '' };
          for (const p of data.plans)
            row[p] = shown(value !== null && typeof value === 'object' ? value[p] : value);
          return row;
        });
        return (
          <>
            <p>
              Plans: {data.plans.join(', ')}. A customer's plan is chosen on the Customers page; its quotas
              apply from the next create. Change the values with <code>FJORD_LIMITS</code>.
            </p>
            <DataTable
              label="Limits by plan"
              rows={rows}
              columns={[
                { key: 'name', label: 'Limit' },
                ...data.plans.map((p) => ({ key: p, label: p })),
                { key: 'unit', label: 'Unit' },
                { key: 'doc', label: 'What it limits' },
              ]}
              empty={<p>No limits are configured.</p>}
            />
          </>
        );
      }}
    </QueryView>
  );
}

function Clock() {
  const api = useApi();
  const queries = useQueryClient();
  const clock = useQuery({
    queryKey: ['operator', 'clock'],
    queryFn: () => must(api.GET('/admin/v1/clock')),
  });
  return (
    <>
      <QueryView query={clock} what="the clock">
        {(c) => (
          <p>
            Emulated time: <time dateTime={c.now}>{c.now}</time> ({c.offset_seconds} s ahead of real time).
          </p>
        )}
      </QueryView>
      <SchemaForm
        operationId="adminAdvanceClock"
        labels={{ seconds: 'Seconds to move forward' }}
        submitLabel="Move the clock"
        onSubmit={async (body) => {
          await must(api.POST('/admin/v1/clock/advance', { body: body as never }));
          await queries.invalidateQueries({ queryKey: ['operator', 'clock'] });
        }}
      />
    </>
  );
}

function Inbox() {
  const api = useApi();
  const inbox = useQuery({
    queryKey: ['operator', 'inbox'],
    queryFn: async () => (await must(api.GET('/admin/v1/emulator/inbox', {}))).messages as unknown as Row[],
  });
  return (
    <QueryView query={inbox} what="messages">
      {(rows) => (
        <DataTable
          label="Messages"
          rows={rows ?? []}
          columns={[
            { key: 'at', label: 'At' },
            { key: 'kind', label: 'Kind' },
            { key: 'to', label: 'To' },
            { key: 'subject', label: 'Subject' },
            { key: 'text', label: 'Text' },
          ]}
          empty={<p>No messages: the SMS and e-mail Fjord would have sent appear here.</p>}
        />
      )}
    </QueryView>
  );
}

const RESET_PHRASE = 'erase everything';

/**
 * The emulator's reset: every table emptied (this session too), the seed and development
 * credentials restored. Confirmed by typing a phrase, as deletes are by the resource's name.
 */
function Reset() {
  const api = useApi();
  const { signOut } = useConsole();
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [done, setDone] = useState(false);
  if (done)
    return (
      <>
        <p role="status">
          Fjord was reset: every customer and resource is gone, and so is this session. The seed and the
          development credentials are back.
        </p>
        <button type="button" class="primary" onClick={() => void signOut()}>
          Sign in again
        </button>
      </>
    );
  return (
    <form
      class="confirm"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setProblem(null);
        try {
          await must(api.POST('/admin/v1/reset', {}));
          setDone(true);
        } catch (err) {
          setProblem(err as ApiProblem);
        } finally {
          setBusy(false);
        }
      }}
    >
      <p>
        Erases all state of this emulator: customers, their resources and objects, jobs, and the console
        sessions (yours too). The clock goes back to real time; the seed file and the development credentials
        are restored. This cannot be undone.
      </p>
      <label for="reset-confirm">Type {RESET_PHRASE} to confirm</label>
      <input
        id="reset-confirm"
        value={typed}
        autoComplete="off"
        onInput={(e) => setTyped(e.currentTarget.value)}
      />
      <div class="actions">
        <button type="submit" class="danger" disabled={typed !== RESET_PHRASE || busy}>
          Reset Fjord
        </button>
      </div>
      {problem && (
        <p class="error" role="alert">
          {problem.message}
        </p>
      )}
    </form>
  );
}
