import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { ApiProblem } from '../api.js';

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
  };
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
}: {
  operationId: string;
  fields?: string[];
  labels?: Record<string, string>;
  initial?: Record<string, unknown>;
  submitLabel: string;
  onSubmit(body: Record<string, unknown>): Promise<unknown>;
  idPrefix?: string;
  /** Choices for free-text properties whose values come from another list (plans, regions). */
  options?: Record<string, string[]>;
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
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [busy, setBusy] = useState(false);
  if (!doc.data) return <p role="status">Loading the form…</p>;
  const schema = requestSchema(doc.data, operationId);
  if (!schema?.properties) return <p role="alert">This form is not available.</p>;
  const props = schema.properties;
  const names = (fields ?? Object.keys(props)).filter((n) => props[n]);
  const list = names.map((n) => {
    const f = fieldOf(doc.data, n, props[n]!, schema.required?.includes(n) ?? false);
    const withOptions = options[n]?.length ? { ...f, kind: 'select' as const, choices: options[n]! } : f;
    return labels[n] ? { ...withOptions, label: labels[n] } : withOptions;
  });

  const body = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const f of list) {
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
        } catch (err) {
          setProblem(err as ApiProblem);
        } finally {
          setBusy(false);
        }
      }}
    >
      {list.map((f) => {
        const id = `${idPrefix}-${f.name}`;
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
      {problem && !list.some((f) => problem.fields[f.name]) && (
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
