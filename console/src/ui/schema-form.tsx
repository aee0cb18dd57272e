import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { ApiProblem } from '../api.js';
import { newRow, type RowPart, RowsField, type RowsSpec, type RowValues, rowsBody } from './rows-field.js';

/** The little of JSON Schema the forms read. */
interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
  title?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  $ref?: string;
}

interface OpenApiDoc {
  paths: Record<
    string,
    Record<string, { operationId?: string; requestBody?: { content?: Record<string, { schema: Schema }> } }>
  >;
  components?: { schemas?: Record<string, Schema> };
}

/** The API's own OpenAPI document (public, same origin): the forms are drawn from its request schemas. */
export function useOpenApi() {
  return useQuery({
    queryKey: ['openapi'],
    queryFn: async () => (await (await fetch('/openapi.json')).json()) as OpenApiDoc,
    staleTime: Number.POSITIVE_INFINITY,
  });
}

function resolve(doc: OpenApiDoc, s: Schema): Schema {
  if (s.$ref) return resolve(doc, doc.components?.schemas?.[s.$ref.split('/').pop()!] ?? {});
  return s;
}

export function requestSchema(doc: OpenApiDoc, operationId: string): Schema | null {
  for (const ops of Object.values(doc.paths))
    for (const op of Object.values(ops))
      if (op.operationId === operationId) {
        const s = op.requestBody?.content?.['application/json']?.schema;
        return s ? resolve(doc, s) : null;
      }
  return null;
}

type Kind = 'text' | 'number' | 'boolean' | 'select' | 'list' | 'json';
interface Field {
  name: string;
  label: string;
  kind: Kind;
  required: boolean;
  choices: string[];
  nullable: boolean;
  description?: string;
  integer: boolean;
  /** A list of objects (`json`): its items' properties, drawn as rows when the form asks for it. */
  item?: { properties: Record<string, Schema>; required: string[] };
}

/** One property of a request schema as a form field: its kind, choices and whether it may be null. */
function fieldOf(doc: OpenApiDoc, name: string, raw: Schema, required: boolean): Field {
  const s = resolve(doc, raw);
  const branches = (s.anyOf ?? s.oneOf ?? [s]).map((b) => resolve(doc, b));
  const nullable = branches.some((b) => b.type === 'null');
  const live = branches.filter((b) => b.type !== 'null');
  const choices = live.flatMap((b) => [...(b.enum ?? []), ...('const' in b ? [b.const] : [])]).map(String);
  const type = live[0]?.type;
  const kind: Kind =
    choices.length > 0 &&
    choices.length === live.reduce((n, b) => n + (b.enum?.length ?? ('const' in b ? 1 : 0)), 0)
      ? 'select'
      : type === 'boolean'
        ? 'boolean'
        : type === 'integer' || type === 'number'
          ? 'number'
          : type === 'array' && resolve(doc, live[0]?.items ?? {}).type === 'string'
            ? 'list'
            : type === 'object' || type === 'array'
              ? 'json'
              : 'text';
  return {
    name,
    label: (s.title ?? name).replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
    kind,
    required,
    choices,
    nullable,
    description: s.description ?? live[0]?.description,
    integer: type === 'integer',
    item: itemOf(doc, type === 'array' ? live[0]?.items : undefined),
  };
}

function itemOf(doc: OpenApiDoc, raw: Schema | undefined): Field['item'] {
  const s = raw ? resolve(doc, raw) : null;
  return s?.properties ? { properties: s.properties, required: s.required ?? [] } : undefined;
}

/** The controls of a row of a list of objects: each chosen property of the item as a field. */
function rowParts(doc: OpenApiDoc, f: Field, spec: RowsSpec, options: Record<string, string[]>): RowPart[] {
  return spec.parts
    .filter((n) => f.item!.properties[n])
    .map((n) => {
      const p = fieldOf(doc, n, f.item!.properties[n]!, f.item!.required.includes(n));
      const choices = options[`${f.name}.${n}`] ?? p.choices;
      const kind = choices.length > 0 ? 'select' : p.kind === 'number' ? 'number' : 'text';
      return { name: n, label: p.label, kind, required: p.required, choices };
    });
}

/**
 * A create or edit form drawn from the request schema of an API operation: a labelled control
 * per property (a select for a choice of values, a checkbox for a flag, a list for strings),
 * required ones marked, and the API's own validation messages shown at the field they concern.
 * `fields` picks and orders the properties shown; `labels` renames them.
 */
export function SchemaForm({
  operationId,
  fields,
  labels = {},
  initial = {},
  submitLabel,
  onSubmit,
  idPrefix = operationId,
  options = {},
  optionsLoading = false,
  rows = {},
}: {
  operationId: string;
  fields?: string[];
  labels?: Record<string, string>;
  initial?: Record<string, unknown>;
  submitLabel: string;
  onSubmit(body: Record<string, unknown>): Promise<unknown>;
  idPrefix?: string;
  /** Choices for free-text properties whose values come from another list (plans, regions);
   * `list.property` for a property of a list's rows. */
  options?: Record<string, string[]>;
  /**
   * The choices are still being read: the form waits for them rather than draw a text box that
   * turns into a list under the cursor, losing what was typed. (If they cannot be read, the
   * fields stay free text and the API checks what is sent.)
   */
  optionsLoading?: boolean;
  /** Lists of objects drawn as rows of controls (add, remove) rather than JSON. */
  rows?: Record<string, RowsSpec>;
}) {
  const doc = useOpenApi();
  const [values, setValues] = useState<Record<string, string | boolean>>(() =>
    Object.fromEntries(
      Object.entries(initial).map(([k, v]) => [
        k,
        typeof v === 'boolean' ? v : Array.isArray(v) ? v.join(', ') : String(v),
      ]),
    ),
  );
  const firstRows = () => Object.fromEntries(Object.entries(rows).map(([k, spec]) => [k, [newRow(spec, 1)]]));
  const [rowValues, setRowValues] = useState<Record<string, RowValues>>(firstRows);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [busy, setBusy] = useState(false);
  if (!doc.data || optionsLoading) return <p role="status">Loading the form…</p>;
  const schema = requestSchema(doc.data, operationId);
  if (!schema?.properties) return <p role="alert">This form is not available.</p>;
  const props = schema.properties;
  const names = (fields ?? Object.keys(props)).filter((n) => props[n]);
  const list = names.map((n) => {
    const f = fieldOf(doc.data, n, props[n]!, schema.required?.includes(n) ?? false);
    const withOptions = options[n]?.length ? { ...f, kind: 'select' as const, choices: options[n]! } : f;
    return labels[n] ? { ...withOptions, label: labels[n] } : withOptions;
  });

  const asRows = (f: Field) => (f.kind === 'json' && f.item && rows[f.name] ? rows[f.name]! : null);
  /** Whether the API's message about `path` is shown at the field `f`. */
  const shownAt = (f: Field, path: string) =>
    path === f.name || (asRows(f) !== null && path.startsWith(`${f.name}/`));
  const body = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const f of list) {
      const spec = asRows(f);
      if (spec) {
        out[f.name] = rowsBody(rowParts(doc.data!, f, spec, options), rowValues[f.name] ?? []);
        continue;
      }
      const v = values[f.name];
      if (v === undefined || v === '') continue;
      if (f.kind === 'boolean') out[f.name] = v === true;
      else if (f.kind === 'number') out[f.name] = Number(v);
      else if (f.kind === 'list')
        out[f.name] = String(v)
          .split(/[,\n]/)
          .map((x) => x.trim())
          .filter(Boolean);
      else if (f.kind === 'json') {
        try {
          out[f.name] = JSON.parse(String(v));
        } catch {
          out[f.name] = v; // the API says what is wrong with it, at the field
        }
      } else out[f.name] = v;
    }
    return out;
  };

  return (
    <form
      class="form"
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setProblem(null);
        try {
          await onSubmit(body());
          setValues(
            Object.fromEntries(
              Object.entries(initial).map(([k, v]) => [k, typeof v === 'boolean' ? v : String(v)]),
            ),
          );
          setRowValues(firstRows());
        } catch (err) {
          setProblem(err as ApiProblem);
        } finally {
          setBusy(false);
        }
      }}
    >
      {list.map((f) => {
        const id = `${idPrefix}-${f.name}`;
        const spec = asRows(f);
        if (spec) {
          // The API names a row's property by its path under the list (`node_pools/1/count`).
          const below = `${f.name}/`;
          const errors = Object.fromEntries(
            Object.entries(problem?.fields ?? {})
              .filter(([k]) => k === f.name || k.startsWith(below))
              .map(([k, v]) => [k === f.name ? '' : k.slice(below.length), v]),
          );
          return (
            <RowsField
              key={f.name}
              id={id}
              label={f.label}
              required={f.required}
              spec={spec}
              parts={rowParts(doc.data!, f, spec, options)}
              rows={rowValues[f.name] ?? []}
              errors={errors}
              onChange={(r) => setRowValues((old) => ({ ...old, [f.name]: r }))}
            />
          );
        }
        const error = problem?.fields[f.name];
        const described = [error ? `${id}-error` : '', f.description ? `${id}-help` : '']
          .filter(Boolean)
          .join(' ');
        const common = {
          id,
          name: f.name,
          'aria-invalid': error ? ('true' as const) : undefined,
          'aria-describedby': described || undefined,
          'aria-required': f.required ? ('true' as const) : undefined,
        };
        const set = (v: string | boolean) => setValues((old) => ({ ...old, [f.name]: v }));
        return (
          <div class={`field field-${f.kind}`} key={f.name}>
            {f.kind === 'boolean' ? (
              <label for={id} class="check">
                <input
                  {...common}
                  type="checkbox"
                  checked={values[f.name] === true}
                  onChange={(e) => set(e.currentTarget.checked)}
                />
                {f.label}
              </label>
            ) : (
              <label for={id}>
                {f.label}
                {f.required && (
                  <span class="required" aria-hidden="true">
                    {' '}
                    *
                  </span>
                )}
              </label>
            )}
            {f.kind === 'select' ? (
              <select
                {...common}
                value={String(values[f.name] ?? '')}
                onChange={(e) => set(e.currentTarget.value)}
              >
                <option value="">{f.required ? 'Choose…' : '(default)'}</option>
                {f.choices.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            ) : f.kind === 'json' ? (
              <textarea
                {...common}
                rows={3}
                value={String(values[f.name] ?? '')}
                onInput={(e) => set(e.currentTarget.value)}
              />
            ) : f.kind === 'boolean' ? null : (
              <input
                {...common}
                type={f.kind === 'number' ? 'number' : 'text'}
                step={f.kind === 'number' && !f.integer ? 'any' : undefined}
                value={String(values[f.name] ?? '')}
                onInput={(e) => set(e.currentTarget.value)}
                autoComplete="off"
              />
            )}
            {f.description && (
              <small id={`${id}-help`} class="help">
                {f.kind === 'list' ? `${f.description} (separate with commas)` : f.description}
              </small>
            )}
            {!f.description && f.kind === 'list' && (
              <small id={`${id}-help`} class="help">
                Separate values with commas.
              </small>
            )}
            {error && (
              <small id={`${id}-error`} class="error" role="alert">
                {f.label} {error}
              </small>
            )}
          </div>
        );
      })}
      {problem && !Object.keys(problem.fields).some((k) => list.some((f) => shownAt(f, k))) && (
        <p class="error" role="alert">
          {problem.message}
        </p>
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
