/** One property of a list item, as the form draws it. */
export interface RowPart {
  name: string;
  label: string;
  kind: 'text' | 'number' | 'select';
  required: boolean;
  choices: string[];
}

/** How a form shows a list of objects (node pools): which of an item's properties, named how. */
export interface RowsSpec {
  /** What one item is called ("node pool"): each control's name says which one it belongs to. */
  noun: string;
  parts: string[];
  labels?: Record<string, string>;
  /** The first row's values, and each added row's (the new row's number is filled into `{n}`). */
  initial?: Record<string, string>;
}

export type RowValues = Record<string, string>[];

/** A new row's values: `{n}` in the spec's initial values becomes the row's number. */
export const newRow = (spec: RowsSpec, n: number): Record<string, string> =>
  Object.fromEntries(Object.entries(spec.initial ?? {}).map(([k, v]) => [k, v.replace('{n}', String(n))]));

/** The rows as the API takes them: numbers as numbers, empty values left out. */
export function rowsBody(parts: RowPart[], rows: RowValues): Record<string, unknown>[] {
  return rows.map((r) => {
    const out: Record<string, unknown> = {};
    for (const p of parts) {
      const v = r[p.name];
      if (v === undefined || v === '') continue;
      out[p.name] = p.kind === 'number' ? Number(v) : v;
    }
    return out;
  });
}

/**
 * A list of objects as rows of controls, one row per item with add and remove, instead of JSON
 * typed by hand. The API's validation messages are shown at the control they name
 * (`node_pools/1/count`), or under the list when they name the list itself.
 */
export function RowsField({
  id,
  label,
  required,
  spec,
  parts,
  rows,
  errors,
  onChange,
}: {
  id: string;
  label: string;
  required: boolean;
  spec: RowsSpec;
  parts: RowPart[];
  rows: RowValues;
  /** The API's messages by path below the field (`1/count`), '' for the list itself. */
  errors: Record<string, string>;
  onChange(rows: RowValues): void;
}) {
  const set = (i: number, part: string, v: string) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, [part]: v } : r)));
  return (
    <fieldset class="rows-field" id={id}>
      <legend>
        {label}
        {required && (
          <span class="required" aria-hidden="true">
            {' '}
            *
          </span>
        )}
      </legend>
      {rows.map((r, i) => (
        <div class="rows-field-row" key={i}>
          {parts.map((p) => {
            const control = `${id}-${i}-${p.name}`;
            const error = errors[`${i}/${p.name}`];
            const common = {
              id: control,
              'aria-invalid': error ? ('true' as const) : undefined,
              'aria-describedby': error ? `${control}-error` : undefined,
              'aria-required': p.required ? ('true' as const) : undefined,
            };
            return (
              <div class={`field field-${p.kind}`} key={p.name}>
                <label for={control}>
                  {spec.labels?.[p.name] ?? p.label}
                  <span class="visually-hidden">
                    {' '}
                    of {spec.noun} {i + 1}
                  </span>
                </label>
                {p.kind === 'select' ? (
                  <select
                    {...common}
                    value={r[p.name] ?? ''}
                    onChange={(e) => set(i, p.name, e.currentTarget.value)}
                  >
                    <option value="">Choose…</option>
                    {p.choices.map((c) => (
                      <option key={c} value={c}>
                        {c}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    {...common}
                    type={p.kind === 'number' ? 'number' : 'text'}
                    value={r[p.name] ?? ''}
                    onInput={(e) => set(i, p.name, e.currentTarget.value)}
                    autoComplete="off"
                  />
                )}
                {error && (
                  <small id={`${control}-error`} class="error" role="alert">
                    {spec.labels?.[p.name] ?? p.label} {error}
                  </small>
                )}
              </div>
            );
          })}
          <button
            type="button"
            aria-label={`Remove ${spec.noun} ${i + 1}`}
            disabled={rows.length < 2}
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      <div class="actions">
        <button type="button" onClick={() => onChange([...rows, newRow(spec, rows.length + 1)])}>
          Add another {spec.noun}
        </button>
      </div>
      {errors[''] && (
        <small class="error" role="alert">
          {label} {errors['']}
        </small>
      )}
    </fieldset>
  );
}
