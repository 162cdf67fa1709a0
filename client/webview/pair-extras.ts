// The Divergence view's sections beside the charts, from what the host sent (the engine's answers,
// never worked out here): where a probed pair's runs first part in the source, with the static
// findings on that path, each a link the host opens; and, for `pair --variant`, one row per variant
// with its own runs' verdict, its first divergent step and its cost against the first variant.
import type { PairDivergence, PathFinding } from '../../server/src/runs/pair-divergence-wire.js';
import { PairExtras, VariantSummary, WebviewMessage, variantCostText, variantFirstText } from '../src/divergence-protocol.js';
import { el } from './dom.js';

type Open = (message: Extract<WebviewMessage, { type: 'open' }>) => void;

const WHERE: Record<PathFinding['where'], string> = { line: 'on the divergent line', function: 'in the same function', 'call-path': 'on the call path' };

export function extrasSections(extras: PairExtras, open: Open): HTMLElement[] {
  return [...(extras.place ? [placeSection(extras.place, open)] : []), ...(extras.variants?.length ? [variantsTable(extras.variants)] : [])];
}

/** `train.py:41`, the whole path in its title. */
function link(id: string, text: string, at: { path: string; line: number; column?: number }, open: Open, label: string): HTMLElement {
  const b = el('button', { type: 'button', class: 'link place', ...(id ? { id } : {}), title: `${at.path}:${at.line}`, 'aria-label': label, 'data-path': at.path, 'data-line': String(at.line) }, text);
  b.addEventListener('click', () => open({ type: 'open', path: at.path, line: at.line, ...(at.column !== undefined ? { column: at.column } : {}) }));
  return b;
}

const short = (at: { path: string; line: number }) => `${at.path.split(/[\\/]/).pop()}:${at.line}`;

function placeSection(place: PairDivergence, open: Open): HTMLElement {
  const source = place.source;
  const line = source
    ? link('divergent-line', `${place.message} — ${short(source)}`, source, open, `${place.message}, at ${short(source)}: open the line`)
    : el('p', { id: 'divergent-line' }, `${place.message}${place.recorded ? ` (recorded at ${short(place.recorded)}, not found in this workspace)` : ''}`);
  const from = el('p', { class: 'note' }, `pair ${place.id}${place.narrowed ? `, from the ops re-run of step ${place.step}` : ', from its modules traces'}${place.rank > 0 ? `, rank ${place.rank}` : ''}`);
  const callers = place.callPath.filter((c) => c.source);
  const path = callers.length
    ? el('p', { class: 'note', id: 'call-path' }, 'call path: ', ...callers.flatMap((c, i) => [...(i ? [' ← '] : []), link('', `${c.module} (${short(c.source!)})`, c.source!, open, `module ${c.module}, its forward at ${short(c.source!)}`)]))
    : '';
  const items = place.findings.map((f) => {
    const onLine = f.where === 'line';
    return el(
      'li',
      { 'data-where': f.where, class: onLine ? 'on-line' : '' },
      link('', `${f.rule} ${short(f)}`, f, open, `${f.rule} at ${short(f)}, ${WHERE[f.where]}: ${f.message}`),
      el('span', { class: `where ${f.where}` }, onLine ? ' ● on the divergent line' : ` ${WHERE[f.where]} (${f.function})`),
      el('span', { class: 'message' }, ` ${f.message}`),
    );
  });
  const findings = items.length
    ? el('ul', { id: 'path-findings', 'aria-label': 'Findings on the divergent path' }, ...items)
    : el('p', { id: 'path-findings', class: 'note' }, 'No static finding on the divergent path: the cause is in what bitexact check cannot see (compiled kernels, data, the environment).');
  return el('section', { id: 'localisation', 'aria-label': 'Where the runs part' }, el('h3', {}, 'Where the runs part'), line, from, path, el('h4', {}, `findings on the divergent path (${items.length})`), findings);
}

function variantsTable(variants: VariantSummary[]): HTMLElement {
  const head = el('tr', {}, ...['variant', 'settings', 'verdict', 'first divergent step', 'wall time', 'cost'].map((h) => el('th', { scope: 'col' }, h)));
  const rows = variants.map((v, i) =>
    el(
      'tr',
      { 'data-variant': v.name },
      el('th', { scope: 'row' }, v.name),
      el('td', { class: 'settings' }, v.settings || '—'),
      el('td', { class: `verdict ${v.verdict}` }, v.verdict),
      el('td', { class: 'first' }, variantFirstText(v)),
      el('td', { class: 'wall' }, v.wallTime === null ? '—' : `${v.wallTime.toFixed(2)} s`),
      el('td', { class: 'cost' }, variantCostText(v, i === 0)),
    ),
  );
  return el('table', { id: 'variants' }, el('caption', {}, 'Variants side by side (each variant\'s own runs; cost: median wall time against the first variant)'), el('thead', {}, head), el('tbody', {}, ...rows));
}
