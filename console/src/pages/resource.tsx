import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { AreaDef } from '../areas.js';
import { useApi } from '../context.js';
import { Link, navigateIfStillHere } from '../router.js';
import { SchemaForm } from '../ui/schema-form.js';
import { DataTable, type Row } from '../ui/table.js';
import { ConfirmDelete, Facts, Panel, QueryView, SecretOnce } from '../ui/widgets.js';
import { AREA_LIST_EXTRAS, AREA_SECTIONS } from './sections.js';

/** An area's page: what it is, its list (search, sort, pages in the address) and a create form. */
export function AreaPage({ area }: { area: AreaDef }) {
  const api = useApi();
  const queries = useQueryClient();
  const list = useQuery({
    queryKey: [area.slug, 'list'],
    queryFn: () => area.list!.load(api),
    enabled: !!area.list,
  });
  const options = useQuery({
    queryKey: [area.slug, 'options'],
    queryFn: () => area.create!.options!(api),
    enabled: !!area.create?.options,
    staleTime: 60_000,
  });
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [created, setCreated] = useState('');
  return (
    <section>
      <h1>{area.name}</h1>
      <p class="intro">{area.intro}</p>
      {area.slug === 'dns' && (
        <p>
          Proving you own a domain for another service? See{' '}
          <Link href="/domain-verification">Domain verification</Link>.
        </p>
      )}
      {area.create && (
        <Panel title={`Create a ${area.noun}`} open={list.data?.length === 0}>
          <SchemaForm
            operationId={area.create.operationId}
            fields={area.create.fields}
            labels={area.create.labels}
            initial={area.create.initial}
            options={options.data}
            optionsLoading={options.isLoading}
            rows={area.create.rows}
            submitLabel={`Create ${area.noun}`}
            onSubmit={async (body) => {
              const result = await area.create!.submit(api, body);
              setSecret(area.create!.secret?.(result) ?? null);
              setCreated(`The ${area.noun} was created.`);
              await queries.invalidateQueries({ queryKey: [area.slug] });
            }}
          />
        </Panel>
      )}
      <p role="status" class="notice">
        {created}
      </p>
      {secret && <SecretOnce label={secret.label} value={secret.value} onDone={() => setSecret(null)} />}
      {AREA_LIST_EXTRAS[area.slug]?.()}
      {area.list && (
        <QueryView query={list} what={`${area.noun}s`}>
          {(rows) => (
            <DataTable
              label={`${area.noun.replace(/^./, (c) => c.toUpperCase())}s`}
              rows={rows ?? []}
              columns={area.list!.columns}
              href={
                area.list!.id && area.detail
                  ? (r) => `/${area.slug}/${encodeURIComponent(area.list!.id!(r))}`
                  : undefined
              }
              empty={<p>{area.list!.empty}</p>}
            />
          )}
        </QueryView>
      )}
    </section>
  );
}

/** A resource's page: its facts, the area's own sections, and deletion confirmed by name. */
export function DetailPage({ area, id }: { area: AreaDef; id: string }) {
  const api = useApi();
  const queries = useQueryClient();
  const detail = useQuery({
    queryKey: [area.slug, 'detail', id],
    queryFn: () => area.detail!.load(api, id),
    enabled: !!area.detail,
    refetchInterval: (q) => (q.state.data && area.detail?.poll ? area.detail.poll(q.state.data) : false),
  });
  if (!area.detail) return <AreaPage area={area} />;
  const row = detail.data as Row | undefined;
  const name = row ? area.detail.name(row) : id;
  const Sections = AREA_SECTIONS[area.slug];
  return (
    <section>
      <p class="crumbs">
        <Link href={`/${area.slug}`}>{area.name}</Link> / <span>{name}</span>
      </p>
      <h1>
        {area.name}: {name}
      </h1>
      <QueryView query={detail} what={area.noun}>
        {() => (
          <>
            <Facts data={row!} />
            {Sections && <Sections id={id} row={row!} api={api} />}
            {area.remove && (
              <section class="danger-zone" aria-labelledby="danger-heading">
                <h2 id="danger-heading">Delete</h2>
                <ConfirmDelete
                  name={name}
                  what={area.noun}
                  onConfirm={async () => {
                    // Deleting may take a moment: back to the list only if the reader is still here.
                    const go = navigateIfStillHere();
                    await area.remove!(api, id, row!);
                    await queries.invalidateQueries({ queryKey: [area.slug] });
                    go(`/${area.slug}`);
                  }}
                />
              </section>
            )}
          </>
        )}
      </QueryView>
    </section>
  );
}
