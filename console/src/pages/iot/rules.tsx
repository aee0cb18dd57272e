import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { type ApiProblem, must } from '../../api.js';
import { useApi } from '../../context.js';
import { DataTable, type Row } from '../../ui/table.js';
import { Panel, QueryView } from '../../ui/widgets.js';
import { DeleteButton } from './collection.js';

const SEVERITIES = ['critical', 'major', 'minor', 'warning'] as const;
const OPERATORS = ['>', '>=', '<', '<=', '==', '!=', 'between', 'contains'] as const;
const TYPES = ['simple', 'repeating', 'duration', 'inactivity'] as const;
const TARGETS = ['all', 'device', 'group', 'profile', 'device_type'] as const;

interface FilterDraft {
  key: string;
  source: 'telemetry' | 'attribute';
  operator: (typeof OPERATORS)[number];
  value: string;
  min: string;
  max: string;
}
const blank = (): FilterDraft => ({
  key: '',
  source: 'telemetry',
  operator: '>',
  value: '',
  min: '',
  max: '',
});

/** A value typed into the editor as the API wants it: a number, a boolean, or text. */
function scalar(s: string): number | boolean | string {
  if (s === 'true' || s === 'false') return s === 'true';
  return s.trim() !== '' && Number.isFinite(Number(s)) ? Number(s) : s;
}

/** What a rule's condition says, in words, for the list. */
function describe(rule: Row): string {
  const sev = (rule['severities'] ?? {}) as Record<string, Row>;
  return Object.entries(sev)
    .map(([s, c]) => {
      const filters = ((c['filters'] ?? []) as Row[])
        .map((f) =>
          f['operator'] === 'between'
            ? `${String(f['key'])} between ${String(f['min'])} and ${String(f['max'])}`
            : `${String(f['key'])} ${String(f['operator'])} ${String(f['value'])}`,
        )
        .join(' and ');
      const how =
        c['type'] === 'repeating'
          ? ` ${String(c['count'])} times in a row`
          : c['type'] === 'duration'
            ? ` for ${String(c['duration_seconds'])} s`
            : c['type'] === 'inactivity'
              ? `no data for ${String(c['inactivity_seconds'])} s`
              : '';
      return `${s}: ${filters}${how}`;
    })
    .join('; ');
}

/** Alarm rules: the list (enable, disable, delete) and an editor for a rule's condition. */
export function RulesPage() {
  const api = useApi();
  const queries = useQueryClient();
  const rules = useQuery({
    queryKey: ['iot', 'rules'],
    queryFn: async () => (await must(api.GET('/v1/iot/rules'))).rules as unknown as Row[],
  });
  const [note, setNote] = useState('');
  const refresh = async (n: string) => {
    setNote(n);
    await queries.invalidateQueries({ queryKey: ['iot', 'rules'] });
  };
  return (
    <section>
      <h1>Alarm rules</h1>
      <Panel title="Create an alarm rule" open={rules.data?.length === 0}>
        <RuleEditor onCreated={(name) => refresh(`The rule ${name} was created.`)} />
      </Panel>
      <p role="status" class="notice">
        {note}
      </p>
      <QueryView query={rules} what="rules">
        {(data) => (
          <DataTable
            name="rules"
            label="Alarm rules"
            rows={data ?? []}
            columns={[
              { key: 'name', label: 'Name' },
              { key: 'enabled', label: 'Enabled', render: (r) => (r['enabled'] ? 'yes' : 'no') },
              {
                key: 'target',
                label: 'Applies to',
                render: (r) => {
                  const t = r['target'] as Row;
                  return t['value'] ? `${String(t['type'])} ${String(t['value'])}` : String(t['type']);
                },
              },
              { key: 'severities', label: 'Condition', render: describe },
            ]}
            actions={(r) => {
              const path = { params: { path: { rule_id: String(r['id']) } } };
              return (
                <>
                  <button
                    type="button"
                    aria-label={`${r['enabled'] ? 'Disable' : 'Enable'} rule ${String(r['name'])}`}
                    onClick={async () => {
                      await must(
                        r['enabled']
                          ? api.POST('/v1/iot/rules/{rule_id}/disable', path)
                          : api.POST('/v1/iot/rules/{rule_id}/enable', path),
                      );
                      await refresh(
                        `The rule ${String(r['name'])} was ${r['enabled'] ? 'disabled' : 'enabled'}.`,
                      );
                    }}
                  >
                    {r['enabled'] ? 'Disable' : 'Enable'}
                  </button>{' '}
                  <DeleteButton
                    what="rule"
                    name={String(r['name'])}
                    onDelete={async () => {
                      await must(api.DELETE('/v1/iot/rules/{rule_id}', path));
                      await refresh(`The rule ${String(r['name'])} was deleted.`);
                    }}
                  />
                </>
              );
            }}
            empty={<p>No alarm rules yet. Create one above: a condition on telemetry raises an alarm.</p>}
          />
        )}
      </QueryView>
    </section>
  );
}

/** The condition editor: target, severity, kind of condition, and its filters (all must hold). */
function RuleEditor({ onCreated }: { onCreated(name: string): Promise<void> }) {
  const api = useApi();
  const [name, setName] = useState('');
  const [target, setTarget] = useState<(typeof TARGETS)[number]>('all');
  const [targetValue, setTargetValue] = useState('');
  const [severity, setSeverity] = useState<(typeof SEVERITIES)[number]>('major');
  const [type, setType] = useState<(typeof TYPES)[number]>('simple');
  const [count, setCount] = useState('3');
  const [seconds, setSeconds] = useState('300');
  const [filters, setFilters] = useState<FilterDraft[]>([blank()]);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const set = (i: number, patch: Partial<FilterDraft>) =>
    setFilters((fs) => fs.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  return (
    <form
      class="rule-editor"
      onSubmit={async (e) => {
        e.preventDefault();
        setProblem(null);
        const condition: Record<string, unknown> = { type };
        if (type !== 'inactivity')
          condition['filters'] = filters.map((f) => ({
            key: f.key,
            source: f.source,
            operator: f.operator,
            ...(f.operator === 'between'
              ? { min: Number(f.min), max: Number(f.max) }
              : { value: scalar(f.value) }),
          }));
        if (type === 'repeating') condition['count'] = Number(count);
        if (type === 'duration') condition['duration_seconds'] = Number(seconds);
        if (type === 'inactivity') condition['inactivity_seconds'] = Number(seconds);
        try {
          await must(
            api.POST('/v1/iot/rules', {
              body: {
                name,
                target: { type: target, value: target === 'all' ? null : targetValue },
                severities: { [severity]: condition },
              } as never,
            }),
          );
          setName('');
          setFilters([blank()]);
          await onCreated(name);
        } catch (err) {
          setProblem(err as ApiProblem);
        }
      }}
    >
      <div class="field">
        <label for="rule-name">Name</label>
        <input id="rule-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div class="field-row">
        <label>
          Applies to{' '}
          <select
            value={target}
            onChange={(e) => setTarget(e.currentTarget.value as (typeof TARGETS)[number])}
          >
            {TARGETS.map((t) => (
              <option key={t} value={t}>
                {t === 'all' ? 'all devices' : t.replace('_', ' ')}
              </option>
            ))}
          </select>
        </label>
        {target !== 'all' && (
          <label>
            Which {target.replace('_', ' ')}{' '}
            <input required value={targetValue} onInput={(e) => setTargetValue(e.currentTarget.value)} />
          </label>
        )}
        <label>
          Severity{' '}
          <select
            value={severity}
            onChange={(e) => setSeverity(e.currentTarget.value as (typeof SEVERITIES)[number])}
          >
            {SEVERITIES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Raise when{' '}
          <select value={type} onChange={(e) => setType(e.currentTarget.value as (typeof TYPES)[number])}>
            <option value="simple">a message matches</option>
            <option value="repeating">messages match in a row</option>
            <option value="duration">the values match for a time</option>
            <option value="inactivity">the device goes quiet</option>
          </select>
        </label>
        {type === 'repeating' && (
          <label>
            Messages in a row{' '}
            <input type="number" min={1} value={count} onInput={(e) => setCount(e.currentTarget.value)} />
          </label>
        )}
        {(type === 'duration' || type === 'inactivity') && (
          <label>
            Seconds{' '}
            <input
              type="number"
              min={type === 'inactivity' ? 60 : 1}
              value={seconds}
              onInput={(e) => setSeconds(e.currentTarget.value)}
            />
          </label>
        )}
      </div>
      {type !== 'inactivity' && (
        <fieldset>
          <legend>Conditions (all must hold)</legend>
          {filters.map((f, i) => (
            <div class="field-row" key={i}>
              <label>
                Key {i + 1}{' '}
                <input required value={f.key} onInput={(e) => set(i, { key: e.currentTarget.value })} />
              </label>
              <label>
                From{' '}
                <select
                  value={f.source}
                  onChange={(e) => set(i, { source: e.currentTarget.value as FilterDraft['source'] })}
                >
                  <option value="telemetry">telemetry</option>
                  <option value="attribute">attribute</option>
                </select>
              </label>
              <label>
                Operator {i + 1}{' '}
                <select
                  value={f.operator}
                  onChange={(e) => set(i, { operator: e.currentTarget.value as FilterDraft['operator'] })}
                >
                  {OPERATORS.map((o) => (
                    <option key={o}>{o}</option>
                  ))}
                </select>
              </label>
              {f.operator === 'between' ? (
                <>
                  <label>
                    Min{' '}
                    <input
                      required
                      type="number"
                      value={f.min}
                      onInput={(e) => set(i, { min: e.currentTarget.value })}
                    />
                  </label>
                  <label>
                    Max{' '}
                    <input
                      required
                      type="number"
                      value={f.max}
                      onInput={(e) => set(i, { max: e.currentTarget.value })}
                    />
                  </label>
                </>
              ) : (
                <label>
                  Value {i + 1}{' '}
                  <input required value={f.value} onInput={(e) => set(i, { value: e.currentTarget.value })} />
                </label>
              )}
              {filters.length > 1 && (
                <button type="button" onClick={() => setFilters((fs) => fs.filter((_, j) => j !== i))}>
                  Remove condition {i + 1}
                </button>
              )}
            </div>
          ))}
          <button type="button" onClick={() => setFilters((fs) => [...fs, blank()])}>
            Add a condition
          </button>
        </fieldset>
      )}
      {problem && (
        <p class="error" role="alert">
          {problem.message}
          {Object.entries(problem.fields).map(([k, v]) => ` ${k}: ${v}`)}
        </p>
      )}
      <button type="submit" class="primary">
        Create rule
      </button>
    </form>
  );
}
