import type { Metric, Registry } from 'prom-client';

/** One label set's counts; opaque to callers, who only hand it back to `observeIn`. */
export type HistogramSeries = Series;

interface Series {
  values: readonly string[];
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative), the last one past every bound (+Inf). */
  counts: number[];
  sum: number;
  count: number;
  /** Set by `reset`: whoever kept this series must look it up again. */
  dropped: boolean;
}

/**
 * A Prometheus histogram for the busiest paths (every API and protocol request): label values are
 * passed in order and a series is found by one string key. prom-client's `Histogram.observe`
 * re-validates and re-hashes its label object on every call, about 1 µs, a thirtieth of a
 * cached API read. The exposition is prom-client's own: the registry formats what `get` returns,
 * with buckets cumulative, then `+Inf`, `_sum` and `_count`, as its Histogram writes them.
 */
export class KeyedHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** Counts `value` under the label values given in `labelNames` order. */
  observe(values: readonly string[], value: number): void {
    if (Number.isFinite(value)) this.observeIn(this.seriesOf(values), value);
  }

  /**
   * The series of these label values, made on first use: a caller that knows its labels ahead
   * (a route, by method and status) keeps it and counts with `observeIn`, with no key to build.
   */
  seriesOf(values: readonly string[]): HistogramSeries {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => {
        labels[name] = values[i] ?? '';
      });
      s = {
        values: [...values],
        labels,
        counts: new Array<number>(this.bounds.length + 1).fill(0),
        sum: 0,
        count: 0,
        dropped: false,
      };
      this.series.set(key, s);
    }
    return s;
  }

  /**
   * Counts `value` in a series `seriesOf` gave; returns the series it was counted in, which is
   * another one after a `reset` dropped the old (keep the returned one).
   */
  observeIn(series: HistogramSeries, value: number): HistogramSeries {
    const s = series.dropped ? this.seriesOf(series.values) : series;
    if (!Number.isFinite(value)) return s;
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    s.counts[i]!++;
    s.sum += value;
    s.count++;
    return s;
  }

  /** What prom-client's registry reads to write the exposition (the shape its Histogram returns). */
  get() {
    const values: {
      labels: Record<string, string | number>;
      value: number;
      metricName: string;
      exemplar?: null;
    }[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({
          labels: { le, ...s.labels },
          value: cumulative,
          metricName: `${this.name}_bucket`,
          exemplar: null,
        });
      });
      values.push({
        labels: { le: '+Inf', ...s.labels },
        value: s.count,
        metricName: `${this.name}_bucket`,
        exemplar: null,
      });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const s of this.series.values()) s.dropped = true;
    this.series.clear();
  }
}
