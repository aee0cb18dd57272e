import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../api.js';
import { useApi } from '../context.js';
import { SchemaForm } from '../ui/schema-form.js';
import { DataTable, type Row } from '../ui/table.js';
import { Failure, Loading, Panel, SecretOnce } from '../ui/widgets.js';

/** The operator's pages: customers, the emulator's clock and inbox. */
export function OperatorPage({ slug, name }: { slug: string; name: string }) {
  return (
    <section>
      <h1>{name}</h1>
      {slug === 'customers' ? <Customers /> : slug === 'clock' ? <Clock /> : <Inbox />}
    </section>
  );
}

function Customers() {
  const api = useApi();
  const queries = useQueryClient();
  const [secret, setSecret] = useState<string | null>(null);
  const list = useQuery({
    queryKey: ['operator', 'customers'],
    queryFn: async () => (await must(api.GET('/admin/v1/customers', {}))).customers as unknown as Row[],
  });
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
      {list.isLoading ? (
        <Loading what="customers" />
      ) : list.error ? (
        <Failure error={list.error} />
      ) : (
        <DataTable
          label="Customers"
          rows={list.data ?? []}
          columns={[
            { key: 'email', label: 'E-mail' },
            { key: 'short_id', label: 'Short id' },
            { key: 'customer_type', label: 'Type' },
            { key: 'status', label: 'Status' },
          ]}
          empty={<p>No customers yet. Create the first above.</p>}
        />
      )}
    </>
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
      {clock.data && (
        <p>
          Emulated time: <time dateTime={clock.data.now}>{clock.data.now}</time> ({clock.data.offset_seconds}{' '}
          s ahead of real time).
        </p>
      )}
      {clock.error && <Failure error={clock.error} />}
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
  if (inbox.isLoading) return <Loading what="messages" />;
  if (inbox.error) return <Failure error={inbox.error} />;
  return (
    <DataTable
      label="Messages"
      rows={inbox.data ?? []}
      columns={[
        { key: 'at', label: 'At' },
        { key: 'kind', label: 'Kind' },
        { key: 'to', label: 'To' },
        { key: 'subject', label: 'Subject' },
        { key: 'text', label: 'Text' },
      ]}
      empty={<p>No messages: the SMS and e-mail Fjord would have sent appear here.</p>}
    />
  );
}
