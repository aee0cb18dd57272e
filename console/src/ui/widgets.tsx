import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { ApiProblem } from '../api.js';

/**
 * A destructive action confirmed by typing the resource's name (as the API's `confirm_name`):
 * the button stays disabled until the name matches.
 */
export function ConfirmDelete({
  name,
  what,
  onConfirm,
  action = 'Delete',
}: {
  name: string;
  what: string;
  onConfirm(): Promise<unknown>;
  action?: string;
}) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const id = `confirm-${what.replace(/\W+/g, '-')}-${name.replace(/\W+/g, '-')}`;
  if (!open)
    return (
      <button type="button" class="danger" onClick={() => setOpen(true)}>
        {action} {what}
      </button>
    );
  return (
    <form
      class="confirm"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          await onConfirm();
          setOpen(false);
        } catch (err) {
          setProblem(err as ApiProblem);
        } finally {
          setBusy(false);
        }
      }}
    >
      <p>
        This cannot be undone. To {action.toLowerCase()} the {what} <strong>{name}</strong>, type its name.
      </p>
      <label for={id}>Type {name} to confirm</label>
      <input id={id} value={typed} autoComplete="off" onInput={(e) => setTyped(e.currentTarget.value)} />
      <div class="actions">
        <button type="submit" class="danger" disabled={typed !== name || busy}>
          {action} {what} {name}
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
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

/** A secret the API shows once: a warning, the value, and a copy button. */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone?(): void }) {
  const [copied, setCopied] = useState(false);
  return (
    <section class="secret" aria-label={label}>
      <p class="warning" role="alert">
        Copy the {label.toLowerCase()} now: it is shown only this once and cannot be shown again.
      </p>
      <output class="secret-value" aria-label={label}>
        {value}
      </output>
      <div class="actions">
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(value).catch(() => {});
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : `Copy ${label.toLowerCase()}`}
        </button>
        {onDone && (
          <button type="button" onClick={onDone}>
            Done
          </button>
        )}
      </div>
    </section>
  );
}

export function Loading({ what }: { what: string }) {
  return <p role="status">Loading {what}…</p>;
}

export function Failure({ error }: { error: unknown }) {
  const p = error as ApiProblem;
  return (
    <p class="error" role="alert">
      {p?.message ?? String(error)}
    </p>
  );
}

/** The three states of a query every list and detail shows: loading, failed, and its data. */
export function QueryView<T>({
  query,
  what,
  children,
}: {
  query: { isLoading: boolean; error: unknown; data: T | undefined };
  what: string;
  children: (data: T) => ComponentChildren;
}) {
  return pending(query, what) ?? <>{children(query.data as T)}</>;
}

/**
 * QueryView's loading or failure block, or null once the data is there: for a component that
 * returns early (`const wait = pending(q, 'models'); if (wait) return wait;`) rather than
 * wrapping its whole body in a QueryView.
 */
export function pending(query: { isLoading: boolean; error: unknown }, what: string) {
  if (query.isLoading) return <Loading what={what} />;
  if (query.error) return <Failure error={query.error} />;
  return null;
}

/** A collapsible panel (a native `details`): forms stay out of the way until wanted. */
export function Panel({
  title,
  children,
  open = false,
}: {
  title: string;
  children: ComponentChildren;
  open?: boolean;
}) {
  return (
    <details class="panel" open={open}>
      <summary>{title}</summary>
      {children}
    </details>
  );
}

/** Key–value facts of a resource. */
/**
 * A fact as a reader takes it in: yes/no for a flag, a fraction as a plain decimal (a size in GB of
 * a few bytes is 0.000000048, not 4.8e-8). Whole numbers stay as they are: ports, years, counts.
 */
function factText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (typeof value === 'number' && !Number.isInteger(value))
    return value.toLocaleString('en', { maximumSignificantDigits: 4, useGrouping: false });
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export function Facts({ data, keys }: { data: Record<string, unknown>; keys?: string[] }) {
  const shown = keys ?? Object.keys(data).filter((k) => typeof data[k] !== 'object' || data[k] === null);
  return (
    <dl class="facts">
      {shown.map((k) => (
        <div key={k}>
          <dt>{k.replace(/_/g, ' ')}</dt>
          <dd>{factText(data[k])}</dd>
        </div>
      ))}
    </dl>
  );
}
