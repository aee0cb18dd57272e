// How the console describes an area (AreaDef) and the column helpers its area lists share.

import type { ComponentChildren } from 'preact';
import type { FjordClient } from '../../sdk/index.js';
import type { RowsSpec } from './ui/rows-field.js';
import { type Column, type Row, when } from './ui/table.js';

/** What a list page shows and how a resource is created, shown and deleted, through the SDK. */
export interface AreaDef {
  slug: string;
  name: string;
  /** What the area's resources are called ("bucket"). */
  noun: string;
  intro: string;
  list?: {
    load(api: FjordClient): Promise<Row[]>;
    columns: Column[];
    /** The row's id in the address of its page, or none when rows have no page. */
    id?(row: Row): string;
    empty: string;
  };
  create?: {
    operationId: string;
    fields?: string[];
    labels?: Record<string, string>;
    initial?: Record<string, unknown>;
    options?(api: FjordClient): Promise<Record<string, string[]>>;
    /** Lists of objects in the body drawn as rows of controls (SchemaForm's `rows`). */
    rows?: Record<string, RowsSpec>;
    submit(api: FjordClient, body: Record<string, unknown>): Promise<unknown>;
    /** A secret in the answer, shown once. */
    secret?(created: unknown): { label: string; value: string } | null;
  };
  detail?: {
    load(api: FjordClient, id: string): Promise<Row>;
    name(row: Row): string;
    /**
     * While the resource is changing on its own (a pool scaling), how often its page reads it
     * again, in milliseconds; false once it rests. Without it the page reads it once.
     */
    poll?(row: Row): number | false;
    /** Sections of the page besides the facts (record editors, keys, actions). */
    sections?(props: { id: string; row: Row; api: FjordClient }): ComponentChildren;
  };
  remove?(api: FjordClient, id: string, row: Row): Promise<unknown>;
}

/** A list field of an answer, as rows (none when it is missing). */
export const rows = (v: unknown): Row[] => (Array.isArray(v) ? (v as Row[]) : []);
/** A column of times, shown in the reader's locale. */
export const date = (key: string): Column => ({
  key,
  label: key === 'created_at' ? 'Created' : key.replace(/_/g, ' '),
  render: (r) => when(r[key]),
});
/** A plain column, labelled from its key unless told. */
export const col = (
  key: string,
  label = key.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
): Column => ({
  key,
  label,
});
/** Values of a list field, for a select. */
export const values = (list: unknown, key: string): string[] =>
  rows(list)
    .map((r) => r[key])
    .filter((v): v is string => typeof v === 'string');
