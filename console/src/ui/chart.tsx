import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** One line of a chart: its name and its values, aligned with the chart's times. */
export interface Series {
  label: string;
  values: (number | null)[];
}

const COLOURS = ['#0b7bd8', '#d8590b', '#2e9e44', '#9b3fc4', '#c4283f', '#6b7a00'];

/**
 * A time-series chart (uPlot, drawn on a canvas: thousands of points redraw in a millisecond).
 * `times` are epoch seconds. New data redraws the same chart (`setData`), so a live chart fed
 * several times a second keeps its size, legend and cursor. The canvas is an image to assistive
 * technology, named by `label`; the numbers themselves are in the page's tables.
 */
export function TimeChart({
  label,
  times,
  series,
  height = 220,
  bars = false,
  unit = '',
}: {
  label: string;
  times: number[];
  series: Series[];
  height?: number;
  bars?: boolean;
  unit?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const shape = series.map((s) => s.label).join('\u0000');
  // The chart is rebuilt only when its lines change; new data goes through setData below.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const styles = getComputedStyle(document.documentElement);
    const ink = styles.getPropertyValue('--muted').trim() || '#555';
    const grid = styles.getPropertyValue('--line').trim() || '#ddd';
    const axis = { stroke: ink, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: COLOURS[i % COLOURS.length],
          width: 2,
          fill: bars ? `${COLOURS[i % COLOURS.length]}55` : undefined,
          paths: bars ? uPlot.paths.bars?.({ size: [0.6, 40] }) : undefined,
          points: { show: times.length < 60 },
          value: (_u: uPlot, v: number | null) => (v === null ? '—' : `${+v.toFixed(3)}${unit}`),
        })),
      ],
      axes: [axis, { ...axis, size: 80 }],
      scales: { x: { time: true } },
      cursor: { drag: { x: true, y: false } },
    };
    const u = new uPlot(opts, [times, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    chart.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      chart.current = null;
    };
  }, [shape, height, bars]);
  useEffect(() => {
    chart.current?.setData([times, ...series.map((s) => s.values)] as uPlot.AlignedData);
  }, [times, series]);
  return <div class="chart" ref={box} role="img" aria-label={label} data-points={times.length} />;
}
