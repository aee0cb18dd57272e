import type { ComponentChildren } from 'preact';
import { Link, setQuery, useLocation } from '../router.js';

export type Row = Record<string, unknown>;

export interface Column {
  key: string;
  label: string;
  /** How a cell shows; the raw value (as text) by default. */
  render?(row: Row): ComponentChildren;
  /** A sentence rather than a value: the column keeps a readable width instead of a word's. */
  prose?: boolean;
}

const PAGE_SIZE = 20;

export const text = (v: unknown): string =>
  v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** A time as the reader's locale writes it, or a dash where there is none. */
export const when = (v: unknown): string => (typeof v === 'string' ? new Date(v).toLocaleString() : '—');

/**
 * A list with search, sort and pages, whose state is in the address (`?q=&sort=&dir=&page=`), so
 * a reload or a shared link shows the same view. The first column links to the row's page when
 * `href` is given. `name` prefixes the query parameters when a page has several lists.
 */
export function DataTable({
  rows,
  columns,
  label,
  href,
  name = '',
  empty,
  actions,
}: {
  rows: Row[];
  columns: Column[];
  label: string;
  href?(row: Row): string;
  name?: string;
  empty: ComponentChildren;
  actions?(row: Row): ComponentChildren;
}) {
  const { query } = useLocation();
  const k = (s: string) => (name ? `${name}_${s}` : s);
  const q = query.get(k('q')) ?? '';
  const sort = query.get(k('sort')) ?? '';
  const dir = query.get(k('dir')) === 'desc' ? -1 : 1;
  const page = Math.max(1, Number(query.get(k('page')) ?? 1) || 1);

  if (rows.length === 0) return <div class="empty">{empty}</div>;
  const needle = q.toLowerCase();
  const found = needle
    ? rows.filter((r) => columns.some((c) => text(r[c.key]).toLowerCase().includes(needle)))
    : rows;
  const sorted = sort
    ? [...found].sort((a, b) => {
        const x = a[sort];
        const y = b[sort];
        if (typeof x === 'number' && typeof y === 'number') return (x - y) * dir;
        return text(x).localeCompare(text(y), undefined, { numeric: true }) * dir;
      })
    : found;
  const pages = Math.max(1, Math.ceil(sorted.length / PAGE_SIZE));
  const shown = sorted.slice((Math.min(page, pages) - 1) * PAGE_SIZE, Math.min(page, pages) * PAGE_SIZE);
  const searchId = `${name || 'list'}-search`;

  return (
    <div class="table-wrap">
      <div class="table-tools">
        <label for={searchId}>Search {label.toLowerCase()}</label>
        <input
          id={searchId}
          type="search"
          value={q}
          onInput={(e) => setQuery({ [k('q')]: e.currentTarget.value, [k('page')]: null })}
        />
        <span class="count" role="status">
          {found.length} of {rows.length}
        </span>
      </div>
      <table>
        <caption class="visually-hidden">{label}</caption>
        <thead>
          <tr>
            {columns.map((c) => {
              const active = sort === c.key;
              return (
                <th
                  key={c.key}
                  scope="col"
                  aria-sort={active ? (dir === 1 ? 'ascending' : 'descending') : undefined}
                >
                  <button
                    type="button"
                    class="sort"
                    onClick={() =>
                      setQuery({ [k('sort')]: c.key, [k('dir')]: active && dir === 1 ? 'desc' : null })
                    }
                  >
                    {c.label}
                    <span aria-hidden="true">{active ? (dir === 1 ? ' ▲' : ' ▼') : ''}</span>
                  </button>
                </th>
              );
            })}
            {actions && (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {shown.map((r, i) => (
            <tr key={text(r[columns[0]!.key]) + i}>
              {columns.map((c, j) => (
                <td key={c.key} class={c.prose ? 'prose' : undefined}>
                  {j === 0 && href ? (
                    <Link href={href(r)}>{c.render ? c.render(r) : text(r[c.key])}</Link>
                  ) : c.render ? (
                    c.render(r)
                  ) : (
                    text(r[c.key])
                  )}
                </td>
              ))}
              {actions && <td class="row-actions">{actions(r)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
      {pages > 1 && (
        <nav class="pager" aria-label={`${label} pages`}>
          <button
            type="button"
            disabled={page <= 1}
            onClick={() => setQuery({ [k('page')]: String(page - 1) })}
          >
            Previous
          </button>
          <span>
            Page {Math.min(page, pages)} of {pages}
          </span>
          <button
            type="button"
            disabled={page >= pages}
            onClick={() => setQuery({ [k('page')]: String(page + 1) })}
          >
            Next
          </button>
        </nav>
      )}
    </div>
  );
}

/**
 * The head of a table laid out by hand whose last column holds each row's buttons: that column is
 * named for screen readers only.
 */
export function HeadWithActions({ labels }: { labels: string[] }) {
  return (
    <thead>
      <tr>
        {labels.map((label) => (
          <th key={label} scope="col">
            {label}
          </th>
        ))}
        <th scope="col">
          <span class="visually-hidden">Actions</span>
        </th>
      </tr>
    </thead>
  );
}
