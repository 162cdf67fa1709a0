// bench/RESULTS.md from the measurements of one `npm run bench` (bench/report.mjs): a pure function
// of them, so test/unit/bench-report.test.ts can render a fixture. Every figure is the median of the
// repeats with their min–max; each target of issue 14 stands next to its figure with met / not met.
//
// Input: { quick, reps, commit?, machine: { start, end }, parts: [{ part, groups?, raw?, error? }] }, where a
// group is { title, note?, timeHeader?, rssHeader?, growth?, startupMs?, rows, versus? } and a row is
// { id, label, short?, ms?, rssMb?, ratioTo?, target?: { on: 'ratio'|'ms'|'rssMb', max, text }, note?,
//   absent?, scale?, series? }.

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const int = (x) => Math.round(x).toLocaleString('en');
const fig = (x) => (x < 10 ? x.toFixed(1) : int(x));
function spread(xs, unit) {
  if (!xs?.length) return '';
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return xs.length === 1 || fig(lo) === fig(hi) ? `${fig(median(xs))} ${unit}` : `${fig(median(xs))} ${unit} (${fig(lo)}–${fig(hi)})`;
}
const cell = (s) => String(s).replaceAll('|', '\\|').replaceAll('\n', ' ');
const row = (cells) => `| ${cells.map(cell).join(' | ')} |`;

/** Above this exponent (time ∝ size^e between two sizes) a step counts as super-linear. */
export const SUPER_LINEAR = 1.2;
/**
 * A step is judged only where the smaller size took at least twice the start-up and 50 ms: below
 * that, the start-up's own noise (high on a loaded machine) would decide the verdict.
 */
const TOO_SMALL_MS = 50;

function judgeTarget(r, ratio) {
  const { on, max } = r.target;
  if (typeof max !== 'number') return 'n/a';
  const value = on === 'ratio' ? ratio : on === 'ms' ? median(r.ms ?? []) : median(r.rssMb ?? []);
  if (value === undefined || Number.isNaN(value)) return 'n/a';
  return value <= max ? 'met' : '**not met**';
}

/** For a growth group: this row against the previous row of its series. */
function growth(group, r, i) {
  const series = r.series ?? '';
  const previous = group.rows.slice(0, i).reverse().find((p) => (p.series ?? '') === series && p.ms && p.scale);
  if (!previous || !r.ms) return { ratio: '', met: '' };
  const startup = group.startupMs ? median(group.startupMs) : 0;
  const [t0, t1] = [median(previous.ms) - startup, median(r.ms) - startup];
  const size = r.scale / previous.scale;
  const [m0, m1] = [median(previous.rssMb), median(r.rssMb)];
  const text = `time ×${(t1 / t0).toFixed(2)}, memory ×${(m1 / m0).toFixed(2)} for size ×${size}`;
  if (t0 < Math.max(TOO_SMALL_MS, startup) || t1 <= 0) return { ratio: text, met: 'n/a (too close to the start-up to judge)' };
  const e = Math.log(t1 / t0) / Math.log(size);
  const em = Math.log(m1 / m0) / Math.log(size);
  const worst = Math.max(e, em);
  return { ratio: text, met: worst > SUPER_LINEAR ? `**not met**: super-linear (${e > em ? 'time' : 'memory'} ∝ size^${worst.toFixed(2)})` : `met (time ∝ size^${e.toFixed(2)})` };
}

function renderGroup(group, summary) {
  const out = [`### ${group.title}`, ''];
  if (group.note) out.push(group.note, '');
  if (group.startupMs) out.push(`Start-up of a check of an empty file, taken off the times before comparing sizes: ${spread(group.startupMs, 'ms')}.`, '');
  const ratioHeader = group.growth ? 'growth from the previous size' : 'ratio';
  out.push(row(['measure', group.timeHeader ?? 'wall', group.rssHeader ?? 'peak RSS', ratioHeader, 'target', 'met']), row(['---', '---:', '---:', '---:', '---', '---']));
  const judged = [];
  group.rows.forEach((r, i) => {
    if (r.absent) {
      out.push(row([r.label, r.absent, '', '', '', '']));
      return;
    }
    const ref = r.ratioTo && group.rows.find((x) => x.id === r.ratioTo && x.ms);
    const ratio = ref && r.ms ? median(r.ms) / median(ref.ms) : undefined;
    let ratioText = ratio === undefined ? '' : `${ratio.toFixed(2)}× ${ref.id}`;
    let met = r.target ? judgeTarget(r, ratio) : '';
    if (group.growth) ({ ratio: ratioText, met } = growth(group, r, i));
    const label = r.note ? `${r.label} (${r.note})` : r.label;
    out.push(row([label, spread(r.ms, 'ms'), spread(r.rssMb, 'MB'), ratioText, r.target?.text ?? (group.growth && met ? 'linear or better' : ''), met]));
    if (r.target) summary.push([`${group.title}: ${r.label}`, r.target.text, met]);
    if (group.growth && met && !met.startsWith('n/a')) judged.push([r.label, met]);
  });
  // A growth group is one line of the summary: the steps that are super-linear by name, or none.
  if (judged.length) {
    const bad = judged.filter(([, m]) => m.startsWith('**not met**'));
    const verdict = bad.length ? `**not met**: ${bad.map(([label, m]) => `${label} ${m.replace('**not met**: ', '')}`).join('; ')}` : `met (${judged.length} step${judged.length === 1 ? '' : 's'} judged)`;
    summary.push([group.title, 'time and memory linear or better', verdict]);
  }
  for (const [a, b] of group.versus ?? []) {
    const [ra, rb] = [a, b].map((id) => group.rows.find((x) => x.id === id));
    if (!ra?.ms || !rb?.ms) continue;
    const t = median(ra.ms) / median(rb.ms);
    const m = median(ra.rssMb) / median(rb.rssMb);
    out.push('', `${ra.short ?? ra.label} took ${t.toFixed(2)}× the wall time of ${rb.short ?? rb.label} and ${m.toFixed(2)}× its peak RSS.`);
  }
  out.push('');
  return out;
}

const TITLES = { check: 'Cold check against the parse floor and the peers', lsp: 'Edit latency through the stdio server', compare: 'compare against V8’s JSON.parse', scaling: 'Scaling', runs: 'bench:runs, as printed' };

/** One part's section; the rows with a target are added to `summary`. */
export function renderPart(part, summary = []) {
  const body = [`## ${TITLES[part.part] ?? part.part}`, ''];
  if (part.error) body.push(`This part failed, so it has no figures: ${part.error}`, '');
  if (part.raw !== undefined) body.push('```', part.raw.trimEnd(), '```', '');
  for (const group of part.groups ?? []) body.push(...renderGroup(group, summary));
  return `${body.join('\n').trimEnd()}\n`;
}

export function renderResults(results) {
  const { start, end } = results.machine;
  const summary = [];
  const body = results.parts.map((part) => renderPart(part, summary));
  const load = (m) => m.loadAverage.map((x) => x.toFixed(2)).join(', ');
  const head = [
    '# bitexact benchmark results',
    '',
    `Written by \`npm run bench\` (bench/report.mjs)${results.quick ? ' in **--quick** mode: fewer repeats and smaller inputs, for trying the bench, not figures to quote' : ''}. Every process is started fresh; measures that are compared are run alternately; ${results.reps === 1 ? 'each figure is from one run' : `each figure is the median of ${results.reps} runs, with their min–max in brackets`}. Peak RSS is the process's maximum resident set (getrusage).${results.commit ? ` Measured at commit ${results.commit}.` : ''}`,
    '',
    '## Machine',
    '',
    row(['cores', 'CPU', 'memory', 'node', 'OS', 'load average at start (1, 5, 15 min)', 'at end', 'started', 'ended']),
    row(['---:', '---', '---:', '---', '---', '---', '---', '---', '---']),
    row([start.cores, start.cpu, `${start.memoryGb.toFixed(0)} GiB`, start.node, start.os, load(start), load(end), start.date, end.date]),
    '',
  ];
  if (summary.length) head.push('## Targets', '', row(['figure', 'target', 'met']), row(['---', '---', '---']), ...summary.map(row), '');
  return `${[...head, body.join('\n')].join('\n').trimEnd()}\n`;
}
