import { useQuery, useQueryClient } from '@tanstack/preact-query';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../../sdk/index.js';
import { useApi } from '../../context.js';
import { SchemaForm } from '../../ui/schema-form.js';
import { type Column, DataTable, type Row } from '../../ui/table.js';
import { Panel, QueryView } from '../../ui/widgets.js';

/**
 * A list of one kind of IoT resource with its create form (drawn from the API's schema) and, per
 * row, its actions (delete, send test…). What the catalogue and notification pages share.
 */
export function Collection({
  name,
  noun,
  load,
  columns,
  create,
  actions,
  empty,
}: {
  name: string;
  noun: string;
  load(api: FjordClient): Promise<Row[]>;
  columns: Column[];
  create: {
    operationId: string;
    fields?: string[];
    labels?: Record<string, string>;
    submit(api: FjordClient, body: Record<string, unknown>): Promise<unknown>;
  };
  actions?(row: Row, api: FjordClient, done: (note: string) => Promise<void>): ComponentChildren;
  empty: string;
}) {
  const api = useApi();
  const queries = useQueryClient();
  const list = useQuery({ queryKey: ['iot', name], queryFn: () => load(api) });
  const [note, setNote] = useState('');
  const done = async (n: string) => {
    setNote(n);
    await queries.invalidateQueries({ queryKey: ['iot', name] });
  };
  return (
    <>
      <Panel title={`Create a ${noun}`} open={list.data?.length === 0}>
        <SchemaForm
          operationId={create.operationId}
          fields={create.fields}
          labels={create.labels}
          idPrefix={`${create.operationId}-${name}`}
          submitLabel={`Create ${noun}`}
          onSubmit={async (body) => {
            await create.submit(api, body);
            await done(`The ${noun} was created.`);
          }}
        />
      </Panel>
      <p role="status" class="notice">
        {note}
      </p>
      <QueryView query={list} what={`${noun}s`}>
        {(data) => (
          <DataTable
            name={name}
            label={`${noun.replace(/^./, (c) => c.toUpperCase())}s`}
            rows={data ?? []}
            columns={columns}
            actions={actions ? (r) => actions(r, api, done) : undefined}
            empty={<p>{empty}</p>}
          />
        )}
      </QueryView>
    </>
  );
}

/** A row's delete button, asking once more (inline) before it deletes. */
export function DeleteButton({
  what,
  name,
  onDelete,
}: {
  what: string;
  name: string;
  onDelete(): Promise<unknown>;
}) {
  const [sure, setSure] = useState(false);
  if (!sure)
    return (
      <button
        type="button"
        class="danger"
        onClick={() => setSure(true)}
        aria-label={`Delete ${what} ${name}`}
      >
        Delete
      </button>
    );
  return (
    <button
      type="button"
      class="danger"
      onClick={() => void onDelete()}
      aria-label={`Really delete ${what} ${name}`}
    >
      Really delete?
    </button>
  );
}
