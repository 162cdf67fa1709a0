// Part of `npm run bench`: `bitexact compare` of 2 runs × 100k steps × 20 metrics of JSON Lines as a
// fresh process, against V8's JSON.parse of the same lines in one thread as a fresh process (the
// floor; target: compare ≤ 0.5× it), alternating, BENCH_REPS times. The stage-by-stage figures are
// `npm run bench:runs`. --quick: 20k steps, one repeat; --json FILE: the figures for bench/report.mjs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { alternate, cli, measuredNode, partArgs, root, writeResult } from './measure.mjs';
import { renderPart } from './report-render.mjs';
import { METRIC_COUNT, runLogs } from './run-logs.mjs';

const args = partArgs();
const reps = Number(process.env.BENCH_REPS ?? (args.quick ? 1 : 5));
const steps = args.quick ? 20_000 : 100_000;
const [a, b] = runLogs(path.join(os.tmpdir(), 'bitexact-bench-compare'), steps);
const mib = (fs.statSync(a).size + fs.statSync(b).size) / 2 ** 20;

const results = alternate(reps, {
  floor: () => measuredNode(path.join(root, 'bench/jsonparse-floor.mjs'), [a, b], { ok: [0] }),
  compare: () => measuredNode(cli, ['compare', '--format', 'json', a, b], { ok: [1] }),
});
const verdict = JSON.parse(results.compare.last.stdout);
const first = verdict.firstDivergence;
if (first?.step !== Math.ceil(0.6 * steps)) throw new Error(`compare found the first divergence at step ${first?.step}, not ${Math.ceil(0.6 * steps)}`);
const group = {
  id: 'compare',
  title: `compare of 2 runs × ${steps.toLocaleString('en')} steps × ${METRIC_COUNT} metrics`,
  note: `JSON Lines, ${mib.toFixed(1)} MiB in all; compare finds the first divergence at step ${first.step} (${first.metric}), as written.`,
  rows: [
    { id: 'floor', label: 'JSON.parse of every line, one thread (the floor)', ms: results.floor.ms, rssMb: results.floor.rssMb },
    { id: 'compare', label: 'bitexact compare --format json', ms: results.compare.ms, rssMb: results.compare.rssMb, ratioTo: 'floor', target: { on: 'ratio', max: 0.5, text: '≤ 0.50× the floor' } },
  ],
};
writeResult(args, { part: 'compare', reps, groups: [group] });
process.stdout.write(renderPart({ part: 'compare', groups: [group] }));
