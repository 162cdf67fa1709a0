// The Divergence webview app (the bundle dist/webview/divergence.js, as VS Code loads it) in a DOM
// (happy-dom), fed the messages the host posts: the engine's series of a real pair, read by the
// engine's readers, through JSON as postMessage carries them. happy-dom has no canvas: a 2D context
// that draws nothing stands in for it (uPlot draws through it), so what is checked is what uPlot was
// given to plot and its scales, the marker, the table, state and messages; the e2e test sees the pixels.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HTMLButtonElement, HTMLSelectElement, Window } from 'happy-dom';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { divergenceHtml } from '../../client/src/divergence-html.js';
import { HostMessage, PairLabel, WebviewState, isWebviewMessage, placesOf } from '../../client/src/divergence-protocol.js';
import { summarizeReport } from '../../client/src/runs-summary.js';
import { PAIR_DIVERGENCE_METHOD, PairDivergence, PairDivergenceResult } from '../../server/src/runs/pair-divergence-wire.js';
import { parseReport } from '../../server/src/runs/report-schema.js';
import { PairSeries, fromWire, readPairSeries } from '../../server/src/runs/pair-series.js';
import { readRequest } from '../../server/src/runs/read-logs.js';
import { ROOT } from '../support/checker.js';
import { startLsp } from '../support/lsp.js';

const BUNDLE = path.join(ROOT, 'dist/webview/divergence.js');
const DIRS = ['a', 'b'].map((x) => path.join(ROOT, `test/fixtures/runs/real/hf/nondet/run-${x}`));
const PAIR: PairLabel = { key: 'hf-nondet', title: 'hf nondet', headline: 'DIFFERS from step 10: loss', verdict: 'differs' };

interface Plotted {
  id: string;
  labels: string[];
  full: boolean;
  data: (number | null)[][];
  scale: { min: number | null; max: number | null };
}

interface View {
  window: Window;
  document: Window['document'];
  posted: unknown[];
  state: () => WebviewState | undefined;
  send: (message: HostMessage | Record<string, unknown>) => void;
  plotted: () => Plotted[];
}

const bits = (v: number) => {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, v);
  return view.getBigUint64(0).toString(16);
};

/** uPlot applies scale changes in a microtask. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

let series: PairSeries;
let views: Window[] = [];

beforeAll(async () => {
  // As the host gets it from the server and posts it on: JSON both times.
  series = JSON.parse(JSON.stringify(await readPairSeries({ paths: DIRS }))) as PairSeries;
});

afterEach(async () => {
  for (const w of views) await w.happyDOM.close();
  views = [];
});

function openView(saved?: WebviewState): View {
  const window = new Window({ url: 'https://webview.test/', width: 420, height: 900, settings: { enableJavaScriptEvaluation: true, suppressInsecureJavaScriptEnvironmentWarning: true } });
  views.push(window);
  const posted: unknown[] = [];
  let state: unknown = saved;
  const nothing = new Proxy({}, { get: (_, key) => (key === 'measureText' ? () => ({ width: 0 }) : () => undefined), set: () => true });
  Object.defineProperty(window.HTMLCanvasElement.prototype, 'getContext', { value: () => nothing });
  Object.assign(window, {
    Path2D: class {
      moveTo() {}
      lineTo() {}
      rect() {}
      arc() {}
      closePath() {}
      bezierCurveTo() {}
      addPath() {}
    },
    acquireVsCodeApi: () => ({ postMessage: (m: unknown) => posted.push(JSON.parse(JSON.stringify(m))), getState: () => state, setState: (s: unknown) => (state = JSON.parse(JSON.stringify(s))) }),
  });
  const html = divergenceHtml({ cspSource: 'https://webview.test', scriptUri: 'https://webview.test/divergence.js', styleUri: 'https://webview.test/divergence.css', nonce: 'n0nce' });
  // The page without its script tag (happy-dom would fetch it), then the bundle run in the page.
  window.document.write(html.replace(/<script[^>]*><\/script>/, ''));
  window.eval(fs.readFileSync(BUNDLE, 'utf8'));
  const inspector = (window as unknown as { bitexactDivergence: { plotted: () => Plotted[] } }).bitexactDivergence;
  return {
    window,
    document: window.document,
    posted,
    state: () => state as WebviewState | undefined,
    send: (message) => window.dispatchEvent(new window.MessageEvent('message', { data: JSON.parse(JSON.stringify(message)) })),
    plotted: () => inspector.plotted(),
  };
}

describe('Divergence webview app', () => {
  it('says it is ready, then plots the engine series of each run with the first divergent step marked, bit for bit', () => {
    const view = openView();
    expect(view.posted).toEqual([{ type: 'ready' }]);
    expect(view.posted.every(isWebviewMessage)).toBe(true);
    view.send({ type: 'show', pair: PAIR, series });

    const loss = series.metrics.find((m) => m.name === 'loss')!;
    expect((view.document.querySelector('#metric') as unknown as HTMLSelectElement).value).toBe('loss');
    const [values, difference, ulp] = view.plotted();
    expect(values!.id).toBe('values');
    // Every step of both runs, as the engine read them (20 steps: all drawn).
    const engine = DIRS.map((dir) => readRequest({ file: path.join(dir, 'trainer_state.json'), format: 'auto' }).series.find((s) => s.name === 'loss')!);
    expect(values!.full).toBe(true);
    expect(values!.labels).toEqual(['run 1', 'run 2']);
    expect(values!.data[0]).toEqual(engine[0]!.steps);
    expect(values!.data.slice(1).map((c) => c.map((v) => bits(v!)))).toEqual(engine.map((s) => s.values.map(bits)));
    // At the first divergent step: the plotted points are the logged values, bit for bit, and differ.
    const at = values!.data[0]!.indexOf(loss.firstDivergentStep!);
    expect(loss.firstDivergentStep).toBe(10);
    for (const r of [0, 1]) {
      const logged = engine[r]!.values[engine[r]!.steps.indexOf(10)]!;
      expect(bits(values!.data[r + 1]![at]!)).toBe(bits(logged));
      expect(bits(values!.data[r + 1]![at]!)).toBe(bits(Number(engine[r]!.texts[engine[r]!.steps.indexOf(10)])));
    }
    expect(values!.data[1]![at]).not.toBe(values!.data[2]![at]);
    // The difference and ULP charts plot the engine's own per-step comparison.
    expect(difference!.data[1]).toEqual(loss.compared.against[0]!.diff.map(fromWire));
    expect(ulp!.data[1]).toEqual(loss.compared.against[0]!.ulp.map((u) => (u === 0 ? null : u)));
    expect(ulp!.data[1]![difference!.data[0]!.indexOf(10)]).toBe(1);
    // The marker stands at step 10 on all three charts, the first one saying so.
    const markers = [...view.document.querySelectorAll('.first-divergence')];
    expect(markers.map((m) => m.getAttribute('data-step'))).toEqual(['10', '10', '10']);
    expect(markers[0]!.textContent).toBe('first divergent step 10');
    expect(view.document.querySelector('#charts')!.getAttribute('aria-label')).toContain('first divergent step 10');
  });

  it('has the verdict table as the charts text alternative: every metric, its verdict, first step and the printed values there', () => {
    const view = openView();
    view.send({ type: 'show', pair: PAIR, series });
    const rows = [...view.document.querySelectorAll('#verdicts tbody tr')];
    expect(rows.map((r) => r.getAttribute('data-metric'))).toEqual(series.metrics.map((m) => m.name));
    for (const m of series.metrics) {
      const row = view.document.querySelector(`#verdicts tr[data-metric="${m.name}"]`)!;
      const cells = [...row.querySelectorAll('th, td')].map((c) => c.textContent);
      expect(cells[1]).toBe(m.timing ? `${m.verdict} (timing, never counted)` : m.verdict);
      expect(cells[2]).toBe(m.firstDivergentStep === null ? '—' : String(m.firstDivergentStep));
      const texts = ['run 1', 'run 2'].map((label) => m.atFirstDivergence?.runs.find((r) => r.label === label)?.text ?? '—');
      expect(cells.slice(3, 5)).toEqual(texts);
    }
    const loss = view.document.querySelector('#verdicts tr[data-metric="loss"]')!;
    expect(loss.getAttribute('aria-current')).toBe('true');
    expect(loss.querySelector('td:nth-of-type(5)')!.textContent).toBe('1 f32');
  });

  it('switches metric from the picker and the table, keeps metric and zoom across hide and show, and answers keys', async () => {
    const view = openView();
    view.send({ type: 'show', pair: PAIR, series });
    const picker = view.document.querySelector('#metric') as unknown as HTMLSelectElement;
    picker.value = 'train_loss';
    picker.dispatchEvent(new view.window.Event('change'));
    expect(view.posted).toEqual([{ type: 'ready' }]);
    expect(view.plotted()[0]!.data[0]).toEqual(series.metrics.find((m) => m.name === 'train_loss')!.runs[0]!.steps);
    (view.document.querySelector('#verdicts tr[data-metric="loss"] button') as unknown as HTMLButtonElement).click();
    expect((view.document.querySelector('#metric') as unknown as HTMLSelectElement).value).toBe('loss');

    // D: the steps around the first divergence (20 on each side, here the whole run); → pans.
    const charts = view.document.querySelector('#charts')!;
    (view.document.querySelector('#zoom-in') as unknown as HTMLButtonElement).click();
    await settled();
    const zoomed = view.plotted()[0]!.scale;
    expect(zoomed.min).toBeLessThanOrEqual(10);
    expect(zoomed.max).toBeGreaterThanOrEqual(10);
    expect(zoomed.max! - zoomed.min!).toBeLessThan(19);
    expect(view.state()).toEqual({ key: PAIR.key, metric: 'loss', range: [zoomed.min, zoomed.max] });
    charts.dispatchEvent(new view.window.KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    await settled();
    const panned = view.plotted()[0]!.scale;
    expect(panned.min).toBeGreaterThan(zoomed.min!);
    charts.dispatchEvent(new view.window.KeyboardEvent('keydown', { key: 'Home', bubbles: true }));
    expect(view.state()).toEqual({ key: PAIR.key, metric: 'loss' });
    charts.dispatchEvent(new view.window.KeyboardEvent('keydown', { key: '+', bubbles: true }));
    const saved = view.state()!;
    expect(saved.range).toBeDefined();

    // Hidden and shown again: a new page with the saved state, the host posting the pair without a metric.
    const again = openView(saved);
    again.send({ type: 'show', pair: PAIR, series });
    await settled();
    expect((again.document.querySelector('#metric') as unknown as HTMLSelectElement).value).toBe('loss');
    expect(again.plotted()[0]!.scale).toEqual({ min: saved.range![0], max: saved.range![1] });
    // Another pair starts from its own first metric and all steps.
    again.send({ type: 'show', pair: { ...PAIR, key: 'other' }, series });
    expect(again.state()).toEqual({ key: 'other', metric: series.metrics[0]!.name });
  });

  it('shows loading, failure and empty states, and drops a message that is not one of the host type', () => {
    const view = openView();
    view.send({ type: 'loading', pair: PAIR });
    expect(view.document.querySelector('#status')!.textContent).toBe('Reading the logs of hf nondet…');
    view.send({ type: 'failed', pair: PAIR, message: 'x: no such file or directory' });
    expect(view.document.querySelector('#status[role=alert]')!.textContent).toBe('hf nondet: x: no such file or directory');
    view.send({ type: 'show', pair: PAIR, series: { metrics: 'nope' } });
    expect(view.document.querySelector('#status[role=alert]')!.textContent).toContain('not a Divergence message');
    expect(view.plotted()).toEqual([]);
    view.send({ type: 'empty' });
    expect(view.document.querySelector('#status')!.textContent).toContain('Select a pair');
  });
});

describe('Divergence webview app: where a probed pair parts, and variants side by side', () => {
  it('lists the H200 pair\'s first divergent line and the findings on its path as the server answers them, each a link the host opens', async () => {
    // The recorded H200 pair in a workspace beside the MoE example, as in test/lsp/pair-divergence.test.ts.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-divergence-place-'));
    const train = path.join(dir, 'train.py');
    fs.copyFileSync(path.join(ROOT, 'examples/torch_moe/train.py'), train);
    const pair = path.join(dir, '.bitexact/runs/20261201-230724-train-aaf2');
    fs.cpSync(path.join(ROOT, 'test/fixtures/runs/pair-probe-h200'), pair, { recursive: true });
    const lsp = await startLsp(dir, {}, {}, { initialization: { divergenceDecorations: true } });
    let place: PairDivergence;
    try {
      place = ((await lsp.connection.sendRequest(PAIR_DIVERGENCE_METHOD, { dir: pair })) as PairDivergenceResult).divergence!;
    } finally {
      await lsp.close();
    }
    // The Runs tree asks the server only of a pair whose report has probe traces' localisation.
    expect(summarizeReport(fs.readFileSync(path.join(pair, 'report.json'), 'utf8')).probed).toBe(true);
    const probed = JSON.parse(JSON.stringify(await readPairSeries({ paths: [pair] }))) as PairSeries;
    const view = openView();
    view.send({ type: 'show', pair: { ...PAIR, key: pair }, series: probed, place });
    const line = view.document.querySelector('#localisation #divergent-line')!;
    expect(line.textContent).toBe(`${place.message} — train.py:41`);
    (line as unknown as HTMLButtonElement).click();
    expect(view.posted.at(-1)).toEqual({ type: 'open', path: train, line: 41 });
    // The findings on the path: BX101, on the divergent line itself, marked so.
    const items = [...view.document.querySelectorAll('#path-findings li')];
    expect(items.map((li) => [li.getAttribute('data-where'), li.className])).toEqual(place.findings.map((f) => [f.where, f.where === 'line' ? 'on-line' : '']));
    expect(items[0]!.textContent).toBe(`BX101 train.py:41 ● on the divergent line ${place.findings[0]!.message}`);
    (items[0]!.querySelector('button') as unknown as HTMLButtonElement).click();
    expect(view.posted.at(-1)).toEqual({ type: 'open', path: train, line: 41, column: place.findings[0]!.column });
    // The call path: each module's forward, a link too.
    const callers = [...view.document.querySelectorAll('#call-path button')].map((b) => b.textContent);
    expect(callers).toEqual(['blocks.0.moe (train.py:28)', 'blocks.0 (train.py:53)', 'MoE (train.py:66)']);
    // Every link's place is one the host will open, and it opens nothing else (placesOf is its gate).
    const places = placesOf(place).map((p) => `${p.path}:${p.line}`);
    for (const m of view.posted.filter((m): m is { type: 'open'; path: string; line: number } => (m as { type: string }).type === 'open')) {
      expect(isWebviewMessage(m)).toBe(true);
      expect(places).toContain(`${m.path}:${m.line}`);
    }
    expect(places).not.toContain(`${train}:1`);
    // Another metric picked: the section stays.
    const picker = view.document.querySelector('#metric') as unknown as HTMLSelectElement;
    picker.value = probed.metrics[1]!.name;
    picker.dispatchEvent(new view.window.Event('change'));
    expect(view.document.querySelector('#localisation #divergent-line')!.textContent).toBe(line.textContent);
  });

  it('shows one row per variant of a real pair --variant report: its verdict, first divergent step and cost, as report.json has them', async () => {
    const dir = path.join(ROOT, 'test/fixtures/runs/pair-variants-cpu');
    const summary = summarizeReport(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
    const report = parseReport(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
    const variantSeries = JSON.parse(JSON.stringify(await readPairSeries({ paths: [dir] }))) as PairSeries;
    const view = openView();
    view.send({ type: 'show', pair: { key: dir, title: summary.title, headline: summary.headline, verdict: summary.verdict }, series: variantSeries, variants: summary.variants! });
    const rows = [...view.document.querySelectorAll('#variants tbody tr')];
    expect(rows.map((r) => r.getAttribute('data-variant'))).toEqual(report.variants!.map((v) => v.name));
    expect(rows.map((r) => r.getAttribute('data-variant'))).toEqual(['default', 'det', 'det-nofill']);
    report.variants!.forEach((v, i) => {
      const cell = (name: string) => rows[i]!.querySelector(`td.${name}`)!.textContent;
      expect(cell('verdict')).toBe(v.verdict);
      expect(rows[i]!.querySelector('td.verdict')!.className).toBe(`verdict ${v.verdict}`);
      expect(cell('first')).toBe(v.firstDivergence ? `${v.firstDivergence.step} (${v.firstDivergence.metric})` : '—');
      expect(cell('wall')).toBe(`${v.wallTime!.toFixed(2)} s`);
      expect(cell('cost')).toBe(i === 0 ? 'baseline' : `×${v.cost!.wallTime!.toFixed(2)}, step ×${v.cost!.stepTime!.toFixed(2)}`);
    });
    // The default path diverges, both deterministic ones are bitwise; the settings as the variants say.
    expect(rows.map((r) => [r.querySelector('td.verdict')!.textContent, r.querySelector('td.settings')!.textContent])).toEqual([
      ['differs', '—'],
      ['bitwise', 'preset=det'],
      ['bitwise', 'preset=det, fill=off'],
    ]);
    expect(view.document.querySelector('#localisation')).toBeNull();
    expect(summary.probed).toBe(false);
  });
});

describe('Divergence webview app on a long pair', () => {
  it('draws an envelope of a 30,000-step pair that keeps every step around the first divergence and a lone divergent step far from it, and every step once zoomed there', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-divergence-long-'));
    try {
      const steps = 30_000;
      const lines = (run: number) => {
        const out: string[] = [];
        for (let step = 1; step <= steps; step++) {
          const loss = Math.fround(2 + Math.sin(step / 300));
          // Run 2 is one float32 ULP off at step 12,345 and at step 25,000 only.
          const off = run === 2 && (step === 12_345 || step === 25_000) ? nextFloat32(loss) : loss;
          out.push(JSON.stringify({ step, loss: off }));
        }
        return `${out.join('\n')}\n`;
      };
      fs.writeFileSync(path.join(dir, 'run-1.log'), lines(1));
      fs.writeFileSync(path.join(dir, 'run-2.log'), lines(2));
      const long = JSON.parse(JSON.stringify(await readPairSeries({ paths: [dir] }))) as PairSeries;
      expect(long.metrics[0]!.firstDivergentStep).toBe(12_345);
      const view = openView();
      view.send({ type: 'show', pair: { ...PAIR, key: dir }, series: long });
      await settled();
      const [values, , ulp] = view.plotted();
      expect(values!.full).toBe(false);
      expect(values!.data[0]!.length).toBeLessThan(2_100);
      for (let step = 12_345 - 20; step <= 12_345 + 20; step++) expect(values!.data[0]!.includes(step), `step ${step}`).toBe(true);
      // The ULP chart's lone point far from the first divergence is drawn, with its distance.
      expect(ulp!.data[1]![ulp!.data[0]!.indexOf(25_000)]).toBe(1);
      expect(ulp!.data[1]!.filter((u) => u !== null)).toEqual([1, 1]);
      expect(view.document.querySelector('#window')!.textContent).toContain('30000 steps drawn as each bucket');
      // D: the steps around it, every one drawn.
      view.document.querySelector('#charts')!.dispatchEvent(new view.window.KeyboardEvent('keydown', { key: 'd', bubbles: true }));
      await settled();
      const near = view.plotted()[0]!;
      expect(near.full).toBe(true);
      expect(near.scale).toEqual({ min: 12_325, max: 12_365 });
      expect(view.document.querySelector('#window')!.textContent).toBe('Steps 12325–12365: every step drawn. Drag across a chart to zoom.');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The float32 just above x (a float32 number). */
function nextFloat32(x: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, x);
  view.setInt32(0, view.getInt32(0) + (x >= 0 ? 1 : -1));
  return view.getFloat32(0);
}
