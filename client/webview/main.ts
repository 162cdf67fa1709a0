// The Divergence webview: the selected pair's metric as three uPlot charts on one step axis (the runs
// overlaid, each later run minus the first, their ULP distance on a log scale), the first divergent
// step marked on each, and the verdict table, which is also the charts' text alternative. The data
// is the engine's per-step series that the host fetched with `bitexact/pairSeries`; nothing here
// reads a log. Zoom: drag across a chart, the buttons, or the keys on the charts (arrows pan, + and
// − zoom, Home shows every step, D the steps around the first divergence).
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import type { MetricSeriesView, PairSeries } from '../../server/src/runs/pair-series-wire.js';
import { PairExtras, PairLabel, WebviewMessage, WebviewState, isHostMessage } from '../src/divergence-protocol.js';
import { Drawn, Table, alignRuns, aroundFirst, comparedTables, drawnPoints, fromWire } from './chart-data.js';
import { el } from './dom.js';
import { extrasSections } from './pair-extras.js';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void; getState(): unknown; setState(state: unknown): void };

/** What the Content-Security-Policy refused once the app ran (none expected: see the e2e test). */
const refused: string[] = [];
document.addEventListener('securitypolicyviolation', (e) => refused.push(`${e.violatedDirective} ${e.blockedURI}`));

const vscode = acquireVsCodeApi();
const post = (message: WebviewMessage) => vscode.postMessage(message);
const app = document.getElementById('app')!;

interface ChartSpec {
  id: 'values' | 'difference' | 'ulp';
  caption: string;
  table: Table;
  labels: string[];
  log?: boolean;
}

interface Shown {
  pair: PairLabel;
  series: PairSeries;
  /** Where the runs part in the source, the variants (pair-extras.ts). */
  extras: PairExtras;
  metric: MetricSeriesView;
  specs: ChartSpec[];
  charts: { spec: ChartSpec; plot: uPlot; drawn: Drawn }[];
  /** Steps shown, or null for all. */
  range: [number, number] | null;
}

let shown: Shown | undefined;

/** The charts follow the view's width (one observer, moved to each new charts section). */
const resizes = new ResizeObserver((entries) => {
  const w = entries[0]?.target.clientWidth ?? 0;
  if (w > 0) for (const c of shown?.charts ?? []) if (c.plot.width !== w) c.plot.setSize({ width: w, height: c.plot.height });
});

const state = (): WebviewState => (vscode.getState() as WebviewState | undefined) ?? {};

window.addEventListener('message', (event: MessageEvent) => {
  const message: unknown = event.data;
  if (!isHostMessage(message)) return void statusLine(`bitexact: not a Divergence message: ${JSON.stringify(message)?.slice(0, 200)}`, true);
  if (message.type === 'empty') return void statusLine('Select a pair in the Runs view to see where its runs part.');
  if (message.type === 'loading') return void statusLine(`Reading the logs of ${message.pair.title}…`);
  if (message.type === 'failed') return void statusLine(`${message.pair.title}: ${message.message}`, true);
  const saved = state();
  const same = saved.key === message.pair.key;
  const name = message.metric ?? (same ? saved.metric : undefined);
  const extras: PairExtras = { ...(message.place ? { place: message.place } : {}), ...(message.variants ? { variants: message.variants } : {}) };
  show(message.pair, message.series, name, same && !message.metric ? (saved.range ?? null) : null, extras);
});

// A theme change (body class vscode-light, vscode-dark, vscode-high-contrast…) recolours the canvases.
new MutationObserver(() => {
  if (shown) show(shown.pair, shown.series, shown.metric.name, shown.range, shown.extras);
}).observe(document.body, { attributes: true, attributeFilter: ['class'] });

post({ type: 'ready' });

function statusLine(text: string, error = false): void {
  destroyCharts();
  shown = undefined;
  app.replaceChildren(el('p', { id: 'status', role: error ? 'alert' : 'status', class: error ? 'error' : '' }, text));
}

function destroyCharts(): void {
  resizes.disconnect();
  for (const c of shown?.charts ?? []) c.plot.destroy();
}

function show(pair: PairLabel, series: PairSeries, metricName: string | undefined, range: [number, number] | null, extras: PairExtras = {}): void {
  destroyCharts();
  const metric = series.metrics.find((m) => m.name === metricName) ?? series.metrics[0];
  const header = el('header', {}, el('h2', { id: 'title' }, pair.title), el('p', { id: 'headline', class: `headline ${pair.verdict}` }, pair.headline));
  const sections = extrasSections(extras, post);
  if (!metric) {
    shown = undefined;
    app.replaceChildren(header, ...sections, el('p', { id: 'status', role: 'alert', class: 'error' }, series.error ?? 'The runs logged no metric.'));
    return;
  }
  const first = metric.runs[0]?.label ?? 'run 1';
  const { diff, ulp } = comparedTables(metric);
  const specs: ChartSpec[] = [
    { id: 'values', caption: `${metric.name}: ${metric.runs.map((r) => r.label).join(' and ')}`, table: alignRuns(metric.runs), labels: metric.runs.map((r) => r.label) },
    { id: 'difference', caption: `difference (${metric.compared.against.map((a) => `${a.label} − ${first}`).join(', ')})`, table: diff, labels: metric.compared.against.map((a) => `${a.label} − ${first}`) },
    {
      id: 'ulp',
      caption: metric.ulpOf ? `ULP distance (${metric.ulpOf}, log scale; 0 is not drawn)` : `ULP distance: not counted (${metric.exact ? 'whole numbers' : 'the log keeps only printed digits'})`,
      table: ulp,
      labels: metric.compared.against.map((a) => `${a.label} ULPs`),
      log: true,
    },
  ];
  const picker = el('select', { id: 'metric', 'aria-label': 'Metric' }) as HTMLSelectElement;
  for (const m of series.metrics) {
    const option = el('option', { value: m.name }, `${m.name} — ${verdictText(m)}`) as HTMLOptionElement;
    option.selected = m === metric;
    picker.append(option);
  }
  picker.addEventListener('change', () => {
    show(pair, series, picker.value, null, extras);
    document.getElementById('metric')?.focus();
  });
  const button = (id: string, text: string, title: string, action: () => void) => {
    const b = el('button', { id, type: 'button', title, 'aria-label': title }, text);
    b.addEventListener('click', action);
    return b;
  };
  const fds = metric.firstDivergentStep;
  const controls = el(
    'div',
    { class: 'controls', role: 'toolbar', 'aria-label': 'Chart range' },
    el('label', {}, 'Metric ', picker),
    button('to-first', 'First divergence', 'Every step around the first divergent step (D)', () => fds !== null && setRange(aroundFirst(specs[0]!.table, fds))),
    button('show-all', 'All steps', 'Every step of the run (Home)', () => setRange(null)),
    button('pan-left', '◀', 'Earlier steps (←)', () => pan(-1)),
    button('pan-right', '▶', 'Later steps (→)', () => pan(1)),
    button('zoom-in', '+', 'Zoom in (+)', () => zoom(0.5)),
    button('zoom-out', '−', 'Zoom out (−)', () => zoom(2)),
  );
  (controls.querySelector('#to-first') as HTMLButtonElement).disabled = fds === null;
  const charts = el('section', {
    id: 'charts',
    tabindex: '0',
    'aria-label': `Charts of ${metric.name}${fds !== null ? `, first divergent step ${fds}` : ''}. Arrow keys pan, + and − zoom, Home shows every step, D the first divergence. The table below has the same facts as text.`,
  });
  charts.addEventListener('keydown', onChartKey);
  const figures = specs.map((spec) => el('figure', { id: `chart-${spec.id}` }, el('figcaption', {}, spec.caption), el('div', { class: 'plot' })));
  charts.append(...figures);
  const note = el('p', { id: 'window', class: 'note' });
  const reading = series.reading ? el('p', { id: 'reading', class: 'note' }, series.reading) : '';
  app.replaceChildren(header, ...sections, controls, charts, note, verdictTable(series, metric, pair, extras), reading);

  const width = Math.max(240, charts.clientWidth || app.clientWidth || 320);
  shown = { pair, series, extras, metric, specs, charts: [], range };
  shown.charts = specs.map((spec, i) => {
    const drawn = pointsFor(spec, range, fds);
    const plot = new uPlot(chartOptions(spec, width, fds, i === 0), drawn.data, figures[i]!.querySelector('.plot') as HTMLElement);
    placeMarker(plot, fds, i === 0);
    return { spec, plot, drawn };
  });
  if (range) moveScales(range);
  describeWindow();
  resizes.disconnect();
  resizes.observe(charts);
  vscode.setState({ key: pair.key, metric: metric.name, ...(range ? { range } : {}) } satisfies WebviewState);
}

function pointsFor(spec: ChartSpec, range: [number, number] | null, fds: number | null): Drawn {
  const x = spec.table.x;
  return drawnPoints(spec.table, range ? range[0] : (x[0] ?? 0), range ? range[1] : (x[x.length - 1] ?? 0), fds);
}

function setRange(range: [number, number] | null): void {
  if (!shown) return;
  shown.range = range;
  const fds = shown.metric.firstDivergentStep;
  for (const c of shown.charts) {
    c.drawn = pointsFor(c.spec, range, fds);
    c.plot.setData(c.drawn.data, range === null);
  }
  if (range) moveScales(range);
  describeWindow();
  vscode.setState({ key: shown.pair.key, metric: shown.metric.name, ...(range ? { range } : {}) } satisfies WebviewState);
}

function moveScales([min, max]: [number, number]): void {
  for (const c of shown?.charts ?? []) c.plot.setScale('x', { min, max });
}

/** The steps shown now: the range, or the whole values axis. */
function currentRange(): [number, number] {
  const x = shown!.specs[0]!.table.x;
  return shown!.range ?? [x[0] ?? 0, x[x.length - 1] ?? 0];
}

function pan(direction: number): void {
  if (!shown) return;
  const [lo, hi] = currentRange();
  const x = shown.specs[0]!.table.x;
  const width = hi - lo;
  const shift = Math.max(1, Math.round(width / 4)) * direction;
  const min = x[0] ?? 0;
  const max = x[x.length - 1] ?? 0;
  const from = Math.min(Math.max(lo + shift, min), Math.max(min, max - width));
  setRange([from, from + width]);
}

function zoom(factor: number): void {
  if (!shown) return;
  const [lo, hi] = currentRange();
  const x = shown.specs[0]!.table.x;
  const fds = shown.metric.firstDivergentStep;
  const centre = fds !== null && fds >= lo && fds <= hi ? fds : (lo + hi) / 2;
  const half = Math.max(1, ((hi - lo) * factor) / 2);
  const min = x[0] ?? 0;
  const max = x[x.length - 1] ?? 0;
  if (half * 2 >= max - min) return setRange(null);
  setRange([Math.max(min, Math.round(centre - half)), Math.min(max, Math.round(centre + half))]);
}

function onChartKey(event: KeyboardEvent): void {
  const actions: Record<string, () => void> = {
    ArrowLeft: () => pan(-1),
    ArrowRight: () => pan(1),
    '+': () => zoom(0.5),
    '=': () => zoom(0.5),
    '-': () => zoom(2),
    Home: () => setRange(null),
    d: () => (document.getElementById('to-first') as HTMLButtonElement | null)?.click(),
  };
  const action = actions[event.key];
  if (!action) return;
  event.preventDefault();
  action();
}

function describeWindow(): void {
  const note = document.getElementById('window');
  if (!note || !shown) return;
  const [lo, hi] = currentRange();
  const values = shown.charts[0]!.drawn;
  note.textContent = values.full
    ? `Steps ${lo}–${hi}: every step drawn. Drag across a chart to zoom.`
    : `Steps ${lo}–${hi}: ${values.steps} steps drawn as each bucket's lowest and highest points (the ${shown.metric.firstDivergentStep !== null ? 'steps around the first divergence are drawn one by one' : 'extremes are kept'}); zoom in to see every step.`;
}

function chartOptions(spec: ChartSpec, width: number, fds: number | null, labelled: boolean): uPlot.Options {
  const colours = ['--vscode-charts-blue', '--vscode-charts-orange', '--vscode-charts-green', '--vscode-charts-purple', '--vscode-charts-yellow', '--vscode-charts-red'];
  const foreground = cssVar('--vscode-foreground', '#888');
  const grid = cssVar('--vscode-editorWidget-border', cssVar('--vscode-panel-border', '#8884'));
  const axis: uPlot.Axis = { stroke: foreground, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const exact = (_: uPlot, v: number | null) => (v === null || v === undefined ? '—' : String(v));
  return {
    width,
    height: spec.id === 'values' ? 170 : 130,
    legend: { show: true, live: true },
    cursor: { sync: { key: 'bitexact-divergence', setSeries: true }, drag: { x: true, y: false, setScale: false }, bind: { dblclick: () => () => (setRange(null), null) } },
    scales: {
      ...(spec.id === 'difference'
        ? {
            // Around 0, the same both ways: a difference's sign and size read at a glance.
            y: { range: (_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax => symmetric(min, max) },
          }
        : {}),
      // The steps as they are: no rounding of the axis to tidy numbers.
      x: { time: false, range: (_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax => (min === null || max === null ? [0, 1] : min === max ? [min - 1, max + 1] : [min, max]) },
      ...(spec.log
        ? {
            y: {
              distr: 3,
              log: 10,
              range: (_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax => (min === null || max === null || !(max > 0) ? [1, 10] : uPlot.rangeLog(min, Math.max(max, min * 10), 10, true)),
            },
          }
        : {}),
    },
    axes: [{ ...axis, values: (_u, splits) => splits.map((s) => (Number.isInteger(s) ? String(s) : '')) }, { ...axis, size: 70, space: 20, values: (_u, splits) => splits.map(tick) }],
    series: [
      { label: 'step', value: (_u, v) => (v === null || v === undefined ? '—' : String(v)) },
      ...spec.labels.map((label, i): uPlot.Series => ({
        label,
        stroke: cssVar(colours[i % colours.length]!, '#36c'),
        width: 1.5,
        // Later runs dashed: where the runs agree, both lines stay visible.
        ...(i > 0 && spec.id === 'values' ? { dash: [6, 4] } : {}),
        spanGaps: false,
        value: exact,
        points: { show: (u: uPlot) => u.data[0].length < 120 },
      })),
    ],
    hooks: {
      // A drag across a chart picks steps: every chart shows them, re-thinned for the new window.
      setSelect: [
        (u) => {
          if (!shown || u.select.width < 2) return;
          const lo = Math.floor(u.posToVal(u.select.left, 'x'));
          const hi = Math.ceil(u.posToVal(u.select.left + u.select.width, 'x'));
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          if (hi > lo) setRange([lo, hi]);
        },
      ],
      draw: [(u) => placeMarker(u, fds, labelled)],
    },
  };
}

/** [-b, b] for the larger of |min| and |max|, b rounded up to 1, 2 or 5 times a power of ten (so ±b are ticks). */
function symmetric(min: number | null, max: number | null): [number, number] {
  const m = Math.max(Math.abs(min ?? 0), Math.abs(max ?? 0));
  if (!(m > 0) || !Number.isFinite(m)) return [-1, 1];
  const power = 10 ** Math.floor(Math.log10(m));
  const bound = ([1, 2, 5, 10].find((k) => k * power >= m) ?? 10) * power;
  return [-bound, bound];
}

/** A y tick: short, and never rounded to 0 when it is not (differences are often 1e-9). */
function tick(v: number | null): string {
  if (v === null || v === undefined) return '';
  if (v === 0) return '0';
  const a = Math.abs(v);
  return a < 1e-3 || a >= 1e6 ? v.toExponential(1) : String(Number(v.toPrecision(4)));
}

/** A dashed line at the first divergent step (a DOM element over the canvas, so it is in the page's text too). */
function placeMarker(u: uPlot, step: number | null, labelled: boolean): void {
  let marker = u.over.querySelector<HTMLElement>('.first-divergence');
  if (step === null) return void marker?.remove();
  if (!marker) {
    marker = el('div', { class: 'first-divergence', 'data-step': String(step), role: 'img', 'aria-label': `first divergent step ${step}` }, labelled ? el('span', {}, `first divergent step ${step}`) : '') as HTMLElement;
    u.over.append(marker);
  }
  const left = u.valToPos(step, 'x');
  const inside = Number.isFinite(left) && left >= 0 && left <= u.over.clientWidth;
  marker.hidden = !inside && u.over.clientWidth > 0;
  marker.style.left = `${Number.isFinite(left) ? left : 0}px`;
}

function verdictTable(series: PairSeries, current: MetricSeriesView, pair: PairLabel, extras: PairExtras): HTMLElement {
  const runLabels = series.runs.map((r) => r.label);
  const head = el('tr', {}, ...['metric', 'verdict', 'first divergent step', ...runLabels.map((l) => `${l} there`), 'max ULP', 'max rel', 'precision'].map((h) => el('th', { scope: 'col' }, h)));
  const rows = series.metrics.map((m) => {
    const pick = el('button', { type: 'button', class: 'link', title: `Chart ${m.name}` }, m.name);
    pick.addEventListener('click', () => {
      show(pair, series, m.name, null, extras);
    });
    const at = m.atFirstDivergence;
    const cells = runLabels.map((label) => at?.runs.find((r) => r.label === label)?.text ?? '—');
    const row = el(
      'tr',
      { 'data-metric': m.name, class: m === current ? 'current' : '', ...(m === current ? { 'aria-current': 'true' } : {}) },
      el('th', { scope: 'row' }, pick),
      el('td', { class: `verdict ${m.timing ? 'timing' : m.verdict}` }, m.timing ? `${m.verdict} (timing, never counted)` : m.verdict),
      el('td', { class: 'first' }, m.firstDivergentStep === null ? '—' : String(m.firstDivergentStep)),
      ...cells.map((c) => el('td', { class: 'value' }, c)),
      el('td', {}, m.maxUlp === null ? '—' : `${m.maxUlp}${m.ulpOf ? ` ${m.ulpOf === 'float32' ? 'f32' : 'f64'}` : ''}`),
      el('td', {}, m.maxRel === null ? '—' : fromWire(m.maxRel).toExponential(2)),
      el('td', {}, m.precision),
    );
    return row;
  });
  return el('table', { id: 'verdicts' }, el('caption', {}, 'Verdicts per metric (the charts as text)'), el('thead', {}, head), el('tbody', {}, ...rows));
}

function verdictText(m: MetricSeriesView): string {
  if (m.timing) return 'timing';
  return m.firstDivergentStep === null ? m.verdict : `${m.verdict} from step ${m.firstDivergentStep}`;
}

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

/**
 * What the charts plot now, for tests and for a look in the webview's developer tools: per chart,
 * its line labels and uPlot's own data arrays; and the step the marker stands at.
 */
(window as unknown as { bitexactDivergence: unknown }).bitexactDivergence = {
  plotted: () =>
    shown?.charts.map((c) => ({
      id: c.spec.id,
      labels: c.spec.labels,
      full: c.drawn.full,
      data: c.plot.data.map((column) => Array.from(column as ArrayLike<number | null>)),
      scale: { min: c.plot.scales.x!.min ?? null, max: c.plot.scales.x!.max ?? null },
      // The lines' colours as uPlot draws them (from the theme's --vscode-charts-* at the last render).
      strokes: c.plot.series.slice(1).map((s) => (typeof s.stroke === 'function' ? s.stroke(c.plot, 1) : s.stroke)),
    })) ?? [],
  refused: () => [...refused],
};
